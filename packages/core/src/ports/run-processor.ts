import type { JsonValue, Run } from '../domain/run.js';

/**
 * How processing a run ended, as a processor resolves it:
 * - `{ok: true, output?}`: the run `succeeded`; `output` (any JSON value, at most
 *   `MAX_RUN_OUTPUT_BYTES` as JSON) is stored with the run and shown at `GET {status_url}`;
 * - `{ok: false, reason}`: the run `failed` at once with `reason` (safe, human-readable
 *   text shown as `failure_reason`); an answer, not an accident, so never retried.
 * Source: docs/decisions.md "Run processors".
 */
export type RunProcessingResult = { readonly ok: true; readonly output?: JsonValue } | { readonly ok: false; readonly reason: string };

/** What a processor passes to {@link RunProcessingContext.reportProgress}. */
export interface ProgressReport {
  /** Done so far, 0..100; absent when unknown. */
  readonly percent?: number;
  /** Safe, human-readable step, at most 1000 characters. */
  readonly message?: string;
}

/**
 * What a processor gets with each attempt of a run. Source: docs/decisions.md "Run processors".
 */
export interface RunProcessingContext {
  /**
   * Aborts when the attempt must stop: the worker is shutting down past its grace (the
   * run is then tried again by another worker where the queue is durable), or the run is
   * cancelled. A processor stops its work promptly and rejects (with `signal.reason`).
   */
  readonly signal: AbortSignal;
  /** This attempt's number: 1 for the first, 2 for the first retry, and so on. */
  readonly attempt: number;
  /** Attempts the worker makes at most before the run fails (the backend's `attempts`). */
  readonly maxAttempts: number;
  /**
   * Records the run's `progress`, shown at `GET {status_url}` (replacing the last report).
   * Resolves false when the run is no longer `running` (e.g. it was cancelled).
   * @throws RangeError when `percent` is not in 0..100, or `message` is over 1000 characters.
   * @throws when the run store is unreachable.
   */
  reportProgress(progress: ProgressReport): Promise<boolean>;
}

/**
 * The agent runtime: does the work of one run. Supplied by the embedder or the operator
 * (`startServer(settings, {processor})`, `createWorker({backend, processor})`); the API
 * server ships a demo processor.
 *
 * Contract (docs/decisions.md "Run processors"):
 * - resolves how the run ended ({@link RunProcessingResult});
 * - rejects for a failure: retried with the backend's backoff until its attempts are
 *   spent (then `failed` with a safe reason, never the error's message), unless the error
 *   is a `RunFailedError` with `retryable: false`, which fails the run at once;
 * - honours `context.signal`;
 * - tolerates being called again for the same run after a crash (at-least-once).
 */
export interface RunProcessor {
  process(run: Run, context: RunProcessingContext): Promise<RunProcessingResult>;
}
