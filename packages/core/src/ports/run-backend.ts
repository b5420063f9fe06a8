import type { RunFileSource } from './run-processor.js';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { Notifier } from './notifier.js';
import type { RunEventLog } from './run-event-log.js';
import type { RunProcessor } from './run-processor.js';
import type { RunQueue } from './run-queue.js';
import type { RunStore } from './run-store.js';
import type { Telemetry } from './telemetry.js';

/** Settings of a worker that every implementation shares. */
export interface RunWorkerOptions {
  /** Told once when a run reaches a final status (e.g. adapter-queue's `LogNotifier`); default: nobody. */
  readonly notifier?: Notifier;
  /** Gets a line per failed attempt and per finished run; default: silent. */
  readonly logger?: Logger;
  /** Stamps status changes and times the backoff between attempts; default the system clock. */
  readonly clock?: Clock;
  /** Runs processed at the same time by this worker; default 1. */
  readonly concurrency?: number;
  /** Told of each run's queue wait and final status (core `RunLifecycle`); default: nobody. */
  readonly telemetry?: Telemetry;
  /**
   * Ms a processor may go on after its run's cancel fired its `AbortSignal`; then the
   * worker abandons it (its slot is freed, its result ignored) and the run is made
   * `cancelled` anyway. Default 10000 (core `DEFAULT_CANCEL_GRACE_MS`). Source: docs/CONTRACT.md
   * "Runs lifecycle" (`worker.cancel_grace_ms`).
   */
  readonly cancelGraceMs?: number;
  /**
   * Ms between two reads of a run in progress for a cancel request (core
   * `RunLifecycle`): the most a cancel waits to be seen. Default
   * 200 (core `DEFAULT_CANCEL_POLL_MS`). Source: docs/decisions.md "Cancel and run events".
   */
  readonly cancelPollMs?: number;
  /**
   * Gives each processor its run's files (`context.files`): core `StoredRunFiles` on the
   * file catalog and store the API uses; default none (every `open` fails the run).
   * Source: docs/CONTRACT.md "Files".
   */
  readonly files?: RunFileSource;
}



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
  /**
   * Runs that nobody will run (in memory: in progress when the grace ended, waiting for
   * their next attempt, or still queued when the backend closed): they are lost with the
   * process.
   */
  readonly lostRunIds?: readonly string[];
}

/** A worker started by a {@link RunBackend}. */
export interface RunWorker {
  /**
   * Stops taking runs and waits for those in progress: for ever by default, or at most
   * `graceMs` milliseconds when the implementation takes it (then it reports what it
   * abandoned). `force`: does not wait at all.
   */
  close(force?: boolean, graceMs?: number): Promise<RunWorkerCloseReport | void>;
  /** Ids of the runs it is processing now: what a close that overran its bound abandons. */
  runsInProgress(): readonly string[];
}

/**
 * Runs as a whole: a queue, its store, and the workers that process what it holds — what
 * a composition root needs of runs, whichever implementation configuration picks:
 * core's `InMemoryRuns` (embedded default) or adapter-queue's `BullMqRuns` (durable,
 * Redis). `createCore` takes one; `createWorker` starts a worker on one.
 */
export interface RunBackend {
  /**
   * True when a queued run survives this process (BullMQ: it waits in Redis for any
   * worker), false when it lives in this process (in memory). A stopping server stops a
   * durable backend's workers at once, and keeps the others taking runs while it still
   * answers requests (docs/CONTRACT.md "Dependencies and faults").
   */
  readonly durable: boolean;
  /** Accepts runs (core `RunQueue`). */
  readonly queue: RunQueue;
  /** Reads runs at their `status_url` (core `RunStore`). */
  readonly store: RunStore;
  /** The runs' events, recorded by `store` with each status change (core `RunEventLog`). */
  readonly events: RunEventLog;
  /** Starts a worker that processes runs with `processor`; closed by {@link RunBackend.close}. */
  startWorker(processor: RunProcessor, options?: RunWorkerOptions): Promise<RunWorker>;
  /**
   * Closes the workers, then everything else, in that order; an implementation that
   * bounds the wait reports the runs it abandoned.
   */
  close(): Promise<RunWorkerCloseReport | void>;
  /**
   * How many runs wait to be taken by a worker now (queued, including those waiting for
   * a retry's backoff where the queue holds them), for the queue depth metric. Optional:
   * a backend that cannot tell leaves it out.
   * @throws when the backend is unreachable (the caller reports no value).
   */
  queueDepth?(): Promise<number>;
}
