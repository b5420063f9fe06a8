import type { Run } from '../domain/run.js';

/**
 * Accepts runs for asynchronous processing.
 *
 * Contract: when `enqueue` resolves, the run (status `queued`) is recorded durably for
 * this implementation (memory: the process; Redis: the server) and readable through the
 * matching {@link RunStore}; it will be processed at least once. Enqueueing the same
 * `runId` twice never creates a second run. It rejects when the queue is unreachable,
 * and then nothing was promised to the caller (docs/CONTRACT.md "Runs": a run answered 202 is
 * never lost).
 */
export interface RunQueue {
  /** Records and schedules `run`. */
  enqueue(run: Run): Promise<void>;
}
