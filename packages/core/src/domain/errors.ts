/**
 * The closed set of domain error codes, as sent in the `code` member of a problem
 * details body (snake_case).
 *
 * Source: docs/CONTRACT.md "Envelope and errors" (the table of statuses and codes) and
 * docs/api-spec.md "Errors". The HTTP adapter maps every code to a status in one exhaustive
 * table, so a new code does not build until it is mapped.
 */
export const DOMAIN_ERROR_CODES = [
  'validation_failed',
  'invalid_header',
  'writes_not_supported',
  'unknown_entity',
  'unknown_column',
  'constraint_violation',
  'invalid_value',
  'invalid_cursor',
  'missing_credential',
  'invalid_credential',
  'expired_credential',
  'unsupported_credential',
  'insufficient_scope',
  'not_found',
  'ambiguous_key',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'run_final',
  'file_in_use',
  'file_not_pending',
  'file_not_uploaded',
  'upload_url_invalid',
  'upload_too_large',
  'upload_size_mismatch',
  'rate_limited',
  'connection_unavailable',
  'connection_timeout',
] as const;

/** One domain error code. See {@link DOMAIN_ERROR_CODES}. */
export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/**
 * One failed rule of a validated input.
 *
 * `path` is a JSON Pointer (RFC 6901) into the request body, e.g. `/values/qty` or
 * `/files/3/content_type`; `""` is the body itself. Source: docs/CONTRACT.md "Envelope and
 * errors" (`errors: [{path, message}]`).
 */
export interface ValidationIssue {
  /** JSON Pointer (RFC 6901) of the offending member; `""` for the whole body. */
  readonly path: string;
  /** Human-readable rule that failed, naming no secret and no SQL. */
  readonly message: string;
}

/**
 * An expected failure of a use case.
 *
 * `detail` is human-readable and safe to send to the caller: it never holds SQL text,
 * host names, user names, passwords, stack traces or credentials (docs/CONTRACT.md
 * "Envelope and errors").
 */
export interface DomainError<C extends DomainErrorCode = DomainErrorCode> {
  /** Machine-readable code (docs/CONTRACT.md table). */
  readonly code: C;
  /** Human-readable explanation that names the offending field where there is one. */
  readonly detail: string;
  /** Validation failures, present when `code` is `validation_failed`. */
  readonly errors?: readonly ValidationIssue[];
  /** For `insufficient_scope`: the OAuth scope the operation needs (RFC 6750 §3.1). */
  readonly requiredScope?: string;
  /**
   * Seconds after which the same request may succeed (`Retry-After`), for an error that
   * is a matter of waiting: `idempotency_key_in_use` (docs/CONTRACT.md "Runs lifecycle").
   */
  readonly retryAfterSeconds?: number;
}

/**
 * Builds a {@link DomainError}.
 *
 * @param code - the domain error code.
 * @param detail - safe, human-readable detail.
 * @param extra - optional `errors`, `requiredScope` or `retryAfterSeconds`.
 */
export function domainError<C extends DomainErrorCode>(
  code: C,
  detail: string,
  extra: { errors?: readonly ValidationIssue[]; requiredScope?: string; retryAfterSeconds?: number } = {},
): DomainError<C> {
  return { code, detail, ...extra };
}

/**
 * Builds a `validation_failed` error from a list of issues; `detail` repeats the first
 * issue so that a client printing only `detail` still sees which field is wrong.
 */
export function validationFailed(issues: readonly ValidationIssue[]): DomainError<'validation_failed'> {
  const first = issues[0];
  const where = first === undefined ? '' : first.path === '' ? 'request body: ' : `${first.path}: `;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return domainError('validation_failed', `${where}${first?.message ?? 'invalid input'}${more}`, { errors: issues });
}

/**
 * Thrown by an adapter when infrastructure it depends on (Redis, the run queue, a
 * credential store) cannot be reached, so nothing was done. Not a bug: the HTTP adapter
 * answers 503 `service_unavailable` with `Retry-After`, instead of a 500.
 * `message` must be safe to log: no host, user, password or secret.
 */
export class DependencyUnavailableError extends Error {
  override readonly name = 'DependencyUnavailableError';

  /**
   * @param dependency - short name of what is unreachable, e.g. `redis` or `run_queue`.
   * @param options - `cause`, the library's error (never sent to a client).
   */
  constructor(
    readonly dependency: string,
    options?: { cause?: unknown },
  ) {
    super(`${dependency} is unavailable`, options);
  }
}

/**
 * Thrown by a run processor (core `RunProcessor`) to fail the attempt with a safe,
 * human-readable `reason`, shown as the run's `failure_reason`. With `retryable: false`
 * (the default) the run fails at once, whatever attempts remain; with `retryable: true`
 * the attempt is retried like any other error, and `reason` is shown if the last attempt
 * fails with it. Any other error a processor throws is retryable, and its message is
 * never shown. Source: docs/decisions.md "Run processors".
 */
export class RunFailedError extends Error {
  override readonly name = 'RunFailedError';
  /** True when another attempt may succeed. */
  readonly retryable: boolean;

  /**
   * @param reason - safe text for the run's `failure_reason` (no host, secret or stack).
   * @param options - `retryable` (default false) and `cause`.
   */
  constructor(
    readonly reason: string,
    options: { readonly retryable?: boolean; readonly cause?: unknown } = {},
  ) {
    super(reason, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.retryable = options.retryable ?? false;
  }
}

/**
 * The `reason` of a run processor's `AbortSignal` (core `RunProcessingContext.signal`)
 * when the run was cancelled (`POST /api/v1/runs/{run_id}/cancel`): the processor stops
 * and the run ends `cancelled`, neither retried nor failed. Tells a cancel apart from a
 * worker that stops ({@link WorkerStoppingError}). Source: docs/CONTRACT.md "Runs
 * lifecycle"; docs/decisions.md "Cancel and run events".
 */
export class RunCancelledError extends Error {
  override readonly name = 'RunCancelledError';

  /** @param runId - the cancelled run. */
  constructor(readonly runId: string) {
    super(`run ${runId} was cancelled`);
  }
}

/**
 * The `reason` of a run processor's `AbortSignal` when its worker stops past its grace:
 * the run is queued again for another attempt (a durable queue) and the attempt is no
 * failure. Source: docs/decisions.md "Run processors", "Cancel and run events".
 */
export class WorkerStoppingError extends Error {
  override readonly name = 'WorkerStoppingError';

  constructor() {
    super('the worker is stopping');
  }
}
