import type { RunProcessor, RunQueue, RunStore } from '@svc/core';
import type { RunWorkerOptions } from './bullmq-run-worker.js';

/** What a bounded close of a worker left undone. */
export interface RunWorkerCloseReport {
  /**
   * Runs still in progress when the grace ended, which the worker stopped waiting for.
   * With BullMQ their jobs stay active in Redis until their lock expires; then the
   * stalled check of a live worker puts them back in the queue and another attempt runs.
   */
  readonly abandonedRunIds: readonly string[];
  /**
   * Redis clients (by role) whose QUIT was not answered in time, so their connection was
   * dropped: Redis was lost or paused. Nothing is lost by it; it says the close was not clean.
   */
  readonly droppedClients?: readonly string[];
}

/** A worker started by a {@link RunBackend}. */
export interface RunWorker {
  /**
   * Stops taking runs and waits for those in progress: for ever by default, or at most
   * `graceMs` milliseconds when the implementation takes it (then it reports what it
   * abandoned). `force`: does not wait at all.
   */
  close(force?: boolean, graceMs?: number): Promise<RunWorkerCloseReport | void>;
}

/**
 * What a composition root needs of runs, whichever implementation configuration picks:
 * {@link InMemoryRuns} (embedded default) or {@link BullMqRuns} (durable, Redis).
 */
export interface RunBackend {
  /** Accepts runs (core `RunQueue`). */
  readonly queue: RunQueue;
  /** Reads runs at their `status_url` (core `RunStore`). */
  readonly store: RunStore;
  /** Starts a worker that processes runs with `processor`; closed by {@link RunBackend.close}. */
  startWorker(processor: RunProcessor, options?: RunWorkerOptions): Promise<RunWorker>;
  /**
   * Closes the workers, then everything else, in that order; an implementation that
   * bounds the wait reports the runs it abandoned.
   */
  close(): Promise<RunWorkerCloseReport | void>;
}
