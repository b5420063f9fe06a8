import type { RunProcessor, RunQueue, RunStore } from '@svc/core';
import type { RunWorkerOptions } from './bullmq-run-worker.js';

/** A worker started by a {@link RunBackend}. */
export interface RunWorker {
  /** Stops taking runs and waits for those in progress. */
  close(): Promise<void>;
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
  /** Closes the workers, then everything else, in that order. */
  close(): Promise<void>;
}
