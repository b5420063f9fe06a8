/**
 * Same-work peer of the run start in memory, on Fastify: its built-in JSON body parser
 * (1 MiB `bodyLimit`, the default and the project's limit) and its ajv-backed route
 * schema validation of the core's `StartRunRequest` (the idiomatic fast path: the
 * validator is compiled at start-up and runs before the handler), with ajv set to refuse
 * unknown members and never coerce (Fastify's defaults would strip and coerce, which the
 * project refuses), and a response schema so the 202 body goes through
 * fast-json-stringify. Limits and queue as the Koa memory peer. `GET /livez` answers
 * 200. `node fastify-run-memory.js CONFIG_JSON`; stops on SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import { filesRunBodySchema, messageRunBodySchema, startRunBodySchema } from '@svc/core';
import Fastify from 'fastify';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { QueuedRun } from './koa-run-start.js';
import { BODY_LIMIT_BYTES, credentialLookup, problemBody, readPeerConfig, runMessage, serialised, setRateLimitHeaders, type Caller } from './shared.js';

const config = readPeerConfig();
const { credential, agent } = config.limits;
const credentialLimiter = new RateLimiterMemory({ points: credential.requests, duration: credential.window_seconds, keyPrefix: 'rl:credential' });
const agentLimiter = new RateLimiterMemory({ points: agent.requests, duration: agent.window_seconds, keyPrefix: 'rl:agent' });
const charge = serialised();
const authenticate = credentialLookup(config);
const agents = new Map(config.agents.map((a) => [a.id, a.accountId]));
const queue: QueuedRun[] = [];

const app = Fastify({
  bodyLimit: BODY_LIMIT_BYTES,
  keepAliveTimeout: 5_000,
  genReqId: () => randomUUID(),
  ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
});
app.addSchema(filesRunBodySchema);
app.addSchema(messageRunBodySchema);

const runAnswer = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: { run_id: { type: 'string' }, workflow_run_id: { type: 'string' }, status: { type: 'string' }, status_url: { type: 'string' }, message: { type: 'string' } },
    },
  },
} as const;

app.get('/livez', (_request, reply) => reply.send('ok'));

app.post<{ Params: { agent_id: string }; Body: { files?: unknown[] } }>(
  '/api/v1/agents/:agent_id/run',
  {
    schema: { body: startRunBodySchema, response: { 202: runAnswer } },
    onRequest: (request, reply, done) => {
      reply.header('X-Request-Id', request.id);
      const caller = authenticate(request.headers);
      if (caller === undefined) {
        void reply.code(401).type('application/problem+json').send(problemBody(401, 'invalid_credential', 'Unknown or missing API key.'));
        return;
      }
      (request as unknown as { caller: Caller }).caller = caller;
      done();
    },
  },
  async (request, reply) => {
    const { caller } = request as unknown as { caller: Caller };
    const agentId = request.params.agent_id;
    const visible = agents.get(agentId) === caller.accountId;
    const decision = await charge([
      { limiter: credentialLimiter, key: caller.keyId, limit: credential.requests },
      ...(visible ? [{ limiter: agentLimiter, key: agentId, limit: agent.requests }] : []),
    ]);
    setRateLimitHeaders(reply.raw, decision);
    if (!decision.allowed) return reply.code(429).type('application/problem+json').send(problemBody(429, 'rate_limited', 'Too many requests.'));
    if (!visible) return reply.code(404).type('application/problem+json').send(problemBody(404, 'not_found', 'The agent was not found.'));
    const runId = randomUUID();
    const workflowRunId = randomUUID();
    const statusUrl = `${config.baseUrl}/api/v1/runs/${runId}`;
    queue.push({ runId, workflowRunId, agentId, accountId: caller.accountId, body: request.body, createdAt: new Date().toISOString() });
    return reply
      .code(202)
      .header('Location', statusUrl)
      .send({ data: { run_id: runId, workflow_run_id: workflowRunId, status: 'queued', status_url: statusUrl, message: runMessage(request.body) } });
  },
);

await app.listen({ port: config.port, host: '127.0.0.1' });
process.once('SIGTERM', () => {
  void app.close().finally(() => process.exit(0));
});
