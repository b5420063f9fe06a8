import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildOpenApiDocument, createHttpApp, handleClientErrors } from '@svc/adapter-http';
import { DEFAULT_RATE_LIMITS, DependencyUnavailableError, domainError, err, type RecordWriter, type WriteError } from '@svc/core';
import { aFileReference, eventually, RecordingLogger } from '@svc/core/testing';
import { expect } from 'chai';
import { rawExchange } from '../../../tools/test-support/raw-http.js';
import {
  anInsert,
  anUpdate,
  apiKey,
  BASE_URL,
  bearer,
  call,
  EGRESS_URL,
  egressRecordsPath,
  FOREIGN_AGENT_ID,
  PG_CONNECTION_ID,
  recordsPath,
  runPath,
  SECRETS,
  startApps,
  type AppOptions,
  type RunningApps,
} from './support/harness.js';
import { OBSERVED_ANSWERS, type ObservedAnswer } from './support/observed-answers.js';
import { OpenApiChecker } from './support/openapi-check.js';

type Obj = Record<string, unknown>;

/**
 * The document and its operations, as the server builds it (statuses and examples do not
 * depend on the configured addresses or limits).
 */
const DOC = buildOpenApiDocument({ baseUrl: BASE_URL, egressUrl: EGRESS_URL, rateLimits: DEFAULT_RATE_LIMITS }) as Obj;
const components = (kind: string): Obj => ((DOC['components'] as Obj)[kind] ?? {}) as Obj;
const deref = (kind: string, node: unknown): Obj => {
  const ref = (node as Obj)['$ref'];
  return (typeof ref === 'string' ? components(kind)[ref.slice(`#/components/${kind}/`.length)] : node) as Obj;
};

interface Operation {
  readonly id: string;
  readonly listener: 'main' | 'egress';
  readonly method: string;
  readonly path: RegExp;
  readonly op: Obj;
}

// Paths match as the router matches them: case-insensitively, with a trailing slash.
const OPERATIONS: Operation[] = Object.entries(DOC['paths'] as Record<string, Obj>).flatMap(([template, item]) =>
  ['get', 'post', 'patch'].flatMap((method) => {
    const op = item[method] as Obj | undefined;
    if (op === undefined) return [];
    const path = new RegExp(`^${template.replace(/[.]/gu, '\\.').replace(/\{[^}]+\}/gu, '[^/]+')}/?$`, 'iu');
    return [{ id: String(op['operationId']), listener: item['servers'] === undefined ? 'main' : 'egress', method: method.toUpperCase(), path, op } as Operation];
  }),
);

/** The documented operation an answer belongs to (`HEAD` is served as `GET`); none for 404 of an unknown path, 405, `OPTIONS`, health checks. */
function operationOf(answer: ObservedAnswer): Operation | undefined {
  const method = answer.method === 'HEAD' ? 'GET' : answer.method;
  return OPERATIONS.find((o) => o.listener === answer.listener && o.method === method && o.path.test(answer.path));
}

/** The codes the documented response allows (`Problem` narrowed by `allOf`), or undefined when not a problem response. */
function documentedCodes(response: Obj): readonly string[] | undefined {
  const schema = ((response['content'] as Obj | undefined)?.['application/problem+json'] as Obj | undefined)?.['schema'] as Obj | undefined;
  const narrowed = (schema?.['allOf'] as Obj[] | undefined)?.[1];
  return ((narrowed?.['properties'] as Obj | undefined)?.['code'] as Obj | undefined)?.['enum'] as string[] | undefined;
}

/** The keys of a JSON value, recursively (arrays by their first element): what a client's types see. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (value === null || typeof value !== 'object') return '*';
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, shape((value as Obj)[key])]));
}

/** Shapes compare equal where both arrays have an element (an empty list has the keys of any). */
function sameShape(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === 0 || b.length === 0 || sameShape(a[0], b[0]);
  if (a === '*' || b === '*' || a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameShape((a as Obj)[k], (b as Obj)[k]));
}

/** One example of the document: where it is, its value, and the response it illustrates. */
interface Example {
  readonly where: string;
  readonly operation: string;
  readonly status: string;
  readonly mediaType: string;
  readonly schema: unknown;
  readonly value: unknown;
}

function examplesOf(content: Obj | undefined, where: string, operation: string, status: string): Example[] {
  return Object.entries(content ?? {}).flatMap(([mediaType, media]) =>
    Object.entries(((media as Obj)['examples'] ?? {}) as Obj).map(([name, example]) => ({
      where: `${where} ${mediaType} example ${name}`,
      operation,
      status,
      mediaType,
      schema: (media as Obj)['schema'],
      value: deref('examples', example)['value'],
    })),
  );
}

const RESPONSE_EXAMPLES: Example[] = OPERATIONS.flatMap((o) =>
  Object.entries(o.op['responses'] as Obj).flatMap(([status, node]) => examplesOf(deref('responses', node)['content'] as Obj | undefined, `${o.id} ${status}`, o.id, status)),
);

// Answers the MCP door writes (adapter-mcp, the SDK) are not this package's: the tests here
// plug in a recording door, whose answers are no model for the examples.
const DOOR_ANSWERS = new Set(['callMcp 200', 'callMcp 202']);

/** Answers of Node's HTTP parser (`handleClientErrors`), which never reach an app: collected by the driver below. */
const PARSER_ANSWERS: { status: number; body: unknown }[] = [];

/**
 * Runs after every test of this mocha run: each answer the apps of `startApps` gave in any
 * adapter-http test (the driver below and every other file) must be a documented status
 * of its operation, its problem `code` one that status lists; and each example of the
 * document must have the keys of a real answer of its operation and status (a problem
 * example: of its status and `code`; problem bodies are built by one function,
 * `problemOf`, whatever the operation, and parser refusals come before any operation).
 */
after('every answer the adapter-http tests saw is documented; every example has the shape of a real answer', function () {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const answer of OBSERVED_ANSWERS) {
    const o = operationOf(answer);
    if (o === undefined) continue;
    const responses = o.op['responses'] as Obj;
    const key = `${o.id} ${answer.status}`;
    if (!(String(answer.status) in responses)) {
      if (!seen.has(key)) problems.push(`${answer.method} ${answer.path} → ${answer.status}: status not declared on ${o.id}`);
      seen.add(key);
      continue;
    }
    const code = (answer.body as { code?: unknown } | undefined)?.code;
    const codes = documentedCodes(deref('responses', responses[String(answer.status)]));
    if (answer.mediaType === 'application/problem+json' && typeof code === 'string' && codes !== undefined && !codes.includes(code)) {
      problems.push(`${answer.method} ${answer.path} → ${answer.status} ${code}: code not listed on ${o.id} ${answer.status} (${codes.join(', ')})`);
    }
  }
  const real = (example: Example): unknown[] => {
    const status = Number(example.status);
    const code = (example.value as { code?: unknown }).code;
    if (example.mediaType === 'application/problem+json') {
      return [...OBSERVED_ANSWERS, ...PARSER_ANSWERS].filter((a) => a.status === status && (a.body as { code?: unknown } | undefined)?.code === code).map((a) => a.body);
    }
    return OBSERVED_ANSWERS.filter((a) => a.status === status && a.mediaType === example.mediaType && operationOf(a)?.id === example.operation).map((a) => a.body);
  };
  for (const example of RESPONSE_EXAMPLES) {
    if (DOOR_ANSWERS.has(`${example.operation} ${example.status}`)) continue;
    const bodies = real(example);
    if (bodies.length === 0) problems.push(`${example.where}: no real answer of this run to compare with`);
    else if (!bodies.some((body) => sameShape(shape(body), shape(example.value)))) {
      problems.push(`${example.where}: keys ${JSON.stringify(shape(example.value))} differ from the real answer's ${JSON.stringify(shape(bodies[0]))}`);
    }
  }
  expect(problems, problems.join('\n')).to.deep.equal([]);
});

function failingWriter(error: WriteError): RecordWriter {
  return { insert: () => Promise.resolve(err(error)), update: () => Promise.resolve(err(error)) };
}

describe('adapter-http: the examples of the OpenAPI document', function () {
  // The checker compiles the document's components with ajv 2020-12 (support/openapi-check.ts).
  const checker = new OpenApiChecker(DOC);
  const validate = (schema: unknown, value: unknown): string | undefined => {
    const v = checker.validator(schema);
    return v(value) ? undefined : JSON.stringify(v.errors);
  };

  it('every response with a body and every request body has examples, each valid against its schema (ajv)', function () {
    let checked = 0;
    for (const o of OPERATIONS) {
      const body = o.op['requestBody'] as Obj | undefined;
      const requestExamples = examplesOf(body?.['content'] as Obj | undefined, `${o.id} request`, o.id, 'request');
      if (body !== undefined) expect(requestExamples.length, `${o.id} request body examples`).to.be.greaterThan(0);
      for (const [status, node] of Object.entries(o.op['responses'] as Obj)) {
        const content = deref('responses', node)['content'] as Obj | undefined;
        for (const [mediaType, media] of Object.entries(content ?? {})) {
          expect(Object.keys(((media as Obj)['examples'] ?? {}) as Obj).length, `${o.id} ${status} ${mediaType} examples`).to.be.greaterThan(0);
        }
      }
      for (const example of [...requestExamples, ...RESPONSE_EXAMPLES.filter((e) => e.operation === o.id)]) {
        if (example.mediaType !== 'application/json' && example.mediaType !== 'application/problem+json') continue;
        expect(validate(example.schema, example.value), example.where).to.equal(undefined);
        checked += 1;
      }
    }
    expect(checked).to.be.greaterThan(150);
  });

  it('a problem example with a code its response does not list fails validation (the check can fail)', function () {
    const notFound = RESPONSE_EXAMPLES.find((e) => e.operation === 'getAgent' && e.status === '404');
    expect(validate(notFound?.schema, { ...(notFound?.value as Obj), code: 'ambiguous_key', status: 404 })).to.be.a('string');
  });

  describe('real answers of every operation and status the examples show', function () {
    const started: RunningApps[] = [];
    const start = async (options: AppOptions = {}): Promise<RunningApps> => {
      const apps = await startApps(options);
      started.push(apps);
      return apps;
    };
    after(async function () {
      await Promise.all(started.map((a) => a.close()));
    });
    const key = apiKey(SECRETS.keyA);
    const json = { 'content-type': 'application/json' };

    it('success answers of each operation, and the 4xx of a client', async function () {
      const a = await start();
      const run = await call(a.url, 'POST', runPath(), { headers: key, json: { files: [aFileReference()], message: 'Extract the totals' } });
      const runId = (run.body as { data: { run_id: string } }).data.run_id;
      const answers = await Promise.all([
        call(a.url, 'GET', '/api/v1'),
        call(a.url, 'POST', recordsPath(), { headers: key, json: anInsert() }),
        call(a.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() }),
        call(a.egressUrl, 'POST', egressRecordsPath(), { headers: key, json: anInsert({ values: { id: 3 } }) }),
        call(a.egressUrl, 'PATCH', egressRecordsPath(), { headers: key, json: anUpdate() }),
        call(a.url, 'GET', `/api/v1/runs/${runId}`, { headers: key }),
        call(a.url, 'GET', '/api/v1/runs', { headers: key }),
        call(a.url, 'GET', '/api/v1/agents', { headers: key }),
        call(a.url, 'GET', '/api/v1/agents/agent_demo', { headers: key }),
        call(a.url, 'GET', '/api/v1/connections', { headers: key }),
        call(a.url, 'GET', `/api/v1/connections/${PG_CONNECTION_ID}`, { headers: key }),
        call(a.url, 'GET', '/.well-known/oauth-protected-resource/api/v1/agents/agent_demo/mcp'),
        call(a.url, 'GET', '/api/v1/agents'),
        call(a.url, 'GET', '/api/v1/agents', { headers: apiKey('svc-not-a-key') }),
        call(a.url, 'GET', '/api/v1/agents', { headers: bearer(SECRETS.tokenWrite) }),
        call(a.url, 'GET', '/api/v1/runs', { headers: bearer(SECRETS.tokenExpired) }),
        call(a.url, 'GET', '/api/v1/runs', { headers: bearer(SECRETS.tokenNoScope) }),
        call(a.url, 'GET', `/api/v1/agents/${FOREIGN_AGENT_ID}`, { headers: key }),
        call(a.url, 'POST', recordsPath(), { headers: key, json: { entity: 'orders', values: { qty: [1] } } }),
        call(a.url, 'GET', '/api/v1/runs?limit=0', { headers: key }),
        call(a.url, 'GET', '/api/v1/runs?cursor=x', { headers: key }),
        call(a.url, 'POST', runPath(), { headers: key, json: { files: [] } }),
        call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json }, raw: '{"entity": ' }),
        call(a.url, 'POST', recordsPath(), { headers: { ...key, 'x-svc-egress': 'maybe' }, json: anInsert() }),
        call(a.url, 'POST', recordsPath(PG_CONNECTION_ID), { headers: key, json: anInsert() }),
        call(a.url, 'POST', recordsPath(), { headers: key, json: anInsert({ entity: 'dbo.nothing' }) }),
        call(a.url, 'POST', recordsPath(), { headers: key, json: anInsert({ values: { nope: 1 } }) }),
        call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json }, raw: '{"entity":"dbo.orders","values":{"qty":1e400}}' }),
        call(a.url, 'POST', recordsPath(), { headers: { ...key, ...json }, raw: ' '.repeat(1024 * 1024 + 1) }),
        call(a.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'text/plain' }, raw: '{}' }),
      ]);
      expect(answers.map((x) => x.status)).to.deep.equal([200, 201, 200, 201, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 401, 401, 403, 404, 400, 400, 400, 400, 400, 400, 400, 400, 400, 400, 413, 415]);
      a.world.writer.defineTable('dbo.orders', ['id', 'sku', 'qty', 'note', 'status'], [{ id: 7 }, { id: 7 }]);
      expect((await call(a.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate({ key_value: 7 }) })).status).to.equal(409);
    });

    it('429, 500, 502, 503, 504 and a constraint violation', async function () {
      const limited = await start({ limits: { credential: { limit: 1, windowSeconds: 60 }, agent: { limit: 1, windowSeconds: 60 } } });
      await call(limited.url, 'GET', '/api/v1/agents', { headers: key });
      expect((await call(limited.url, 'GET', '/api/v1/agents', { headers: key })).status).to.equal(429);
      const failing = await start({
        override: () => ({ insertRecord: { execute: () => Promise.reject(new Error('boom')) }, startRun: { execute: () => Promise.reject(new DependencyUnavailableError('run_queue')) } }),
      });
      expect((await call(failing.url, 'POST', recordsPath(), { headers: key, json: anInsert() })).status).to.equal(500);
      expect((await call(failing.url, 'POST', runPath(), { headers: key, json: { message: 'x' } })).status).to.equal(503);
      for (const [code, status] of [['connection_unavailable', 502], ['connection_timeout', 504], ['constraint_violation', 400]] as const) {
        const writer = failingWriter(domainError(code, 'refused'));
        const apps = await start({ override: (w) => ({ insertRecord: w.coreWith({ recordWriter: writer }).insertRecord }) });
        expect((await call(apps.url, 'POST', recordsPath(), { headers: key, json: anInsert() })).status).to.equal(status);
      }
    });

    it('Idempotency-Key: 400 of an invalid key, 409 while the first request is in flight, 422 with another body', async function () {
      let entered = false;
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const apps = await start({
        override: (w) => {
          const startRun = w.coreWith({}).startRun;
          return {
            startRun: {
              execute: async (input) => {
                entered = true;
                await held;
                return startRun.execute(input);
              },
            },
          };
        },
      });
      const headers = { ...key, 'idempotency-key': 'document-answers-in-flight' };
      const first = call(apps.url, 'POST', runPath(), { headers, json: { message: 'x' } });
      await eventually(() => entered, 'the first request to hold its key');
      const inUse = await call(apps.url, 'POST', runPath(), { headers, json: { message: 'x' } });
      const reused = await call(apps.url, 'POST', runPath(), { headers, json: { message: 'y' } });
      release();
      expect([(await first).status, inUse.status, reused.status]).to.deep.equal([202, 409, 422]);
      const invalid = await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'idempotency-key': '' }, json: anInsert() });
      expect(invalid.status).to.equal(400);
    });

    it("the HTTP parser's refusals (before any operation): 400, 408, 417, 431", async function () {
      const apps = await start();
      const server: Server = createServer({ headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 }, createHttpApp(apps.world.useCases, apps.settings).callback());
      handleClientErrors(server, new RecordingLogger());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        const requests = [
          'GET /api/v1/agents HTTP/7.3\r\nHost: t\r\n\r\n',
          'POST /api/v1/agents/agent_demo/run HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\nx',
          `GET /api/v1/agents HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          'POST /api/v1/agents/agent_demo/run HTTP/1.1\r\nHost: t\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}',
          'GET /api/v1/agents HTTP/1.1\r\nHost: t\r\n',
        ];
        const exchanges = await Promise.all(requests.map((r) => rawExchange(port, r, { timeoutMs: 5_000, expectAnswers: 1 })));
        for (const exchange of exchanges) {
          const answer = exchange.answers[0];
          expect(answer, 'an answer').to.not.equal(undefined);
          PARSER_ANSWERS.push({ status: answer?.status ?? 0, body: JSON.parse(answer?.body.toString() ?? 'null') });
        }
        expect(PARSER_ANSWERS.map((p) => (p.body as { code: string }).code)).to.deep.equal(['bad_request', 'invalid_header', 'request_header_fields_too_large', 'expectation_failed', 'request_timeout']);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});
