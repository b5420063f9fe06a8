import type { JsonValue, Run, RunStatus } from '../domain/run.js';

/**
 * A run as answered by `GET {status_url}`.
 * Source: docs/CONTRACT.md "Runs" (`{run_id, workflow_run_id, agent_id, status, created_at,
 * updated_at, ...}`); times are RFC 3339 strings in UTC.
 */
export interface RunView {
  readonly run_id: string;
  readonly workflow_run_id: string;
  readonly agent_id: string;
  readonly status: RunStatus;
  readonly created_at: string;
  readonly updated_at: string;
  readonly status_url: string;
  readonly attempts: number;
  readonly failure_reason?: string;
  /** The last progress the processor reported (docs/decisions.md "Run progress and output"). */
  readonly progress?: { readonly percent?: number; readonly message?: string; readonly updated_at: string };
  /** What the processor returned with success (a JSON value). */
  readonly output?: JsonValue;
  /** When a cancel was first asked for (docs/CONTRACT.md "Runs lifecycle"); RFC 3339, UTC. */
  readonly cancel_requested_at?: string;
}

/** RFC 3986 §2.3 unreserved characters: what encodeURIComponent leaves as it is, less `!'()*`. */
const UNRESERVED = /^[A-Za-z0-9._~-]*$/u;

/** `{base_url}/api/v1/runs/{run_id}`. Source: docs/CONTRACT.md "Runs". */
export function statusUrlOf(baseUrl: string, runId: string): string {
  // An id of unreserved characters only (RFC 3986 §2.3: every generated run id, a UUID)
  // is its own encoding: the test costs less than encodeURIComponent (~2.3k instructions a
  // run start, callgrind).
  return `${baseUrl}/api/v1/runs/${UNRESERVED.test(runId) ? runId : encodeURIComponent(runId)}`;
}

/** Renders a run for the wire. */
export function viewOf(run: Run, baseUrl: string): RunView {
  return {
    run_id: run.runId,
    workflow_run_id: run.workflowRunId,
    agent_id: run.agentId,
    status: run.status,
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    status_url: statusUrlOf(baseUrl, run.runId),
    attempts: run.attempts,
    ...(run.failureReason !== undefined ? { failure_reason: run.failureReason } : {}),
    ...(run.progress !== undefined
      ? {
          progress: {
            ...(run.progress.percent !== undefined ? { percent: run.progress.percent } : {}),
            ...(run.progress.message !== undefined ? { message: run.progress.message } : {}),
            updated_at: run.progress.updatedAt.toISOString(),
          },
        }
      : {}),
    ...(run.output !== undefined ? { output: run.output } : {}),
    ...(run.cancelRequestedAt !== undefined ? { cancel_requested_at: run.cancelRequestedAt.toISOString() } : {}),
  };
}
