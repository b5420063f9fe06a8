import type { DomainError, DomainErrorCode, ValidationIssue } from '@svc/core';

/**
 * Error codes the HTTP adapter adds to the core's: protocol failures that only exist on
 * HTTP. Source: docs/CONTRACT.md "Envelope and errors" (the table of statuses and codes).
 */
export type ProtocolErrorCode =
  | 'bad_request'
  | 'request_timeout'
  | 'expectation_failed'
  | 'request_header_fields_too_large'
  | 'invalid_json'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'service_unavailable'
  | 'internal_error';

/** Every `code` a problem details body of this API can carry. */
export type HttpErrorCode = DomainErrorCode | ProtocolErrorCode;

/**
 * The status of every error code, in one exhaustive table: a new domain code does not
 * build until it is mapped here. Source: docs/CONTRACT.md "Envelope and errors".
 */
export const STATUS_BY_CODE = {
  bad_request: 400,
  validation_failed: 400,
  invalid_header: 400,
  invalid_json: 400,
  writes_not_supported: 400,
  unknown_entity: 400,
  unknown_column: 400,
  constraint_violation: 400,
  invalid_value: 400,
  invalid_cursor: 400,
  missing_credential: 401,
  invalid_credential: 401,
  expired_credential: 401,
  unsupported_credential: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  ambiguous_key: 409,
  idempotency_key_in_use: 409,
  run_final: 409,
  file_in_use: 409,
  file_not_pending: 409,
  file_not_uploaded: 409,
  upload_url_invalid: 403,
  upload_too_large: 413,
  upload_size_mismatch: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  idempotency_key_reused: 422,
  rate_limited: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  connection_unavailable: 502,
  service_unavailable: 503,
  connection_timeout: 504,
} as const satisfies Record<HttpErrorCode, number>;

/** Reason phrases used as `title` (RFC 9457 §3.1.3: with type about:blank, the status phrase). */
const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/**
 * A problem details body (RFC 9457) as this API sends it, with content type
 * `application/problem+json`. Source: docs/CONTRACT.md "Envelope and errors".
 */
export interface ProblemDetails {
  readonly type: 'about:blank';
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: HttpErrorCode;
  readonly errors?: readonly ValidationIssue[];
  readonly request_id?: string;
}

/** Media type of every error body. Source: RFC 9457 §3. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Builds the problem details body of `code`. */
export function problemOf(
  code: HttpErrorCode,
  detail: string,
  extra: { errors?: readonly ValidationIssue[] | undefined; requestId?: string | undefined } = {},
): ProblemDetails {
  const status = STATUS_BY_CODE[code];
  return {
    type: 'about:blank',
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...(extra.errors !== undefined ? { errors: extra.errors } : {}),
    ...(extra.requestId !== undefined ? { request_id: extra.requestId } : {}),
  };
}

/** Builds the problem details body of a domain error. */
export function problemOfDomainError(error: DomainError, requestId?: string): ProblemDetails {
  return problemOf(error.code, error.detail, { errors: error.errors, requestId });
}

/**
 * Thrown inside the adapter's middleware for a protocol failure (bad JSON, wrong media
 * type, ...); the outermost middleware renders it. `headers` are added to the answer
 * (e.g. `Allow` on 405).
 */
export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';

  constructor(
    readonly code: HttpErrorCode,
    readonly detail: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
  }
}
