// HTTP client helpers and assertions shared by the HTTP adapter's tests and the API
// server's end-to-end tests (docs/CONTRACT.md "Envelope and errors", "Rate limits").
import { expect } from 'chai';

/** The six rate-limit headers of every authenticated answer (429 adds Retry-After). */
export const RATE_LIMIT_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
] as const;

/** A problem details body as docs/CONTRACT.md "Envelope and errors" fixes it. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
  readonly request_id?: string;
  readonly errors?: readonly { readonly path: string; readonly message: string }[];
}

/**
 * Asserts an RFC 9457 problem answer: the status, `application/problem+json`, a body
 * (never wrapped) with `status` equal to the HTTP status, `detail`, `title`, `code`, and
 * the `X-Request-Id` header.
 */
export function expectProblem(answer: Answer, status: number, code: string): Problem {
  expect(answer.status, `status; body: ${answer.text}`).to.equal(status);
  expect(answer.headers.get('content-type'), 'content type').to.match(/^application\/problem\+json(;|$)/);
  const body = answer.body as Problem;
  expect(body, 'a JSON object body').to.be.an('object');
  expect(body).to.not.have.property('data');
  expect(body.status).to.equal(status);
  expect(body.code).to.equal(code);
  expect(body.detail).to.be.a('string').and.not.equal('');
  expect(body.title).to.be.a('string').and.not.equal('');
  const requestId = answer.headers.get('x-request-id');
  expect(requestId, 'X-Request-Id').to.be.a('string').and.not.equal('');
  if (body.request_id !== undefined) expect(body.request_id).to.equal(requestId);
  return body;
}

/** Asserts the success envelope `{data: ...}` with the status and JSON content type. */
export function expectData<T>(answer: Answer, status: number): T {
  expect(answer.status, `status; body: ${answer.text}`).to.equal(status);
  expect(answer.headers.get('content-type')).to.match(/^application\/json(;|$)/);
  expect(answer.body).to.be.an('object').with.all.keys('data');
  expect(answer.headers.get('x-request-id'), 'X-Request-Id').to.be.a('string').and.not.equal('');
  return (answer.body as { data: T }).data;
}

/** Asserts that the six rate-limit headers are all present, or all absent. */
export function expectRateLimitHeaders(answer: Answer, present: boolean): void {
  for (const name of RATE_LIMIT_HEADERS) {
    if (present) expect(answer.headers.get(name), `${name} on ${answer.status}`).to.match(/^\d+$/);
    else expect(answer.headers.get(name), `${name} on ${answer.status}`).to.equal(null);
  }
}

/**
 * Asserts the seven headers of a 429 with sane values: `limit`, remaining 0, a reset
 * delta in 1..window, `Retry-After` ≥ 1 and ≤ window, the legacy aliases equal, and
 * `x-ratelimit-reset` a Unix time within `windowSeconds` of now.
 */
export function expectRateLimited(answer: Answer, limit: number, windowSeconds: number): void {
  expectProblem(answer, 429, 'rate_limited');
  const h = (name: string): number => {
    const value = answer.headers.get(name);
    expect(value, name).to.match(/^\d+$/);
    return Number(value);
  };
  expect(h('ratelimit-limit')).to.equal(limit);
  expect(h('ratelimit-remaining')).to.equal(0);
  const reset = h('ratelimit-reset');
  expect(reset).to.be.within(1, windowSeconds);
  expect(h('retry-after')).to.be.within(1, windowSeconds);
  expect(h('x-ratelimit-limit')).to.equal(limit);
  expect(h('x-ratelimit-remaining')).to.equal(0);
  const now = Date.now() / 1000;
  const resetAt = h('x-ratelimit-reset');
  expect(resetAt).to.be.within(Math.floor(now), Math.ceil(now) + windowSeconds);
  // The delta and the absolute time describe the same instant (to a second of rounding).
  expect(Math.abs(resetAt - now - reset)).to.be.at.most(2);
}

/** An answer, fully read. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body, `undefined` when it is not JSON. */
  readonly body: unknown;
}

/** Request options of {@link call}. */
export interface CallOptions {
  readonly headers?: Record<string, string>;
  /** Sent as JSON with `Content-Type: application/json` unless `raw` is given. */
  readonly json?: unknown;
  /** Sent as is (set the content type in `headers`). */
  readonly raw?: string | Uint8Array;
}

/** One HTTP request with the global fetch, as a client sends it; the body is read completely. `path` may be absolute. */
export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | Uint8Array | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(/^https?:/u.test(path) ? path : `${base}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** The `X-API-Key` header of a secret. */
export const apiKey = (secret: string): Record<string, string> => ({ 'x-api-key': secret });
/** The `Authorization: Bearer` header of a secret. */
export const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` });
