import type { components } from './generated/api.js';

/** A problem details body as the API sends it (docs/CONTRACT.md "Envelope and errors", RFC 9457). */
export type Problem = components['schemas']['Problem'];

/** One entry of a validation problem's `errors`: a JSON Pointer into the request and what is wrong there. */
export interface ValidationError {
  /** JSON Pointer (RFC 6901) into the request body, or `/<name>` of a query parameter or header. */
  readonly path: string;
  readonly message: string;
}

/**
 * The API answered with an error status (4xx or 5xx): one class for every problem details
 * answer (docs/CONTRACT.md "Envelope and errors"), so a caller tells cases apart by
 * {@link SvcApiError.status} and {@link SvcApiError.code}, never by parsing `message`.
 *
 * An answer that is not problem details (a proxy's HTML page, say) becomes one too, with
 * `code` undefined and the start of the body as `detail`.
 */
export class SvcApiError extends Error {
  override readonly name = 'SvcApiError';
  /** The HTTP status code of the answer. */
  readonly status: number;
  /** The machine-readable snake_case `code` (`validation_failed`, `not_found`, `rate_limited`, ...). */
  readonly code: string | undefined;
  /** The human-readable `detail`; names the offending field where there is one. */
  readonly detail: string;
  /** `title`: the reason phrase of the status. */
  readonly title: string | undefined;
  /** The request id (`request_id` of the body, else the `X-Request-Id` header): quote it to the operator. */
  readonly requestId: string | undefined;
  /** A validation problem's `errors` (empty otherwise). */
  readonly errors: readonly ValidationError[];
  /**
   * `Retry-After` of the answer in seconds (429, 503 and 409 `idempotency_key_in_use` carry
   * it; RFC 9110 §10.2.3, an HTTP date converted to seconds from now), else undefined.
   */
  readonly retryAfterSeconds: number | undefined;
  /** The whole body as parsed JSON (problem details with any further members), or its text. */
  readonly body: unknown;

  constructor(init: {
    status: number;
    code: string | undefined;
    detail: string;
    title: string | undefined;
    requestId: string | undefined;
    errors: readonly ValidationError[];
    retryAfterSeconds: number | undefined;
    body: unknown;
  }) {
    super(`${init.status}${init.code === undefined ? '' : ` ${init.code}`}: ${init.detail}`);
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.title = init.title;
    this.requestId = init.requestId;
    this.errors = init.errors;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.body = init.body;
  }
}

/**
 * What kind of failure a {@link SvcNetworkError} is:
 * - `connection_refused`: nothing listens at the address (`ECONNREFUSED`); the request never
 *   reached a server, so it is retried (see `SvcClientOptions.maxRetries`).
 * - `timeout`: no whole answer within `timeoutMs`; the server may have done the work.
 * - `network`: any other failure (reset, DNS, TLS); the server may have done the work.
 */
export type NetworkFailure = 'connection_refused' | 'timeout' | 'network';

/**
 * No answer from the API: the request could not be sent, or its answer did not arrive
 * whole within the timeout. Distinct from {@link SvcApiError} (an answer that says no).
 * The underlying error is `cause`.
 */
export class SvcNetworkError extends Error {
  override readonly name = 'SvcNetworkError';
  /** See {@link NetworkFailure}. */
  readonly kind: NetworkFailure;
  /** `METHOD url` of the request. */
  readonly request: string;

  constructor(kind: NetworkFailure, request: string, message: string, cause: unknown) {
    super(`${request}: ${message}`, { cause });
    this.kind = kind;
    this.request = request;
  }
}

/** A file as the API answers it (`data` of `GET /api/v1/files/{file_key}`). */
type StoredFile = components['schemas']['File'];

/**
 * An upload whose bytes the API refused on `complete`: the file ended `rejected`
 * (docs/CONTRACT.md "Files": a size or SHA-256 other than declared, or bytes that contradict
 * the declared `content_type`, such as PNG bytes declared `application/pdf`). Not an error
 * answer (complete answered 200): the reason is the file's `reason`, and its bytes are
 * already deleted; prepare and upload it again.
 */
export class SvcFileRejectedError extends Error {
  override readonly name = 'SvcFileRejectedError';
  /** The file as `complete` answered it: `status` is `rejected`. */
  readonly file: StoredFile;
  /** Why, as the API said it (the file's `reason`). */
  readonly reason: string;

  constructor(file: StoredFile) {
    const reason = file.reason ?? 'no reason given';
    super(`file ${file.file_name} (${file.file_key}) was rejected: ${reason}`);
    this.file = file;
    this.reason = reason;
  }
}

/**
 * Seconds to wait from a `Retry-After` value: delay-seconds or an HTTP date (RFC 9110
 * §10.2.3); undefined when absent or neither.
 *
 * @param now - milliseconds since the epoch, for an HTTP date.
 */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/u.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The {@link SvcApiError} of an error answer: its status and headers, and its body as openapi-fetch parsed it. */
export function apiErrorOf(response: Response, body: unknown): SvcApiError {
  const problem = isRecord(body) ? body : undefined;
  const text = typeof body === 'string' ? body : '';
  const errors = Array.isArray(problem?.['errors'])
    ? problem['errors'].filter(isRecord).map((e) => ({ path: String(e['path'] ?? ''), message: String(e['message'] ?? '') }))
    : [];
  const string = (key: string): string | undefined => (typeof problem?.[key] === 'string' ? problem[key] : undefined);
  return new SvcApiError({
    status: response.status,
    code: string('code'),
    detail: string('detail') ?? (text.trim().slice(0, 200) || response.statusText || `HTTP ${response.status}`),
    title: string('title'),
    requestId: string('request_id') ?? response.headers.get('x-request-id') ?? undefined,
    errors,
    retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')),
    body,
  });
}
