import { queryParameterError, type DomainError, type PageQuery } from '@svc/core';
import type { Context } from 'koa';

/**
 * The query parameters of a list operation as single strings: a parameter sent twice
 * (`?limit=5&limit=9`) is refused rather than one of them picked, 400
 * `validation_failed` naming it; an empty value counts as sent (and then fails the
 * core's rule). Names not in `names` are ignored, as for every operation.
 * Source: docs/decisions.md "Discovery".
 *
 * @param names - the parameters the operation reads, e.g. `['agent_id', 'status', 'limit', 'cursor']`.
 */
export function queryParams<N extends string>(ctx: Context, names: readonly N[]): { ok: true; value: Partial<Record<N, string>> } | { ok: false; error: DomainError<'validation_failed'> } {
  const query = ctx.query;
  const value: Partial<Record<N, string>> = {};
  for (const name of names) {
    const raw = query[name];
    if (raw === undefined) continue;
    if (Array.isArray(raw)) return { ok: false, error: queryParameterError('validation_failed', name, 'must be sent at most once') };
    value[name] = raw;
  }
  return { ok: true, value };
}

/** The paging part of {@link queryParams}' answer, as the core reads it. */
export function pageQueryOf(params: Partial<Record<'limit' | 'cursor', string>>): PageQuery {
  return { ...(params.limit === undefined ? {} : { limit: params.limit }), ...(params.cursor === undefined ? {} : { cursor: params.cursor }) };
}

/**
 * Sets `Link: <url>; rel="next"` (RFC 8288) when a next page exists: the request's path
 * on the listener's configured address (`{base_url}` or `{egress_url}`, never the
 * request's `Host`), with its query parameters kept and `cursor` replaced.
 * Source: docs/CONTRACT.md "Discovery".
 *
 * @param listenerUrl - the listener's configured address, without a trailing slash.
 * @param cursor - the next page's cursor as the use case minted it (core `ListPage.nextCursor`); nothing is set when absent.
 * @returns `cursor` (for `next_cursor`), or `null` when this is the last page.
 */
export function setNextLink(ctx: Context, listenerUrl: string, cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const params = new URLSearchParams(ctx.querystring);
  params.set('cursor', cursor);
  const url = `${listenerUrl}${ctx.path}?${params.toString()}`;
  ctx.append('Link', `<${url}>; rel="next"`);
  return cursor;
}
