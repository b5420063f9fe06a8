import type { Run, RunRequest, RunStatus } from '@svc/core';
import { RUN_STATUSES } from '@svc/core';

/**
 * The fields of a run's Redis hash. Status, times, attempts and failure reason are
 * fields of their own, so that a status change rewrites only them (in one Lua script,
 * without decoding JSON in Lua); what never changes (ids, account, agent, creation time
 * and the request) is one JSON field, `run`. `v` is the layout version.
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
  };
  const args = ['v', LAYOUT, 'run', JSON.stringify(fixed), 'status', run.status, 'updatedAt', run.updatedAt.toISOString(), 'attempts', String(run.attempts)];
  if (run.failureReason !== undefined) args.push('failureReason', run.failureReason);
  return args;
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
  let fixed: { runId: string; workflowRunId: string; agentId: string; accountId: string; createdAt: string; request: RunRequest };
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
    ...(hash.failureReason !== undefined ? { failureReason: hash.failureReason } : {}),
  };
}

/** A flat `HGETALL`-style reply (field, value, field, value, ...) as an object. */
export function hashFromPairs(pairs: readonly unknown[]): RunHash {
  const hash: RunHash = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) hash[String(pairs[i])] = String(pairs[i + 1]);
  return hash;
}
