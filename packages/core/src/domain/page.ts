import { createHmac, timingSafeEqual } from 'node:crypto';
import { domainError, type DomainError } from './errors.js';
import { err, ok, type Result } from './result.js';

/** Items of a list page when the caller names no `limit`. Source: docs/CONTRACT.md "Discovery". */
export const DEFAULT_PAGE_LIMIT = 20;
/** The most items one list page holds (`limit` 1..100). Source: docs/CONTRACT.md "Discovery". */
export const MAX_PAGE_LIMIT = 100;
// A cursor we mint is far shorter; a longer one is refused before it is decoded.
const MAX_CURSOR_LENGTH = 512;
const CURSOR_VERSION = 1;

/**
 * One page asked of a port that lists: at most `limit` items, starting after the item
 * at `after` (absent: from the first item).
 */
export interface PageRequest {
  /** Items wanted, 1..{@link MAX_PAGE_LIMIT}. */
  readonly limit: number;
  /**
   * The port's position of the last item of the previous page, as the port itself gave
   * it in {@link Page.next}; opaque to everyone but that port. Absent for the first page.
   */
  readonly after?: string;
}

/** One page a port answers: items in list order, and where the next page starts. */
export interface Page<T> {
  /** At most `limit` items. */
  readonly items: readonly T[];
  /**
   * The position of the last item, present only when more items follow; passed back as
   * {@link PageRequest.after} for the next page. The port chooses its form (a sort key).
   */
  readonly next?: string;
}

/**
 * The raw paging input of a list operation: the query parameters `limit` and `cursor` as
 * sent (strings over HTTP, a number from an MCP tool). Absent when not sent.
 */
export interface PageQuery {
  /** Items wanted, 1..{@link MAX_PAGE_LIMIT} (a decimal string over HTTP); absent: {@link DEFAULT_PAGE_LIMIT}. */
  readonly limit?: string | number;
  /** A {@link ListPage.nextCursor} given before, as it was; absent: the first page. */
  readonly cursor?: string;
}

/**
 * One page a list use case answers: the items, and the opaque cursor of the next page
 * (absent on the last page), already bound to the caller's account and the list's
 * filters ({@link PageCursors.mint}). Transports pass `nextCursor` on as they are: the
 * `cursor` of `Link: rel="next"`, and `next_cursor` where the body is wrapped.
 */
export interface ListPage<T> {
  /** At most the `limit` asked for (default {@link DEFAULT_PAGE_LIMIT}), in the list's order; may be empty. */
  readonly items: readonly T[];
  /**
   * The opaque cursor of the next page (`[A-Za-z0-9_-]`, one `.`), present only when more
   * items may follow; valid only for the same list, account and filters. Given back as
   * {@link PageQuery.cursor}.
   */
  readonly nextCursor?: string;
}

const INVALID_CURSOR_MESSAGE = 'is not a cursor of this list; start again without it';

/**
 * The 400 answer to a bad query parameter of a list operation, the one shape every door
 * and use case gives: `detail` `query parameter <name>: <message>` and `errors: [{path:
 * "/<name>", message}]` (the operations have no body, so the pointer names the query
 * parameter). Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery".
 *
 * @param code - `validation_failed` (an invalid value, or a parameter sent twice) or
 *   `invalid_cursor` (a `cursor` this service did not sign for this list).
 * @param name - the query parameter, e.g. `limit`.
 * @param message - what is wrong, e.g. `must be sent at most once`.
 */
export function queryParameterError<C extends 'validation_failed' | 'invalid_cursor'>(code: C, name: string, message: string): DomainError<C> {
  return domainError(code, `query parameter ${name}: ${message}`, { errors: [{ path: `/${name}`, message }] });
}

/**
 * Reads `limit`: a whole number 1..100 (a decimal string of digits over HTTP), default
 * {@link DEFAULT_PAGE_LIMIT}; anything else → 400 `validation_failed` naming it
 * (`errors: [{path: "/limit"}]`). Source: docs/CONTRACT.md "Discovery".
 */
export function parsePageLimit(limit: PageQuery['limit']): Result<number, DomainError<'validation_failed'>> {
  if (limit === undefined) return ok(DEFAULT_PAGE_LIMIT);
  const value = typeof limit === 'number' ? limit : /^[0-9]{1,3}$/u.test(limit) ? Number(limit) : Number.NaN;
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE_LIMIT) {
    return err(queryParameterError('validation_failed', 'limit', `must be a whole number from 1 to ${MAX_PAGE_LIMIT}`));
  }
  return ok(value);
}

/**
 * Mints and reads the opaque `cursor` of every list: `<payload>.<signature>`, both
 * base64url; the payload a versioned JSON object holding the port's position, the
 * signature HMAC-SHA256 (RFC 2104) of the list's binding and the payload. The binding
 * names the list, the caller's account and the filters (e.g. `["runs","acme","agent_1","queued"]`),
 * so a cursor works only for the list, account and filters that made it: any other use,
 * a forged or a truncated cursor → 400 `invalid_cursor`, the same answer whichever it is
 * (nothing tells an account that a cursor was another's).
 * Source: docs/CONTRACT.md "Discovery" (opaque cursor), "Isolation between accounts"
 * (signed, bound to the account and the filters); docs/decisions.md "Discovery".
 */
export class PageCursors {
  private readonly key: Buffer;

  /**
   * @param key - the signing key: at least 32 bytes (a string is taken as its UTF-8
   *   bytes). Every instance serving one API must share it, or a cursor minted by one is
   *   refused by another.
   * @throws RangeError when the key is shorter than 32 bytes.
   */
  constructor(key: string | Uint8Array) {
    this.key = typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
    if (this.key.length < 32) throw new RangeError('the cursor signing key must be at least 32 bytes');
  }

  /**
   * @param position - the port's {@link Page.next}.
   * @param binding - the list, account and filters, e.g. `["agents","acme"]` (JSON, so no two differ only in where a separator falls).
   * @returns the opaque cursor (URL-safe: `[A-Za-z0-9_-]`, one `.`).
   */
  mint(position: string, binding: string): string {
    const payload = Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after: position }), 'utf8').toString('base64url');
    return `${payload}.${this.signature(binding, payload)}`;
  }

  /**
   * Reads `limit` ({@link parsePageLimit}) and `cursor` for the list `binding` names.
   * @returns the page to ask the port for; or 400 `validation_failed` (limit) or
   *   `invalid_cursor` (cursor), naming the parameter.
   */
  read(query: PageQuery, binding: string): Result<PageRequest, DomainError<'validation_failed' | 'invalid_cursor'>> {
    const limit = parsePageLimit(query.limit);
    if (!limit.ok) return limit;
    if (query.cursor === undefined) return ok({ limit: limit.value });
    const after = this.positionOf(query.cursor, binding);
    if (after === undefined) return err(queryParameterError('invalid_cursor', 'cursor', INVALID_CURSOR_MESSAGE));
    return ok({ limit: limit.value, after });
  }

  /** A page of a port turned into what a list use case answers, `next` minted for `binding`. */
  pageOf<T, V>(found: Page<T>, binding: string, view: (item: T) => V): ListPage<V> {
    const items = found.items.map(view);
    return found.next === undefined ? { items } : { items, nextCursor: this.mint(found.next, binding) };
  }

  private signature(binding: string, payload: string): string {
    return createHmac('sha256', this.key).update(binding).update('\n').update(payload).digest('base64url');
  }

  private positionOf(cursor: string, binding: string): string | undefined {
    if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/u.test(cursor)) return undefined;
    const [payload = '', signature = ''] = cursor.split('.');
    const expected = Buffer.from(this.signature(binding, payload), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (typeof decoded !== 'object' || decoded === null) return undefined;
      const { v, after } = decoded as { v?: unknown; after?: unknown };
      return v === CURSOR_VERSION && typeof after === 'string' && after.length > 0 ? after : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * One page of `items` in ascending order of `keyOf(item)` (JavaScript string order):
 * those whose key sorts after `page.after`, at most `page.limit` of them, and `next` =
 * the last one's key when more follow. For ports that hold their items in memory; keys
 * must be unique.
 *
 * @param items - every item of the list, in any order (not changed).
 * @param keyOf - the item's sort and position key (e.g. its id).
 */
export function pageByKey<T>(items: Iterable<T>, keyOf: (item: T) => string, page: PageRequest): Page<T> {
  const after = page.after;
  const keyed: { key: string; item: T }[] = [];
  for (const item of items) {
    const key = keyOf(item);
    if (after === undefined || key > after) keyed.push({ key, item });
  }
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const taken = keyed.slice(0, page.limit);
  const last = taken[taken.length - 1];
  return keyed.length > page.limit && last !== undefined ? { items: taken.map((k) => k.item), next: last.key } : { items: taken.map((k) => k.item) };
}
