import type { WriteErrorCode } from './record-writer.js';

/** Which rate-limit window a decision is about. Source: docs/CONTRACT.md "Rate limits". */
export type RateLimitScope = 'credential' | 'agent';

/** What one window decided: the request passed it, or the window was full. */
export type RateLimitOutcome = 'allowed' | 'refused';

/** Final statuses a run is counted under when it finishes. */
export type FinishedRunStatus = 'succeeded' | 'failed' | 'cancelled';

/**
 * How a row write ended: `ok`, one of the writer's expected error codes, or `error` when
 * the writer rejected (a bug or a lost writer).
 */
export type RecordWriteOutcome = 'ok' | WriteErrorCode | 'error';

/**
 * How one webhook delivery attempt ended (docs/decisions.md "Webhooks"): `success` (a 2xx
 * within the attempt's timeout), `http_error` (another status), `timeout`, `network_error`
 * (refused, reset, DNS), `refused` (the address is not allowed: SSRF rule; never sent).
 */
export type WebhookAttemptResult = 'success' | 'http_error' | 'timeout' | 'network_error' | 'refused';

/**
 * How a webhook delivery ended: `delivered` (an attempt succeeded), `failed` (no attempt
 * succeeded within the retry window, or the address is refused), `dropped` (its endpoint
 * was removed, or no longer takes the event, before it was delivered).
 */
export type WebhookDeliveryOutcome = 'delivered' | 'failed' | 'dropped';

/**
 * Counts and times what the service does, for metrics (the API server implements it with
 * prom-client; docs/decisions.md "Observability" lists the metric each call feeds).
 * The core and the adapters call it; what they call it with is ids and codes only, never
 * a secret, a host or an e-mail address.
 *
 * Contract: every method is synchronous, cheap (it runs on the request path) and never
 * throws. Durations are in seconds (Prometheus' base unit). Labels are bounded: an
 * operation is a route's operationId or `unmatched`, a connection id is a configured
 * connection.
 */
export interface Telemetry {
  /**
   * A door answered one request.
   * @param operation - the route's operationId (`startRun`, `getRun`, …), `preflight`
   *   for a CORS preflight, or `unmatched` when no route matched (404, 405).
   * @param status - the HTTP status sent.
   * @param durationSeconds - from the request's first middleware to the answer, in seconds.
   */
  requestFinished(operation: string, status: number, durationSeconds: number): void;
  /**
   * A rate-limit window was checked for a request: `allowed` once per window when the
   * request was charged; `refused` once per full window when it was not (a window with
   * room whose request another window refused is not counted: nothing was charged).
   */
  rateLimitDecision(scope: RateLimitScope, outcome: RateLimitOutcome): void;
  /** A run was accepted and queued (a run start answered 202). */
  runStarted(): void;
  /** A run reached a final status (counted once per run, by the change that made it final). */
  runFinished(status: FinishedRunStatus): void;
  /**
   * A run was taken for its first attempt, `waitSeconds` after it was accepted (its
   * `createdAt`): the time it waited in the queue, in seconds.
   */
  runWaited(waitSeconds: number): void;
  /**
   * A row write ended, after `durationSeconds` (pool wait, round trip and a retry
   * included), on `connectionId`.
   */
  recordWrite(connectionId: string, outcome: RecordWriteOutcome, durationSeconds: number): void;
  /**
   * One webhook delivery attempt ended with `result` after `durationSeconds` (connect,
   * request and the bounded read of the answer; 0 for `refused`), in seconds.
   */
  webhookAttempt(result: WebhookAttemptResult, durationSeconds: number): void;
  /** A webhook delivery ended (counted once per delivery, whatever its attempts). */
  webhookDelivery(outcome: WebhookDeliveryOutcome): void;
}

/** A {@link Telemetry} that records nothing: the default wherever none is given. */
export const noopTelemetry: Telemetry = Object.freeze({
  requestFinished: () => undefined,
  rateLimitDecision: () => undefined,
  runStarted: () => undefined,
  runFinished: () => undefined,
  runWaited: () => undefined,
  recordWrite: () => undefined,
  webhookAttempt: () => undefined,
  webhookDelivery: () => undefined,
});
