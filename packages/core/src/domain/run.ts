import type { RunRequest } from './run-request.js';

/**
 * Statuses of a run. `queued` is reported right after the start (api-spec.md "States and
 * transitions"); the others are CONTRACT.md "Runs".
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
 * An agent run. Source: api-spec.md "Run-start result"; CONTRACT.md "Runs" (the shape
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
