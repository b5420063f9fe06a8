import type { RunEvent } from '../domain/run-event.js';

/**
 * What a {@link RunEventLog.watch} listener is told: something may have been appended to
 * the run's log (read it with {@link RunEventLog.events}), or, with `error`, the log
 * cannot be watched any more (its store was lost): the watcher stops and the listener is
 * not called again.
 */
export type RunEventListener = (error?: unknown) => void;

/**
 * The events of each run (core `RunEvent`): one per status change, recorded by the run
 * store atomically with the change (`save`, an applied `transition`, a `requestCancel`
 * that cancels; not a progress report, not a cancel request on a running run), kept as
 * long as the run. A retry is recorded as it happens: running → queued is a second
 * `run.queued`, running → running (a stalled attempt taken again) a second `run.running`.
 * The events stream `GET /api/v1/runs/{run_id}/events` reads it (core `StreamRunEvents`).
 * Source: docs/CONTRACT.md "Runs lifecycle"; docs/decisions.md "Cancel and run events".
 *
 * Contract (the suite is `runEventLogContract` in `@svc/core/testing`): ids are opaque
 * and increase within a run; `events` answers in the order recorded; a listener is told
 * (at least once, maybe late by the implementation's latency: in memory at once, in Redis
 * within its poll interval) after every event appended while it is registered; `watch`
 * holds nothing once unwatched.
 */
export interface RunEventLog {
  /**
   * The run's events after the one with id `afterId`, oldest first: all of them when
   * `afterId` is absent or not an id of this run's events; none for an unknown run.
   * @throws DependencyUnavailableError when the store is unreachable.
   */
  events(runId: string, afterId?: string): Promise<readonly RunEvent[]>;
  /**
   * Calls `listener` when events may have been appended to `runId`'s log (see
   * {@link RunEventListener}). Never throws; a lost store is told to the listener.
   * @returns the unwatch function: after it the listener is never called, and nothing of
   * it is held (no timer, no connection).
   */
  watch(runId: string, listener: RunEventListener): () => void;
}
