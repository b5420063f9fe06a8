import type { Run, RunProgress, RunStatusChange } from '../domain/run.js';

/**
 * What {@link RunStore.transition} did: `applied` with the changed run, or not applied
 * with the run as it is (`undefined` when there is no run with that id).
 */
export type TransitionOutcome = { readonly applied: true; readonly run: Run } | { readonly applied: false; readonly run: Run | undefined };

/**
 * Holds runs and their statuses.
 *
 * Contract: `get` resolves `undefined` for an unknown id; `save` replaces the run with
 * the same `runId` (upsert). `transition` changes a run's status as one compare-and-set:
 * it applies only when the current status may move to the new one (core
 * `canTransition`, `domain/run.ts`), atomically with respect to every other
 * `transition` of that run. Final statuses have no way out, so of two workers racing to
 * finish the same run (a worker thought dead that was only slow) exactly one applies,
 * and only that one notifies (core `RunLifecycle`). Every call rejects only when the
 * store is unreachable. The contract suite is `runStoreContract` in `@svc/core/testing`.
 */
export interface RunStore {
  /** @returns the run, or `undefined` when there is none with that id. */
  get(runId: string): Promise<Run | undefined>;
  /** Stores the run, replacing any earlier version with the same `runId`. */
  save(run: Run): Promise<void>;
  /**
   * Applies `change` when the run's current status allows it: status `change.to`,
   * `updatedAt` `change.at`, one more attempt with `countAttempt`, `failureReason` set to
   * `change.failureReason` or removed (core `changed`). Nothing else of the run changes.
   * @returns whether it applied, and the run after (or as found; `undefined` for an
   * unknown id, which creates nothing).
   */
  transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome>;
  /**
   * Records `progress` as the run's `progress` (replacing the last), only while the run is
   * `running` (core `withProgress`), atomically with respect to `transition`. Nothing else
   * of the run changes, not even `updatedAt` (the time of the last status change).
   * @returns true when recorded; false for an unknown run or one not `running`.
   */
  reportProgress(runId: string, progress: RunProgress): Promise<boolean>;
}
