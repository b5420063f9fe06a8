import { silentLogger, type Logger } from '../ports/logger.js';
import type { Clock } from '../ports/clock.js';
import type { RunProcessor } from '../ports/run-processor.js';
import type { RunStore } from '../ports/run-store.js';
import type { RunBackend, RunWorker, RunWorkerCloseReport, RunWorkerOptions } from '../ports/run-backend.js';
import { WorkerStoppingError } from '../domain/errors.js';
import type { RunEventLog } from '../ports/run-event-log.js';
import { errorTypeOf, RunLifecycle } from '../use-cases/run-lifecycle.js';
import { InMemoryRunQueue, InMemoryRunStore, type InMemoryRunStoreOptions } from './in-memory-runs.js';
import { SystemClock } from './system-clock.js';

/** Default of {@link InProcessRunWorkerOptions.attempts}: 3 processing attempts per run. */
export const DEFAULT_RUN_ATTEMPTS = 3;
/** Default of {@link InProcessRunWorkerOptions.backoffMs}: 1000 ms before the first retry. */
export const DEFAULT_RUN_BACKOFF_MS = 1000;

/**
 * Ms to wait before attempt `attempt + 1` after attempt `attempt` (1-based) failed:
 * `backoffMs` doubled per retry, as BullMQ's exponential backoff.
 */
export function retryDelayMs(backoffMs: number, attempt: number): number {
  return backoffMs * 2 ** (attempt - 1);
}

/** Resolves when `work` settles or after `ms` on the real clock, whichever is first; no bound when not finite. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  // Past 2^31 − 1 ms a Node timer fires at once (TimeoutOverflowWarning): treat it as no bound.
  if (!(ms <= 2 ** 31 - 1)) return settled;
  const timer = new AbortController();
  try {
    await Promise.race([settled, new SystemClock().sleep(ms, timer.signal).catch(() => undefined)]);
  } finally {
    timer.abort();
  }
}

/** Options of {@link InProcessRunWorker}. */
export interface InProcessRunWorkerOptions extends RunWorkerOptions {
  /** Processing attempts per run; default 3. */
  readonly attempts?: number;
  /** First retry delay in ms, doubled per retry (as BullMQ's exponential backoff); default 1000. Waited on `clock`. */
  readonly backoffMs?: number;
}

/**
 * The embedded default worker: takes run ids from core's {@link InMemoryRunQueue} and
 * processes them in this process with the same status rules as the BullMQ worker
 * (core {@link RunLifecycle}). There is no BullMQ here to retry, so this class retries: a
 * processor that throws is tried again after `backoffMs`, doubled per retry, until
 * `attempts` are spent, in the same slot. Runs live and die with the process (core
 * `InMemoryRunQueue`); use {@link BullMqRuns} where a run must survive a crash.
 */
export class InProcessRunWorker implements RunWorker {
  private readonly lifecycle: RunLifecycle;
  private readonly clock: Clock;
  /** Aborted when a close's grace ends: the attempts in progress stop (core `RunProcessingContext.signal`). */
  private readonly interrupting = new AbortController();
  private readonly logger: Logger;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly concurrency: number;
  private readonly stopping = new AbortController();
  private readonly stopped: Promise<void>;
  private slots: Promise<void>[] = [];
  /** Runs taken and not finished: processing, or waiting for their next attempt. */
  private readonly inProgress = new Set<string>();
  /** Runs whose wait for their next attempt the close cut short: they stay `queued`. */
  private readonly cut: string[] = [];
  private closing: Promise<RunWorkerCloseReport> | undefined;

  /**
   * @param queue - where run ids wait.
   * @param store - the store the queue records into.
   * @throws RangeError when `attempts` or `concurrency` is not a whole number ≥ 1.
   */
  constructor(
    private readonly queue: InMemoryRunQueue,
    store: RunStore,
    processor: RunProcessor,
    options: InProcessRunWorkerOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.attempts = options.attempts ?? DEFAULT_RUN_ATTEMPTS;
    this.backoffMs = options.backoffMs ?? DEFAULT_RUN_BACKOFF_MS;
    this.clock = options.clock ?? new SystemClock();
    this.concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(this.attempts) || this.attempts < 1) throw new RangeError('attempts must be a whole number ≥ 1');
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) throw new RangeError('concurrency must be a whole number ≥ 1');
    this.lifecycle = new RunLifecycle({
      store,
      processor,
      logger: this.logger,
      ...(options.notifier !== undefined ? { notifier: options.notifier } : {}),
      ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}),
      clock: this.clock,
      ...(options.cancelGraceMs !== undefined ? { cancelGraceMs: options.cancelGraceMs } : {}),
      ...(options.cancelPollMs !== undefined ? { cancelPollMs: options.cancelPollMs } : {}),
      ...(options.files !== undefined ? { files: options.files } : {}),
    });
    this.stopped = new Promise((resolve) => this.stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  /** Starts `concurrency` slots that take and process runs; a second call does nothing. */
  start(): this {
    if (this.slots.length === 0 && !this.stopping.signal.aborted) {
      this.slots = Array.from({ length: this.concurrency }, () => this.slot());
    }
    return this;
  }

  /**
   * Stops taking runs and waits for the attempts in progress at most `graceMs` ms (for
   * ever when not finite; not at all with `force`). A run waiting for its next attempt is
   * not tried again. When the grace ends, the signal of every attempt still in progress
   * aborts (core `RunProcessingContext.signal`). A second call returns the first one's promise.
   * @returns as `lostRunIds` the runs taken and not finished (still processing when the
   * grace ended, or waiting for their next attempt): they stay `queued` or `running` and
   * are lost with the process.
   */
  close(force = false, graceMs = Number.POSITIVE_INFINITY): Promise<RunWorkerCloseReport> {
    this.closing ??= (async () => {
      this.stopping.abort();
      await settledWithin(Promise.all(this.slots), force ? 0 : graceMs);
      const lostRunIds = [...new Set([...this.cut, ...this.inProgress])];
      this.interrupting.abort(new WorkerStoppingError());
      return { abandonedRunIds: [], lostRunIds };
    })();
    return this.closing;
  }

  /** Ids of the runs taken and not finished yet. */
  runsInProgress(): readonly string[] {
    return [...this.inProgress];
  }

  private async slot(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const runId = this.queue.take();
      if (runId === undefined) {
        await Promise.race([this.queue.whenPending(), this.stopped]);
        continue;
      }
      this.inProgress.add(runId);
      try {
        await this.processRun(runId);
      } catch (error) {
        // Only the store can throw here; the slot must live on for the next runs.
        this.logger.error({ component: 'run-worker', run_id: runId, error_type: errorTypeOf(error) }, 'run processing failed');
      } finally {
        this.inProgress.delete(runId);
      }
    }
  }

  private async processRun(runId: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.lifecycle.attempt(runId, { lastAttempt: attempt >= this.attempts, maxAttempts: this.attempts, signal: this.interrupting.signal });
      if (outcome.kind !== 'retry') return;
      try {
        await this.clock.sleep(retryDelayMs(this.backoffMs, attempt), this.stopping.signal);
      } catch {
        this.cut.push(runId); // closing
        return;
      }
    }
  }
}

/**
 * The in-memory runs of the embedded default: core's {@link InMemoryRunQueue} recording
 * into core's {@link InMemoryRunStore}, and in-process workers. The same shape as
 * {@link BullMqRuns}, so a composition root picks one by configuration. Finished runs
 * are kept for a retention and up to a cap (core `InMemoryRunStore`), so that memory stays
 * bounded under load.
 */
export class InMemoryRuns implements RunBackend {
  /** The run store (core `RunStore`), readable at once after `enqueue`. */
  readonly store: InMemoryRunStore;
  /** The run queue (core `RunQueue`). */
  readonly queue: InMemoryRunQueue;
  /** The runs' events (core `RunEventLog`): the store's. */
  readonly events: RunEventLog;
  private readonly workers: InProcessRunWorker[] = [];
  private closing: Promise<RunWorkerCloseReport> | undefined;
  /** Always `false`: a queued run lives in this process and is lost with it. */
  readonly durable = false;

  /** @param options - retention and cap of finished runs (core `InMemoryRunStore`), and its clock. */
  constructor(options: InMemoryRunStoreOptions = {}) {
    this.store = new InMemoryRunStore(options);
    this.queue = new InMemoryRunQueue(this.store);
    this.events = this.store;
  }

  /** Starts an {@link InProcessRunWorker} on this queue; {@link InMemoryRuns.close} closes it. */
  startWorker(processor: RunProcessor, options: InProcessRunWorkerOptions = {}): Promise<InProcessRunWorker> {
    if (this.closing !== undefined) return Promise.reject(new Error('InMemoryRuns is closed: no worker can start'));
    const worker = new InProcessRunWorker(this.queue, this.store, processor, options).start();
    this.workers.push(worker);
    return Promise.resolve(worker);
  }

  /**
   * Runs waiting in the queue to be taken (not those an in-process worker holds for a
   * retry's backoff: they are in progress). Never rejects.
   */
  queueDepth(): Promise<number> {
    return Promise.resolve(this.queue.size);
  }

  /**
   * Closes the workers (each waits for its attempts in progress, for ever unless it was
   * closed with a grace before), then empties the queue. A second call returns the first
   * one's promise.
   * @returns as `lostRunIds` every run that will not be run: those the workers left
   * unfinished and those still queued (they stay `queued` and are lost with the process).
   */
  close(): Promise<RunWorkerCloseReport> {
    this.closing ??= (async () => {
      const reports = await Promise.all(this.workers.splice(0).map((w) => w.close()));
      const queued: string[] = [];
      for (let runId = this.queue.take(); runId !== undefined; runId = this.queue.take()) queued.push(runId);
      return { abandonedRunIds: [], lostRunIds: [...reports.flatMap((r) => r.lostRunIds ?? []), ...queued] };
    })();
    return this.closing;
  }
}
