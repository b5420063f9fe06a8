import type { JsonValue, Run, RunProgress, RunRequest, RunStatus } from '@svc/core';
import { RUN_STATUSES } from '@svc/core';

/**
 * The fields of a run's Redis hash. Status, times, attempts and failure reason are
 * fields of their own, so that a status change rewrites only them (in one Lua script,
 * without decoding JSON in Lua); what never changes (ids, account, agent, creation time,
 * the request, and the id of the request that started it) is one JSON field, `run`;
 * the last progress report (`progress`) and the output of a succeeded run (`output`)
 * are JSON fields of their own, written whole; `cancelRequestedAt` (ISO 8601) is set
 * once by a cancel request (core `RunStore.requestCancel`). A run's event (core
 * `RunEvent`) is the same fields, as one entry of its stream.
 * `v` is the layout version.
 */
export type RunHash = Record<string, string>;

/** Layout version written in field `v`. */
const LAYOUT = '1';

/** The hash fields of `run`, as `HSET` arguments: field, value, field, value, ... */
export function hashArgs(run: Run): string[] {
  const fixed = {
    runId: run.runId,
    workflowRunId: run.workflowRunId,
    agentId: run.agentId,
    accountId: run.accountId,
    createdAt: run.createdAt.toISOString(),
    request: run.request,
    ...(run.requestId !== undefined ? { requestId: run.requestId } : {}),
  };
  const args = ['v', LAYOUT, 'run', JSON.stringify(fixed), 'status', run.status, 'updatedAt', run.updatedAt.toISOString(), 'attempts', String(run.attempts)];
  if (run.failureReason !== undefined) args.push('failureReason', run.failureReason);
  if (run.progress !== undefined) args.push('progress', progressJson(run.progress));
  if (run.output !== undefined) args.push('output', JSON.stringify(run.output));
  if (run.cancelRequestedAt !== undefined) args.push('cancelRequestedAt', run.cancelRequestedAt.toISOString());
  return args;
}

/** The `progress` field of a run's hash: `{percent?, message?, updatedAt}` as JSON. */
export function progressJson(progress: RunProgress): string {
  return JSON.stringify({ ...progress, updatedAt: progress.updatedAt.toISOString() });
}

function progressFrom(json: string): RunProgress {
  const parsed = JSON.parse(json) as { percent?: number; message?: string; updatedAt: string };
  return { ...parsed, updatedAt: new Date(parsed.updatedAt) };
}

/**
 * The run held in a hash; `undefined` for an empty hash (no such key).
 * @throws Error when the hash is not a run record of a known layout (a bug or a
 * foreign key under the prefix); the message names the run id only.
 */
export function runFromHash(runId: string, hash: RunHash): Run | undefined {
  if (Object.keys(hash).length === 0) return undefined;
  const corrupt = (): Error => new Error(`run record ${runId} is not a valid layout-${LAYOUT} record`);
  if (hash.v !== LAYOUT || hash.run === undefined || hash.updatedAt === undefined || hash.attempts === undefined) throw corrupt();
  const status = hash.status as RunStatus | undefined;
  if (status === undefined || !RUN_STATUSES.includes(status)) throw corrupt();
  let fixed: { runId: string; workflowRunId: string; agentId: string; accountId: string; createdAt: string; request: RunRequest; requestId?: unknown };
  try {
    fixed = JSON.parse(hash.run) as typeof fixed;
  } catch {
    throw corrupt();
  }
  const attempts = Number(hash.attempts);
  if (!Number.isInteger(attempts) || typeof fixed.runId !== 'string') throw corrupt();
  return {
    runId: fixed.runId,
    workflowRunId: fixed.workflowRunId,
    agentId: fixed.agentId,
    accountId: fixed.accountId,
    status,
    createdAt: new Date(fixed.createdAt),
    updatedAt: new Date(hash.updatedAt),
    request: fixed.request,
    attempts,
    ...(typeof fixed.requestId === 'string' ? { requestId: fixed.requestId } : {}),
    ...(hash.failureReason !== undefined ? { failureReason: hash.failureReason } : {}),
    ...(hash.progress !== undefined ? { progress: parseOr(hash.progress, progressFrom, corrupt) } : {}),
    ...(hash.output !== undefined ? { output: parseOr(hash.output, (j) => JSON.parse(j) as JsonValue, corrupt) } : {}),
    ...(hash.cancelRequestedAt !== undefined ? { cancelRequestedAt: new Date(hash.cancelRequestedAt) } : {}),
  };
}

function parseOr<T>(json: string, parse: (json: string) => T, corrupt: () => Error): T {
  try {
    return parse(json);
  } catch {
    throw corrupt();
  }
}

/** A flat `HGETALL`-style reply (field, value, field, value, ...) as an object. */
export function hashFromPairs(pairs: readonly unknown[]): RunHash {
  const hash: RunHash = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) hash[String(pairs[i])] = String(pairs[i + 1]);
  return hash;
}
