/**
 * The run start as one hand-written Koa middleware, shared by the Koa peers (memory and
 * Redis differ only in `charge` and `enqueue`): `POST /api/v1/agents/:agent_id/run`
 * matched by a regular expression, the credential looked up by digest, the JSON body
 * read with raw-body (1 MiB) and `JSON.parse`, validated by ajv against the core's
 * schema, both windows charged all or none, two `randomUUID()`s, the run enqueued,
 * `202` with the project's headers and body. `GET /livez` answers 200.
 */
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { PeerConfig } from '../../api-config.js';
import { bodyValidators, peerApp, problem, runMessage, setRateLimitHeaders, type Caller, type Decision } from './shared.js';

/** What the run start hands to the queue. */
export interface QueuedRun {
  readonly runId: string;
  readonly workflowRunId: string;
  readonly agentId: string;
  readonly accountId: string;
  readonly body: unknown;
  readonly createdAt: string;
}

/** How a Koa peer limits and enqueues. */
export interface RunStartDeps {
  /** Charges the credential's window, and the agent's when `agentId` is given, all or none. */
  charge(caller: Caller, agentId: string | undefined): Promise<Decision>;
  enqueue(run: QueuedRun): Promise<void> | void;
}

const RUN_PATH = /^\/api\/v1\/agents\/([^/]+)\/run$/u;

/** The Koa application of a run-start peer. */
export function runStartApp(config: PeerConfig, deps: RunStartDeps): Koa {
  const agents = new Map(config.agents.map((a) => [a.id, a.accountId]));
  const { startRun: validate } = bodyValidators();
  return peerApp(config, RUN_PATH, async (ctx, match, caller, body) => {
    const valid = validate(body);
    const agentId = decodeURIComponent(match[1] ?? '');
    const visible = valid && agents.get(agentId) === caller.accountId;
    const decision = await deps.charge(caller, visible ? agentId : undefined);
    setRateLimitHeaders(ctx.res, decision);
    if (!decision.allowed) return problem(ctx, 429, 'rate_limited', 'Too many requests.');
    if (!valid) return problem(ctx, 400, 'validation_failed', 'The body does not match the schema.');
    if (!visible) return problem(ctx, 404, 'not_found', 'The agent was not found.');
    const runId = randomUUID();
    const workflowRunId = randomUUID();
    const statusUrl = `${config.baseUrl}/api/v1/runs/${runId}`;
    await deps.enqueue({ runId, workflowRunId, agentId, accountId: caller.accountId, body, createdAt: new Date().toISOString() });
    ctx.status = 202;
    ctx.set('Location', statusUrl);
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ data: { run_id: runId, workflow_run_id: workflowRunId, status: 'queued', status_url: statusUrl, message: runMessage(body as { files?: unknown[] }) } });
  });
}
