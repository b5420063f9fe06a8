import { RunCancelledError, RunFailedError } from '../domain/errors.js';
import { errorTypeOf } from '../domain/error-type.js';
import { checkOutput, checkProgress, type JsonValue, type Run, type RunStatus } from '../domain/run.js';
import { NO_RUN_FILES } from './run-files.js';
import type { RunFileSource } from '../ports/run-processor.js';
import type { Clock } from '../ports/clock.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import type { Notifier } from '../ports/notifier.js';
import type { ProgressReport, RunProcessingContext, RunProcessingResult, RunProcessor } from '../ports/run-processor.js';
import type { RunStore } from '../ports/run-store.js';
import { noopTelemetry, type Telemetry } from '../ports/telemetry.js';
import { CORE_TRACER_NAME, tracerOf, withSpan } from '../telemetry/tracing.js';
import type { Tracer } from '@opentelemetry/api';
import { SystemClock } from '../memory/system-clock.js';

/** What one processing attempt of a run ({@link RunLifecycle.attempt}) came to. */
export type AttemptOutcome =
  /** Nothing ran: no such run, or its status does not allow a start (final already). */
  | { readonly kind: 'skipped'; readonly status: RunStatus | undefined }
  /** The processor succeeded; the run is `succeeded` (unless another writer finished it first). */
  | { readonly kind: 'succeeded' }
  /** The run failed for good, with a safe reason; no more attempts. */
  | { readonly kind: 'failed'; readonly reason: string }
  /** The processor threw and attempts remain: the run is `queued` again; `error` is what it threw. */
  | { readonly kind: 'retry'; readonly error: unknown }
  /**
   * The attempt's signal aborted (the worker is stopping) and the processor stopped: the
   * run is `queued` again for another worker, and the attempt is not a failure.
   */
  | { readonly kind: 'interrupted' }
  /**
   * The run was cancelled (core `RunStore.requestCancel`): before the attempt began, or
   * while it ran (the processor's signal fired; it stopped, or was abandoned after the
   * cancel grace). The run is `cancelled`; never retried.
   */
  | { readonly kind: 'cancelled' };

/** How a worker runs one attempt ({@link RunLifecycle.attempt}). */
export interface AttemptOptions {
  /** True when a failure must fail the run instead of queueing it again. */
  readonly lastAttempt: boolean;
  /** Attempts the worker makes at most (shown to the processor as `maxAttempts`). */
  readonly maxAttempts: number;
  /** Aborted when the worker stops past its grace; default: never. */
  readonly signal?: AbortSignal;
}

/** Collaborators of {@link RunLifecycle}. */
export interface RunLifecycleOptions {
  /** Where the runs are; every status change is its {@link RunStore.transition}. */
  readonly store: RunStore;
  /** Does the work of a run (the agent runtime). */
  readonly processor: RunProcessor;
  /** Told once when a run reaches a final status; default: nobody. */
  readonly notifier?: Notifier;
  /** Gets a line per attempt that fails and per run that finishes; default: silent. */
  readonly logger?: Logger;
  /** Stamps `updatedAt` of every change and progress report; default the system clock. */
  readonly clock?: Clock;
  /** Told of each run's queue wait and final status; default: nobody (`noopTelemetry`). */
  readonly telemetry?: Telemetry;
  /** Ms a processor may go on after its cancel fired; default {@link DEFAULT_CANCEL_GRACE_MS}. */
  readonly cancelGraceMs?: number;
  /** Ms between two reads of the run for a cancel request while it is processed; default {@link DEFAULT_CANCEL_POLL_MS}. */
  readonly cancelPollMs?: number;
  /** Gives each processor its run's files (`context.files`); default core `NO_RUN_FILES` (every `open` fails the run). */
  readonly files?: RunFileSource;
}

/** Default of `RunWorkerOptions.cancelGraceMs`: 10000 ms (docs/CONTRACT.md "Runs lifecycle"). */
export const DEFAULT_CANCEL_GRACE_MS = 10_000;
/**
 * Default of `RunWorkerOptions.cancelPollMs`: 200 ms, so that a cancel ends a
 * running run well within the 1 s the brief asks (docs/decisions.md "Cancel and run
 * events"): one `get` of each run in progress per interval.
 */
export const DEFAULT_CANCEL_POLL_MS = 200;

/** How processing one attempt settled: the processor's answer, its error, or abandoned past the cancel grace. */
type Processed = { readonly result: RunProcessingResult } | { readonly error: unknown } | { readonly abandoned: true };

const NEVER_ABORTED = new AbortController().signal;

/**
 * The status rules of processing a run, shared by every worker (core's in-process one,
 * adapter-queue's BullMQ one, an embedder's) so that all move runs the same way
 * (docs/CONTRACT.md "Runs"; docs/decisions.md "Run processors"; statuses and transitions:
 * `domain/run.ts`): queued → running (one more attempt) → succeeded (with the processor's
 * `output`) | failed, or back to queued when the processor throws a retryable error and
 * attempts remain (the caller waits the backoff), or when the worker stops it. A
 * processor that resolves `{ok: false}` or throws a non-retryable `RunFailedError` fails
 * the run at once. Every change is a compare-and-set on the status
 * ({@link RunStore.transition}), so the notifier is called exactly once, by whichever
 * change made the run final. The suite every store passes with it is
 * `runLifecycleContract` in `@svc/core/testing`.
 *
 * Not a one-`execute` use case: a worker calls {@link RunLifecycle.attempt} per attempt,
 * and {@link RunLifecycle.finish} alone when its queue gave up on a run without an
 * attempt (BullMQ: a job that stalled too often).
 */
export class RunLifecycle {
  private readonly store: RunStore;
  private readonly processor: RunProcessor;
  private readonly notifier: Notifier | undefined;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly telemetry: Telemetry;
  private readonly tracer: Tracer;
  private readonly cancelGraceMs: number;
  private readonly cancelPollMs: number;
  private readonly files: RunFileSource;

  /**
   * @param options - store, processor, and optional notifier, logger, clock, telemetry and cancel timings.
   * @throws RangeError when `cancelGraceMs` is not ≥ 0 or `cancelPollMs` not > 0.
   */
  constructor(options: RunLifecycleOptions) {
    this.store = options.store;
    this.processor = options.processor;
    this.notifier = options.notifier;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? new SystemClock();
    this.telemetry = options.telemetry ?? noopTelemetry;
    this.tracer = tracerOf(CORE_TRACER_NAME);
    this.cancelGraceMs = options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
    this.cancelPollMs = options.cancelPollMs ?? DEFAULT_CANCEL_POLL_MS;
    this.files = options.files ?? NO_RUN_FILES;
    if (!(this.cancelGraceMs >= 0) || !(this.cancelPollMs > 0)) throw new RangeError('cancelGraceMs must be ≥ 0 and cancelPollMs > 0');
  }

  /**
   * Runs one processing attempt of `runId`, in a span `RunLifecycle.attempt` (attributes
   * `svc.run_id`, `svc.attempt_outcome`). The first attempt of a run reports its queue
   * wait ({@link Telemetry.runWaited}).
   * @throws when the store is unreachable (the caller's queue retries the attempt later).
   */
  attempt(runId: string, options: AttemptOptions): Promise<AttemptOutcome> {
    return withSpan(this.tracer, 'RunLifecycle.attempt', { 'svc.run_id': runId }, async (span) => {
      const outcome = await this.attemptOnce(runId, options);
      if (span.isRecording()) span.setAttribute('svc.attempt_outcome', outcome.kind);
      return outcome;
    });
  }

  private async attemptOnce(runId: string, options: AttemptOptions): Promise<AttemptOutcome> {
    const at = this.clock.now();
    const started = await this.store.transition(runId, { to: 'running', at, countAttempt: true });
    if (!started.applied) {
      this.logger.warn({ run_id: runId, ...requestIdOf(started.run), status: started.run?.status ?? null }, 'run not started: missing or already final');
      return { kind: 'skipped', status: started.run?.status };
    }
    const run = started.run;
    if (run.attempts === 1) this.telemetry.runWaited(Math.max(0, at.getTime() - run.createdAt.getTime()) / 1000);
    // Cancelled while it was running before (a stalled attempt taken again, or a retry).
    if (run.cancelRequestedAt !== undefined) return this.cancelled(runId);
    // Not awaited: the processor does not wait for webhooks (a queue that is down would hold
    // every attempt for its timeout); tellRunning logs its own failure.
    void this.tellRunning(run, at);
    // One signal for the attempt: the worker's stop (its reason passed on) or the run's cancel.
    const attempt = new AbortController();
    const workerSignal = options.signal ?? NEVER_ABORTED;
    const onWorkerStop = (): void => attempt.abort(workerSignal.reason);
    if (workerSignal.aborted) onWorkerStop();
    else workerSignal.addEventListener('abort', onWorkerStop, { once: true });
    const signal = attempt.signal;
    // The watch also ends once the attempt is aborted for any reason: a processor that
    // ignores the worker's stop must not keep a poll going for as long as it hangs.
    const stopWatching = this.watchCancel(runId, () => attempt.abort(new RunCancelledError(runId)));
    signal.addEventListener('abort', stopWatching, { once: true });
    const context: RunProcessingContext = {
      signal,
      attempt: run.attempts,
      maxAttempts: options.maxAttempts,
      reportProgress: async (progress: ProgressReport) => {
        checkProgress(progress);
        return this.store.reportProgress(runId, { ...progress, updatedAt: this.clock.now() });
      },
      files: this.files.forRun(run),
    };
    let processed: Processed;
    try {
      processed = await this.processWithinCancelGrace(run, context);
    } finally {
      stopWatching();
      signal.removeEventListener('abort', stopWatching);
      workerSignal.removeEventListener('abort', onWorkerStop);
    }
    if (signal.reason instanceof RunCancelledError) {
      if ('abandoned' in processed) {
        this.logger.warn({ run_id: runId, ...requestIdOf(run), attempt: run.attempts, cancel_grace_ms: this.cancelGraceMs }, 'run processor ignored the cancel: abandoned');
      }
      return this.cancelled(runId);
    }
    if ('error' in processed) return this.afterThrow(run, processed.error, options.lastAttempt, signal);
    if (!('result' in processed)) return this.cancelled(runId);
    const result = processed.result;
    // A cancel asked for while the processor answered still wins: the store moves a run
    // with a cancel request to `cancelled` instead (core `statusAfter`, in its compare-and-set).
    if (!result.ok) {
      const ended = await this.settle(runId, 'failed', { failureReason: result.reason });
      return ended?.status === 'cancelled' ? { kind: 'cancelled' } : { kind: 'failed', reason: result.reason };
    }
    if (result.output !== undefined) {
      const checked = checkOutput(result.output);
      if (!checked.ok) {
        const ended = await this.settle(runId, 'failed', { failureReason: checked.reason });
        return ended?.status === 'cancelled' ? { kind: 'cancelled' } : { kind: 'failed', reason: checked.reason };
      }
    }
    const ended = await this.settle(runId, 'succeeded', result.output !== undefined ? { output: result.output } : {});
    return ended?.status === 'cancelled' ? { kind: 'cancelled' } : { kind: 'succeeded' };
  }

  /**
   * Runs the processor; once the signal aborts for a cancel, waits for it at most
   * `cancelGraceMs` (real time), then abandons it: its later answer is ignored.
   */
  private async processWithinCancelGrace(run: Run, context: RunProcessingContext): Promise<Processed> {
    const processing: Promise<Processed> = (async () => this.processor.process(run, context))().then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const abandoned = new Promise<Processed>((resolve) => {
      onAbort = () => {
        if (context.signal.reason instanceof RunCancelledError) timer = setTimeout(() => resolve({ abandoned: true }), this.cancelGraceMs);
      };
      context.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([processing, abandoned]);
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) context.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Reads the run every `cancelPollMs` (real time) while it is processed, and calls
   * `onCancel` once when it has a cancel request. A failed read is tried again at the next
   * tick (the store may be back). @returns the function that stops the watch.
   */
  private watchCancel(runId: string, onCancel: () => void): () => void {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async (): Promise<void> => {
      try {
        const run = await this.store.get(runId);
        if (stopped) return;
        if (run?.cancelRequestedAt !== undefined) {
          onCancel();
          return;
        }
      } catch {
        // The store is unreachable: the next tick reads again.
      }
      if (!stopped) timer = setTimeout(() => void tick(), this.cancelPollMs);
    };
    timer = setTimeout(() => void tick(), this.cancelPollMs);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }

  private async cancelled(runId: string): Promise<AttemptOutcome> {
    await this.finish(runId, 'cancelled');
    return { kind: 'cancelled' };
  }

  private async afterThrow(run: Run, error: unknown, lastAttempt: boolean, signal: AbortSignal): Promise<AttemptOutcome> {
    const runId = run.runId;
    const failure = error instanceof RunFailedError ? error : undefined;
    if (signal.aborted && failure === undefined) {
      this.logger.warn({ run_id: runId, ...requestIdOf(run), attempt: run.attempts }, 'run attempt interrupted: the worker is stopping');
      // A cancel asked for meanwhile is taken by the next attempt (it finds cancelRequestedAt).
      await this.store.transition(runId, { to: 'queued', at: this.clock.now() });
      return { kind: 'interrupted' };
    }
    const retryable = failure?.retryable ?? true;
    this.logger.warn({ run_id: runId, ...requestIdOf(run), attempt: run.attempts, error_type: errorTypeOf(error), retryable, last_attempt: lastAttempt }, 'run attempt failed');
    if (lastAttempt || !retryable) {
      // A thrown text may carry internals; only a RunFailedError's reason is written for the API.
      const reason = failure?.reason ?? `Processing failed after ${run.attempts} attempt${run.attempts === 1 ? '' : 's'}.`;
      await this.finish(runId, 'failed', { failureReason: reason });
      return { kind: 'failed', reason };
    }
    await this.store.transition(runId, { to: 'queued', at: this.clock.now() });
    return { kind: 'retry', error };
  }

  /**
   * Moves the run to a final status when it is not final yet, and then notifies (also
   * for `cancelled`: the notifier is told of every final status, exactly once).
   * @param details - the safe `failureReason` of a failed run, the `output` of a succeeded one.
   * @returns true when this call made the run final.
   * @throws when the store is unreachable; never for a failing notifier (core `Notifier`:
   * its failures never change the run).
   */
  async finish(runId: string, to: 'succeeded' | 'failed' | 'cancelled', details: { readonly failureReason?: string; readonly output?: JsonValue } = {}): Promise<boolean> {
    return (await this.settle(runId, to, details)) !== undefined;
  }

  /**
   * {@link finish}, answering the run as it ended (`cancelled` instead of `to` when it had
   * a cancel request: core `statusAfter`), or `undefined` when the move did not apply.
   */
  private async settle(runId: string, to: 'succeeded' | 'failed' | 'cancelled', details: { readonly failureReason?: string; readonly output?: JsonValue }): Promise<Run | undefined> {
    const outcome = await this.store.transition(runId, { to, at: this.clock.now(), ...details });
    if (!outcome.applied) return undefined;
    const status = outcome.run.status as 'succeeded' | 'failed' | 'cancelled';
    this.telemetry.runFinished(status);
    this.logger.info({ run_id: runId, ...requestIdOf(outcome.run), status, attempts: outcome.run.attempts }, 'run finished');
    await this.notify(outcome.run);
    return outcome.run;
  }

  /** Tells the notifier of `run.running` (webhook endpoints that subscribe to it); its failure only logs. */
  private async tellRunning(run: Run, at: Date): Promise<void> {
    if (this.notifier?.runChanged === undefined) return;
    try {
      await this.notifier.runChanged({ type: 'run.running', at, run });
    } catch (error) {
      this.logger.warn({ run_id: run.runId, ...requestIdOf(run), event_type: 'run.running', error_type: errorTypeOf(error) }, 'run notification failed');
    }
  }

  private async notify(run: Run): Promise<void> {
    if (this.notifier === undefined) return;
    try {
      await this.notifier.runFinished(run);
    } catch (error) {
      this.logger.warn({ run_id: run.runId, ...requestIdOf(run), error_type: errorTypeOf(error) }, 'run notification failed');
    }
  }
}

export { errorTypeOf };

/**
 * `{request_id}` of the request that started `run`, for its log lines; empty when the run
 * has none (started in process, or before request ids were stored).
 */
function requestIdOf(run: Run | undefined): { request_id?: string } {
  return run?.requestId !== undefined ? { request_id: run.requestId } : {};
}
