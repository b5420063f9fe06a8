import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import type { HeaderList } from './deprecation.js';

/**
 * A precomputed answer to `GET` (and so `HEAD`) of a resource that does not change while
 * the app runs: the index, the OpenAPI document, llms.txt, the OAuth metadata, `/livez`.
 */
export interface FixedAnswer {
  /** Headers before the body's, in order: deprecation, then `ETag` and `Cache-Control`. */
  readonly headers: HeaderList;
  /** The validator of `If-None-Match`; absent: not cacheable, always 200. */
  readonly etag?: string;
  /** The `Content-Type` header, as Koa's `ctx.type` setter writes it. */
  readonly contentType: string;
  readonly body: Buffer | string;
  /** The operation it answers, for the request's log line and metrics (`ctx.state.operation`). */
  readonly operation?: string;
}

function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * A cacheable fixed answer: a strong `ETag` of the body (SHA-256, base64url) and
 * `Cache-Control: public, max-age=<maxAgeSeconds>`, after the headers of `before`.
 */
export function cachedAnswer(contentType: string, body: Buffer, maxAgeSeconds: number, before: HeaderList = []): FixedAnswer {
  const etag = etagOf(body);
  return { headers: [...before, ['ETag', etag], ['Cache-Control', `public, max-age=${maxAgeSeconds}`]], etag, contentType, body };
}

/**
 * RFC 9110 §13.1.2: `If-None-Match` matches when it is `*` or lists `etag` (weak
 * comparison). Not Koa's `ctx.fresh`: it ignores `If-None-Match` when the request also says
 * `Cache-Control: no-cache`, which fetch() adds to every conditional request, so fetch
 * clients would never get a 304.
 */
export function noneMatch(req: IncomingMessage, etag: string): boolean {
  // Node's parser keeps one `If-None-Match` (its list joined by ", "); read by its
  // lower-case name, without `ctx.get`'s lower-casing and lookup of a new string.
  const header = (req.headers['if-none-match'] ?? '').trim();
  if (header === '') return false;
  if (header === '*') return true;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//u, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/** Sends a fixed answer: 200 with its body, or 304 without one when `If-None-Match` matches. */
export function sendFixed(ctx: Context, answer: FixedAnswer): void {
  if (answer.operation !== undefined) ctx.state['operation'] = answer.operation;
  const res = ctx.res;
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  const response = ctx.response;
  response.status = 200;
  if (answer.etag !== undefined && noneMatch(ctx.req, answer.etag)) {
    response.status = 304;
    return;
  }
  res.setHeader('Content-Type', answer.contentType);
  response.body = answer.body;
}
