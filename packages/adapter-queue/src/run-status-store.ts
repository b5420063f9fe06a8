import type { Run, RunStatus, RunStore } from '@svc/core';
import { canTransition, InMemoryRunStore } from '@svc/core';

/**
 * One status change of a run, as a worker makes it.
 * Source: core `domain/run.ts` (statuses and allowed transitions).
 */
export interface RunStatusChange {
  /** The status to move to; applied only when core `canTransition(current, to)`. */
  readonly to: RunStatus;
  /** When the change happens; becomes `updatedAt`. */
  readonly at: Date;
  /** True to count one more processing attempt (the move to `running`). */
  readonly countAttempt?: boolean;
  /** Safe, human-readable reason of a `failed` run; any earlier reason is cleared when absent. */
  readonly failureReason?: string;
}

/**
 * What {@link RunStatusStore.transition} did: `applied` with the changed run, or not
 * applied with the run as it is (`undefined` when there is no run with that id).
 */
export type TransitionOutcome = { readonly applied: true; readonly run: Run } | { readonly applied: false; readonly run: Run | undefined };

/**
 * A core {@link RunStore} that can also change a run's status as one compare-and-set:
 * the change applies only when the current status may move to the new one (core
 * `canTransition`). Final statuses have no way out, so of two workers racing to finish
 * the same run (a worker thought dead that was only slow) exactly one applies, and only
 * that one notifies.
 */
export interface RunStatusStore extends RunStore {
  /**
   * Applies `change` when the run's current status allows it.
   * @returns whether it applied, and the run after (or as found).
   * @throws when the store is unreachable.
   */
  transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome>;
}

/** The run after `change`; shared by the store implementations so that they agree. */
export function changed(run: Run, change: RunStatusChange): Run {
  const { failureReason: _dropped, ...rest } = run;
  return {
    ...rest,
    status: change.to,
    updatedAt: change.at,
    attempts: run.attempts + (change.countAttempt === true ? 1 : 0),
    ...(change.failureReason !== undefined ? { failureReason: change.failureReason } : {}),
  };
}

/**
 * Core's {@link InMemoryRunStore} with {@link RunStatusStore.transition}, so that core's
 * `InMemoryRunQueue` can record into it (it needs an `InMemoryRunStore`) and the
 * in-process worker can change statuses. The read and the write of a transition are
 * two calls that each answer at once; no other transition of the same run can come in
 * between because one in-process worker handles a run at a time, and the queue never
 * hands out a run id twice.
 */
export class InMemoryRunStatusStore extends InMemoryRunStore implements RunStatusStore {
  /** See {@link RunStatusStore.transition}; never rejects. */
  async transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome> {
    const run = await this.get(runId);
    if (run === undefined || !canTransition(run.status, change.to)) return { applied: false, run };
    const next = changed(run, change);
    await this.save(next);
    return { applied: true, run: next };
  }
}
