import type { RunRequest } from './run-request.js';

/**
 * Statuses of a run. `queued` is reported right after the start (docs/api-spec.md "States and
 * transitions"); the others are docs/CONTRACT.md "Runs".
 */
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

/** One run status. See {@link RUN_STATUSES}. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses a run never leaves. */
export const FINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * The allowed transitions: queued → running | cancelled | failed (given up before it
 * ever ran, e.g. stalled too often); running → succeeded | failed | queued (a retry after
 * a lost worker) | cancelled | running (a new attempt). Final statuses have none.
 */
const TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ['running', 'cancelled', 'failed'],
  running: ['succeeded', 'failed', 'queued', 'cancelled', 'running'],
  succeeded: [],
  failed: [],
  cancelled: [],
};

/** True when a run may move from `from` to `to`. */
export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/**
 * An agent run. Source: docs/api-spec.md "Run-start result"; docs/CONTRACT.md "Runs" (the shape
 * answered at `status_url`).
 */
export interface Run {
  /** Identifier of the run (UUID). */
  readonly runId: string;
  /** Identifier of the workflow run that carries it (UUID). */
  readonly workflowRunId: string;
  /** Agent the run belongs to. */
  readonly agentId: string;
  /** Account that started it; other accounts see 404. */
  readonly accountId: string;
  /** Current status. */
  readonly status: RunStatus;
  /** When the run was accepted. */
  readonly createdAt: Date;
  /** When its status last changed. */
  readonly updatedAt: Date;
  /** What the run was started with. */
  readonly request: RunRequest;
  /** Processing attempts so far (0 while never started). */
  readonly attempts: number;
  /** Safe, human-readable reason of a `failed` run. */
  readonly failureReason?: string;
}

/**
 * One status change of a run, as a worker makes it: the argument of `RunStore.transition`
 * (core `ports/run-store.ts`), applied only when {@link canTransition}`(current, to)`.
 */
export interface RunStatusChange {
  /** The status to move to. */
  readonly to: RunStatus;
  /** When the change happens; becomes `updatedAt`. */
  readonly at: Date;
  /** True to count one more processing attempt (a move to `running`). */
  readonly countAttempt?: boolean;
  /** Safe, human-readable reason of a `failed` run; any earlier reason is cleared when absent. */
  readonly failureReason?: string;
}

/**
 * The run after `change`, whether or not {@link canTransition} allows it (the caller
 * checks). Every store that builds the changed run in JavaScript uses this one, so that
 * stores agree; the Redis store does the same in its Lua script, and the run store
 * contract suite (`@svc/core/testing`) holds both to it.
 */
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
