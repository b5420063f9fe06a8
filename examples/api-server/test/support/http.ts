import { expect } from 'chai';

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
  /** Sent as JSON with `Content-Type: application/json`. */
  readonly json?: unknown;
  /** Sent as is (set the content type in `headers`). */
  readonly raw?: string | Uint8Array;
}

/** One HTTP request with the global fetch, as a client would send it. */
export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | Uint8Array | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(/^https?:/.test(path) ? path : `${base}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** A problem details body (CONTRACT.md "Envelope and errors"). */
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
 * Asserts a problem details answer: status, `application/problem+json`, an unwrapped
 * body with `status` (= the HTTP status), `detail`, `title`, `code`, and X-Request-Id.
 */
export function expectProblem(answer: Answer, status: number, code: string): Problem {
  expect(answer.status, `status; body: ${answer.text}`).to.equal(status);
  expect(answer.headers.get('content-type'), 'content type').to.match(/^application\/problem\+json(;|$)/);
  const body = answer.body as Problem;
  expect(body, 'a JSON object').to.be.an('object');
  expect(body).to.not.have.property('data');
  expect(body.status).to.equal(status);
  expect(body.code).to.equal(code);
  expect(body.detail).to.be.a('string').and.not.equal('');
  expect(body.title).to.be.a('string').and.not.equal('');
  expect(answer.headers.get('x-request-id'), 'X-Request-Id').to.be.a('string').and.not.equal('');
  return body;
}

/** Asserts the success envelope `{data: ...}` and returns `data`. */
export function expectData<T>(answer: Answer, status: number): T {
  expect(answer.status, `status; body: ${answer.text}`).to.equal(status);
  expect(answer.headers.get('content-type')).to.match(/^application\/json(;|$)/);
  expect(answer.body).to.be.an('object').with.all.keys('data');
  expect(answer.headers.get('x-request-id'), 'X-Request-Id').to.be.a('string').and.not.equal('');
  return (answer.body as { data: T }).data;
}

const SEVEN = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/**
 * Asserts a 429 with the seven headers of the spec and sane values: limit, remaining 0,
 * reset 1..window, Retry-After ≥ 1, aliases equal, x-ratelimit-reset a Unix time within
 * `windowSeconds` of now.
 */
export function expectRateLimited(answer: Answer, limit: number, windowSeconds: number): void {
  expectProblem(answer, 429, 'rate_limited');
  for (const name of SEVEN) expect(answer.headers.get(name), name).to.match(/^\d+$/);
  const n = (name: string): number => Number(answer.headers.get(name));
  expect(n('ratelimit-limit')).to.equal(limit);
  expect(n('x-ratelimit-limit')).to.equal(limit);
  expect(n('ratelimit-remaining')).to.equal(0);
  expect(n('x-ratelimit-remaining')).to.equal(0);
  expect(n('ratelimit-reset')).to.be.within(1, windowSeconds);
  expect(n('retry-after')).to.be.within(1, windowSeconds);
  const now = Date.now() / 1000;
  expect(n('x-ratelimit-reset')).to.be.within(Math.floor(now), Math.ceil(now) + windowSeconds);
  expect(Math.abs(n('x-ratelimit-reset') - now - n('ratelimit-reset'))).to.be.at.most(2);
}

/** Asserts that the six rate-limit headers of an authenticated answer are present (or all absent). */
export function expectRateLimitHeaders(answer: Answer, present: boolean): void {
  for (const name of SEVEN.filter((h) => h !== 'retry-after')) {
    if (present) expect(answer.headers.get(name), `${name} on ${answer.status}`).to.match(/^\d+$/);
    else expect(answer.headers.get(name), `${name} on ${answer.status}`).to.equal(null);
  }
}

/** `X-API-Key` and `Authorization: Bearer` headers. */
export const apiKey = (secret: string): Record<string, string> => ({ 'x-api-key': secret });
export const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` });
