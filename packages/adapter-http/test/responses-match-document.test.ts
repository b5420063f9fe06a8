import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { DependencyUnavailableError } from '@svc/core';
import { aFileReference } from '@svc/core/testing';
import { expectProblem } from '../../../tools/test-support/http.js';
import {
  anInsert,
  anUpdate,
  apiKey,
  bearer,
  call,
  egressRecordsPath,
  FOREIGN_AGENT_ID,
  FOREIGN_CONNECTION_ID,
  PG_CONNECTION_ID,
  recordsPath,
  runPath,
  SECRETS,
  startApps,
  type Answer,
  type RunningApps,
} from './support/harness.js';
import { OpenApiChecker } from './support/openapi-check.js';

const RECORDS = '/api/v1/connections/{connection_id}/records';
const EGRESS_RECORDS = '/v1/connections/{connection_id}/records';
const RUN = '/api/v1/agents/{agent_id}/run';
const RUN_STATUS = '/api/v1/runs/{run_id}';
const AGENTS = '/api/v1/agents';
const AGENT = '/api/v1/agents/{agent_id}';
const CONNECTIONS = '/api/v1/connections';
const CONNECTION = '/api/v1/connections/{connection_id}';
const RUN_LIST = '/api/v1/runs';

const key = apiKey(SECRETS.keyA);
const json = { 'content-type': 'application/json' };

/** One request whose real answer must be a documented response. */
interface Case {
  readonly name: string;
  readonly path: string;
  readonly method: string;
  readonly status: number;
  readonly code?: string;
  readonly send: (apps: RunningApps) => Promise<Answer>;
}

const cases: Case[] = [
  { name: 'the index', path: '/api/v1', method: 'GET', status: 200, send: (a) => call(a.url, 'GET', '/api/v1') },
  {
    name: 'the index, not modified',
    path: '/api/v1',
    method: 'GET',
    status: 304,
    send: async (a) => {
      const etag = (await call(a.url, 'GET', '/api/v1')).headers.get('etag') ?? '';
      return call(a.url, 'GET', '/api/v1', { headers: { 'if-none-match': etag } });
    },
  },
  // Row insert
  { name: 'insert', path: RECORDS, method: 'POST', status: 201, send: (a) => call(a.url, 'POST', recordsPath(), { headers: key, json: anInsert() }) },
  {
    name: 'insert, invalid body',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'validation_failed',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: key, json: { entity: 'orders', values: {} } }),
  },
  {
    name: 'insert, malformed JSON',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'invalid_json',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json }, raw: '{"entity": ' }),
  },
  {
    name: 'insert, bad X-Svc-Egress',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'invalid_header',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: { ...key, 'x-svc-egress': 'maybe' }, json: anInsert() }),
  },
  {
    name: 'insert on postgresql',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'writes_not_supported',
    send: (a) => call(a.url, 'POST', recordsPath(PG_CONNECTION_ID), { headers: key, json: anInsert() }),
  },
  {
    name: 'insert, unknown table',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'unknown_entity',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: key, json: anInsert({ entity: 'dbo.nothing' }) }),
  },
  {
    name: 'insert, no credential',
    path: RECORDS,
    method: 'POST',
    status: 401,
    code: 'missing_credential',
    send: (a) => call(a.url, 'POST', recordsPath(), { json: anInsert() }),
  },
  {
    name: 'insert, foreign connection',
    path: RECORDS,
    method: 'POST',
    status: 404,
    code: 'not_found',
    send: (a) => call(a.url, 'POST', recordsPath(FOREIGN_CONNECTION_ID), { headers: key, json: anInsert() }),
  },
  {
    name: 'insert, body too large',
    path: RECORDS,
    method: 'POST',
    status: 413,
    code: 'payload_too_large',
    send: (a) =>
      call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json }, raw: JSON.stringify(anInsert({ values: { note: 'x'.repeat(1024 * 1024) } })) }),
  },
  // Request bodies and exact values (docs/CONTRACT.md "Request bodies and headers", "Exact values")
  {
    name: 'insert, gzip-coded body',
    path: RECORDS,
    method: 'POST',
    status: 201,
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json, 'content-encoding': 'gzip' }, raw: gzipSync(JSON.stringify(anInsert())) }),
  },
  {
    name: 'insert, gzip bomb',
    path: RECORDS,
    method: 'POST',
    status: 413,
    code: 'payload_too_large',
    send: (a) =>
      call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json, 'content-encoding': 'gzip' }, raw: gzipSync(Buffer.alloc(16 * 1024 * 1024)) }),
  },
  {
    name: 'insert, unsupported Content-Encoding',
    path: RECORDS,
    method: 'POST',
    status: 415,
    code: 'unsupported_media_type',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json, 'content-encoding': 'compress' }, raw: JSON.stringify(anInsert()) }),
  },
  {
    name: 'insert, member given twice',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'invalid_json',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json }, raw: '{"entity":"dbo.orders","values":{"qty":1,"qty":1}}' }),
  },
  {
    name: 'insert, number that cannot be written exactly',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'invalid_value',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json }, raw: '{"entity":"dbo.orders","values":{"qty":1e400}}' }),
  },
  {
    name: 'insert, more columns than parameters',
    path: RECORDS,
    method: 'POST',
    status: 400,
    code: 'validation_failed',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: key, json: anInsert({ values: Object.fromEntries(Array.from({ length: 2_101 }, (_, i) => [`c${i}`, i])) }) }),
  },
  {
    name: 'update, key_value that cannot be written exactly',
    path: RECORDS,
    method: 'PATCH',
    status: 400,
    code: 'invalid_value',
    send: (a) => call(a.url, 'PATCH', recordsPath(), { headers: { ...key, ...json }, raw: '{"entity":"dbo.orders","key_column":"id","key_value":123456789012345678901234567890123456789,"values":{"status":"x"}}' }),
  },
  {
    name: 'insert, text/plain',
    path: RECORDS,
    method: 'POST',
    status: 415,
    code: 'unsupported_media_type',
    send: (a) => call(a.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'text/plain' }, raw: JSON.stringify(anInsert()) }),
  },
  // Row update
  { name: 'update', path: RECORDS, method: 'PATCH', status: 200, send: (a) => call(a.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() }) },
  {
    name: 'update, ambiguous key',
    path: RECORDS,
    method: 'PATCH',
    status: 409,
    code: 'ambiguous_key',
    send: async (a) => {
      a.world.writer.defineTable('dbo.orders', ['id', 'sku', 'qty', 'note', 'status'], [{ id: 7 }, { id: 7 }]);
      return call(a.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate({ key_value: 7 }) });
    },
  },
  {
    name: 'update, missing key_value',
    path: RECORDS,
    method: 'PATCH',
    status: 400,
    code: 'validation_failed',
    send: (a) => call(a.url, 'PATCH', recordsPath(), { headers: key, json: { entity: 'dbo.orders', key_column: 'id', values: { qty: 1 } } }),
  },
  {
    name: 'update with an OAuth token',
    path: RECORDS,
    method: 'PATCH',
    status: 401,
    code: 'unsupported_credential',
    send: (a) => call(a.url, 'PATCH', recordsPath(), { headers: bearer(SECRETS.tokenWrite), json: anUpdate() }),
  },
  {
    name: 'update, unknown connection',
    path: RECORDS,
    method: 'PATCH',
    status: 404,
    code: 'not_found',
    send: (a) => call(a.url, 'PATCH', recordsPath('00000000-0000-4000-8000-000000000000'), { headers: key, json: anUpdate() }),
  },
  // Egress address
  {
    name: 'egress insert',
    path: EGRESS_RECORDS,
    method: 'POST',
    status: 201,
    send: (a) => call(a.egressUrl, 'POST', egressRecordsPath(), { headers: key, json: anInsert() }),
  },
  {
    name: 'egress update',
    path: EGRESS_RECORDS,
    method: 'PATCH',
    status: 200,
    send: (a) => call(a.egressUrl, 'PATCH', egressRecordsPath(), { headers: key, json: anUpdate() }),
  },
  {
    name: 'egress insert, invalid body',
    path: EGRESS_RECORDS,
    method: 'POST',
    status: 400,
    code: 'validation_failed',
    send: (a) => call(a.egressUrl, 'POST', egressRecordsPath(), { headers: key, json: { entity: 'dbo.orders' } }),
  },
  {
    name: 'egress insert, invalid credential',
    path: EGRESS_RECORDS,
    method: 'POST',
    status: 401,
    code: 'invalid_credential',
    send: (a) => call(a.egressUrl, 'POST', egressRecordsPath(), { headers: apiKey('svc-not-a-known-key'), json: anInsert() }),
  },
  {
    name: 'egress insert, foreign connection',
    path: EGRESS_RECORDS,
    method: 'POST',
    status: 404,
    code: 'not_found',
    send: (a) => call(a.egressUrl, 'POST', egressRecordsPath(FOREIGN_CONNECTION_ID), { headers: key, json: anInsert() }),
  },
  // Run creation
  {
    name: 'run start with a message',
    path: RUN,
    method: 'POST',
    status: 202,
    send: (a) => call(a.url, 'POST', runPath(), { headers: key, json: { message: 'Summarise' } }),
  },
  {
    name: 'run start with files and an OAuth token',
    path: RUN,
    method: 'POST',
    status: 202,
    send: (a) => call(a.url, 'POST', runPath(), { headers: bearer(SECRETS.tokenWrite), json: { files: [aFileReference()] } }),
  },
  {
    name: 'run start, no files',
    path: RUN,
    method: 'POST',
    status: 400,
    code: 'validation_failed',
    send: (a) => call(a.url, 'POST', runPath(), { headers: key, json: { files: [] } }),
  },
  {
    name: 'run start, expired token',
    path: RUN,
    method: 'POST',
    status: 401,
    code: 'expired_credential',
    send: (a) => call(a.url, 'POST', runPath(), { headers: bearer(SECRETS.tokenExpired), json: { message: 'hi' } }),
  },
  {
    name: 'run start, token without runs:write',
    path: RUN,
    method: 'POST',
    status: 403,
    code: 'insufficient_scope',
    send: (a) => call(a.url, 'POST', runPath(), { headers: bearer(SECRETS.tokenNoScope), json: { message: 'hi' } }),
  },
  {
    name: 'run start, foreign agent',
    path: RUN,
    method: 'POST',
    status: 404,
    code: 'not_found',
    send: (a) => call(a.url, 'POST', runPath(FOREIGN_AGENT_ID), { headers: key, json: { message: 'hi' } }),
  },
  {
    name: 'run start, body too large',
    path: RUN,
    method: 'POST',
    status: 413,
    code: 'payload_too_large',
    send: (a) => call(a.url, 'POST', runPath(), { headers: { ...key, ...json }, raw: JSON.stringify({ message: 'x'.repeat(1024 * 1024 + 1) }) }),
  },
  {
    name: 'run start, form body',
    path: RUN,
    method: 'POST',
    status: 415,
    code: 'unsupported_media_type',
    send: (a) => call(a.url, 'POST', runPath(), { headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' }, raw: 'message=hi' }),
  },
  // Run status
  {
    name: 'run status',
    path: RUN_STATUS,
    method: 'GET',
    status: 200,
    send: async (a) => {
      const started = await call(a.url, 'POST', runPath(), { headers: key, json: { message: 'hi' } });
      const runId = (started.body as { data: { run_id: string } }).data.run_id;
      return call(a.url, 'GET', `/api/v1/runs/${runId}`, { headers: bearer(SECRETS.tokenWrite) });
    },
  },
  {
    name: 'run status, no credential',
    path: RUN_STATUS,
    method: 'GET',
    status: 401,
    code: 'missing_credential',
    send: (a) => call(a.url, 'GET', '/api/v1/runs/00000000-0000-4000-8000-000000000001'),
  },
  {
    name: 'run status, token without runs:read',
    path: RUN_STATUS,
    method: 'GET',
    status: 403,
    code: 'insufficient_scope',
    send: (a) => call(a.url, 'GET', '/api/v1/runs/00000000-0000-4000-8000-000000000001', { headers: bearer(SECRETS.tokenNoScope) }),
  },
  {
    name: 'run status, unknown run',
    path: RUN_STATUS,
    method: 'GET',
    status: 404,
    code: 'not_found',
    send: (a) => call(a.url, 'GET', '/api/v1/runs/no-such-run', { headers: key }),
  },
  // Discovery of agents and connections
  { name: 'agents, a page with a next page (Link)', path: AGENTS, method: 'GET', status: 200, send: (a) => call(a.url, 'GET', '/api/v1/agents?limit=1', { headers: key }) },
  { name: 'agents, the last page (no Link)', path: AGENTS, method: 'GET', status: 200, send: (a) => call(a.url, 'GET', '/api/v1/agents', { headers: key }) },
  { name: 'agents, bad limit', path: AGENTS, method: 'GET', status: 400, code: 'validation_failed', send: (a) => call(a.url, 'GET', '/api/v1/agents?limit=0', { headers: key }) },
  { name: 'agents with an OAuth token', path: AGENTS, method: 'GET', status: 401, code: 'unsupported_credential', send: (a) => call(a.url, 'GET', '/api/v1/agents', { headers: bearer(SECRETS.tokenWrite) }) },
  { name: 'an agent', path: AGENT, method: 'GET', status: 200, send: (a) => call(a.url, 'GET', '/api/v1/agents/agent_demo', { headers: key }) },
  { name: 'an agent, foreign', path: AGENT, method: 'GET', status: 404, code: 'not_found', send: (a) => call(a.url, 'GET', `/api/v1/agents/${FOREIGN_AGENT_ID}`, { headers: key }) },
  { name: 'connections, a page with a next page (Link)', path: CONNECTIONS, method: 'GET', status: 200, send: (a) => call(a.url, 'GET', '/api/v1/connections?limit=1', { headers: key }) },
  { name: 'connections, the last page (no Link)', path: CONNECTIONS, method: 'GET', status: 200, send: (a) => call(a.url, 'GET', '/api/v1/connections', { headers: key }) },
  { name: 'connections, bad cursor', path: CONNECTIONS, method: 'GET', status: 400, code: 'invalid_cursor', send: (a) => call(a.url, 'GET', '/api/v1/connections?cursor=x', { headers: key }) },
  { name: 'a connection', path: CONNECTION, method: 'GET', status: 200, send: (a) => call(a.url, 'GET', `/api/v1/connections/${PG_CONNECTION_ID}`, { headers: key }) },
  { name: 'a connection, foreign', path: CONNECTION, method: 'GET', status: 404, code: 'not_found', send: (a) => call(a.url, 'GET', `/api/v1/connections/${FOREIGN_CONNECTION_ID}`, { headers: key }) },
  { name: 'a connection, no credential', path: CONNECTION, method: 'GET', status: 401, code: 'missing_credential', send: (a) => call(a.url, 'GET', `/api/v1/connections/${FOREIGN_CONNECTION_ID}`) },
  // Run list
  {
    name: 'run list, a page with Link: rel="next"',
    path: RUN_LIST,
    method: 'GET',
    status: 200,
    send: async (a) => {
      for (const message of ['one', 'two']) await call(a.url, 'POST', runPath(), { headers: key, json: { message } });
      const answer = await call(a.url, 'GET', '/api/v1/runs?limit=1', { headers: bearer(SECRETS.tokenWrite) });
      expect(answer.headers.get('link')).to.match(/; rel="next"$/u);
      return answer;
    },
  },
  {
    name: 'run list, the last page (no Link)',
    path: RUN_LIST,
    method: 'GET',
    status: 200,
    send: (a) => call(a.url, 'GET', '/api/v1/runs?status=cancelled', { headers: key }),
  },
  {
    name: 'run list, bad limit',
    path: RUN_LIST,
    method: 'GET',
    status: 400,
    code: 'validation_failed',
    send: (a) => call(a.url, 'GET', '/api/v1/runs?limit=0', { headers: key }),
  },
  {
    name: 'run list, no credential',
    path: RUN_LIST,
    method: 'GET',
    status: 401,
    code: 'missing_credential',
    send: (a) => call(a.url, 'GET', '/api/v1/runs'),
  },
  {
    name: 'run list, token without runs:read',
    path: RUN_LIST,
    method: 'GET',
    status: 403,
    code: 'insufficient_scope',
    send: (a) => call(a.url, 'GET', '/api/v1/runs', { headers: bearer(SECRETS.tokenNoScope) }),
  },
];

describe('adapter-http: real answers match the OpenAPI document', function () {
  let apps: RunningApps;
  let checker: OpenApiChecker;
  beforeEach(async function () {
    apps = await startApps();
    checker = OpenApiChecker.fromYaml((await call(apps.url, 'GET', '/openapi.yaml')).text);
  });
  afterEach(async function () {
    await apps.close();
  });

  for (const c of cases) {
    it(`${c.method} ${c.path} → ${c.status}${c.code ? ` ${c.code}` : ''}: ${c.name}`, async function () {
      const answer = await c.send(apps);
      expect(answer.status, answer.text).to.equal(c.status);
      if (c.code !== undefined) expectProblem(answer, c.status, c.code);
      checker.expectDocumented(c.path, c.method, answer);
    });
  }

  it('429 on the row insert and on run creation: documented, with all seven headers', async function () {
    const limited = await startApps({ limits: { credential: { limit: 2, windowSeconds: 60 }, agent: { limit: 1, windowSeconds: 60 } } });
    try {
      const doc = OpenApiChecker.fromYaml((await call(limited.url, 'GET', '/openapi.yaml')).text);
      // Agent limit first (1 / 60 s): the second start is refused; with another key, so
      // the credential windows stay apart.
      expect((await call(limited.url, 'POST', runPath(), { headers: apiKey(SECRETS.keyA2), json: { message: 'a' } })).status).to.equal(202);
      const runRefused = await call(limited.url, 'POST', runPath(), { headers: apiKey(SECRETS.keyA2), json: { message: 'b' } });
      expectProblem(runRefused, 429, 'rate_limited');
      doc.expectDocumented(RUN, 'POST', runRefused);
      for (let i = 0; i < 2; i += 1) {
        expect((await call(limited.url, 'POST', recordsPath(), { headers: key, json: anInsert({ values: { id: 10 + i } }) })).status).to.equal(201);
      }
      const insertRefused = await call(limited.url, 'POST', recordsPath(), { headers: key, json: anInsert() });
      expectProblem(insertRefused, 429, 'rate_limited');
      doc.expectDocumented(RECORDS, 'POST', insertRefused);
    } finally {
      await limited.close();
    }
  });

  it('405, 404 of an unknown path, 500 and 503 bodies validate against the Problem schema', async function () {
    const failing = await startApps({
      override: () => ({
        insertRecord: { execute: () => Promise.reject(new Error('boom')) },
        startRun: { execute: () => Promise.reject(new DependencyUnavailableError('run_queue')) },
      }),
    });
    try {
      const answers = [
        expectProblemAnd(await call(failing.url, 'DELETE', recordsPath()), 405, 'method_not_allowed'),
        expectProblemAnd(await call(failing.url, 'GET', '/api/v2'), 404, 'not_found'),
        expectProblemAnd(await call(failing.url, 'POST', recordsPath(), { headers: key, json: anInsert() }), 500, 'internal_error'),
        expectProblemAnd(await call(failing.url, 'POST', runPath(), { headers: key, json: { message: 'x' } }), 503, 'service_unavailable'),
      ];
      for (const a of answers) checker.expectSchema('Problem', a.body);
      // 503 is documented on run creation, with the headers it really has.
      checker.expectDocumented(RUN, 'POST', answers[3] as Answer);
    } finally {
      await failing.close();
    }
  });

  it('documents a 503 with Retry-After on every authenticated operation (each charges the rate limiter, which may be Redis)', function () {
    for (const [path, method] of [
      [RECORDS, 'post'],
      [RECORDS, 'patch'],
      [RUN, 'post'],
      [RUN_STATUS, 'get'],
      [AGENTS, 'get'],
      [AGENT, 'get'],
      [CONNECTIONS, 'get'],
      [CONNECTION, 'get'],
      [RUN_LIST, 'get'],
      [EGRESS_RECORDS, 'post'],
      [EGRESS_RECORDS, 'patch'],
    ] as const) {
      const responses = checker.operation(path, method)['responses'] as Record<string, unknown>;
      expect(responses, `${method} ${path}`).to.have.property('503');
    }
    // ...with the Retry-After header it is sent with.
    const unavailable = (checker.doc['components'] as { responses: Record<string, { headers: Record<string, unknown> }> }).responses['ServiceUnavailable'];
    expect(unavailable?.headers).to.have.property('Retry-After');
  });
});

function expectProblemAnd(answer: Answer, status: number, code: string): Answer {
  expectProblem(answer, status, code);
  return answer;
}
