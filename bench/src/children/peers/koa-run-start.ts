/**
 * The run start as one hand-written Koa middleware, shared by the Koa peers (memory and
 * Redis differ only in `charge` and `enqueue`): `POST /api/v1/agents/:agent_id/run`
 * matched by a regular expression, the credential looked up by digest, the JSON body
 * read with raw-body (1 MiB) and `JSON.parse`, validated by ajv against the core's
 * schema, both windows charged all or none, two `randomUUID()`s, the run enqueued,
 * `202` with the project's headers and body. `GET /livez` answers 200.
 */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import getRawBody from 'raw-body';
import type { PeerConfig } from '../../api-config.js';
import { BODY_LIMIT_BYTES, bodyValidators, credentialLookup, problemBody, runMessage, setRateLimitHeaders, type Caller, type Decision } from './shared.js';

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
  const authenticate = credentialLookup(config);
  const agents = new Map(config.agents.map((a) => [a.id, a.accountId]));
  const { startRun: validate } = bodyValidators();
  const app = new Koa();
  const problem = (ctx: Koa.Context, status: number, code: string, detail: string) => {
    ctx.status = status;
    ctx.type = 'application/problem+json';
    ctx.body = problemBody(status, code, detail);
  };
  app.use(async (ctx) => {
    if (ctx.method === 'GET' && ctx.path === '/livez') {
      ctx.body = 'ok';
      return;
    }
    const match = ctx.method === 'POST' ? RUN_PATH.exec(ctx.path) : null;
    if (match === null) return problem(ctx, 404, 'not_found', 'No such route.');
    ctx.set('X-Request-Id', randomUUID());
    const caller = authenticate(ctx.headers);
    if (caller === undefined) return problem(ctx, 401, 'invalid_credential', 'Unknown or missing API key.');
    if (ctx.request.is('application/json') === false) return problem(ctx, 415, 'unsupported_media_type', 'Send application/json.');
    let body: unknown;
    try {
      const length = ctx.get('content-length');
      body = JSON.parse(await getRawBody(ctx.req, { limit: BODY_LIMIT_BYTES, encoding: 'utf8', ...(length !== '' ? { length } : {}) }));
    } catch (error) {
      const tooLarge = (error as { type?: unknown }).type === 'entity.too.large';
      return problem(ctx, tooLarge ? 413 : 400, tooLarge ? 'payload_too_large' : 'invalid_json', 'The body is not JSON of at most 1 MiB.');
    }
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
  return app;
}
