import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../../tools/test-support/ports.js';
import { SvcApiError, SvcClient, SvcNetworkError, retryAfterSeconds, type RetryEvent, type Run } from '@svc/client';
import { ACCESS_TOKEN, AGENT, AGENT_WINDOW_SECONDS, API_KEY, LIMITED_AGENT, OTHER_KEY, PG_CONNECTION, SQL_CONNECTION, startApiServer, type ApiServer } from './support/api-server.js';

/** A loopback HTTP server whose answers a test scripts (for what the real server will not do on demand: 503, silence). */
async function stubServer(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<{ base: string; requests: () => number; close(): Promise<void> }> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    n += 1;
    req.resume();
    handler(req, res, n);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests: () => n,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The error `promise` rejects with; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, got a value');
}

describe('@svc/client against the API server', function () {
  this.timeout(60_000);
  let api: ApiServer;
  let client: SvcClient;

  before(async function () {
    api = await startApiServer();
    client = new SvcClient({ baseUrl: `${api.base}/`, apiKey: API_KEY });
  });
  after(async function () {
    await api?.stop();
  });

  it('reads the index without a credential', async function () {
    const index = await new SvcClient({ baseUrl: api.base }).index();
    expect(index.version).to.equal('v1');
    expect(index.base_url).to.equal(api.base);
  });

  it('reads the served OpenAPI document', async function () {
    expect(await client.openApiDocument()).to.match(/^openapi: 3\.1\.0\n/u);
  });

  it('starts a run with an API key and waits for it to succeed, told of each status', async function () {
    const started = await client.startRun(AGENT, { message: 'Summarise the orders' });
    expect(started.status).to.equal('queued');
    const seen: Run['status'][] = [];
    const run = await client.waitForRun(started.run_id, { pollIntervalMs: 50, onStatus: (r) => seen.push(r.status), signal: AbortSignal.timeout(20_000) });
    expect(run.status).to.equal('succeeded');
    expect(run.run_id).to.equal(started.run_id);
    expect(seen.at(-1)).to.equal('succeeded');
    expect(new Set(seen).size).to.equal(seen.length, `each status once: ${seen.join(', ')}`);
  });

  it('a run start repeated with one Idempotency-Key gets the same run (the server replays the first answer)', async function () {
    const key = `client-test-${Date.now()}`;
    const first = await client.startRun(AGENT, { message: 'Once only' }, { idempotencyKey: key });
    const again = await client.startRun(AGENT, { message: 'Once only' }, { idempotencyKey: key });
    expect(again).to.deep.equal(first);
  });

  it('starts a run with an access token (Bearer), and a run that fails resolves with status failed', async function () {
    const bearer = new SvcClient({ baseUrl: api.base, accessToken: ACCESS_TOKEN });
    const started = await bearer.startRun(AGENT, {
      files: [{ file_key: 'uploads/a.pdf', file_name: 'a.pdf', content_type: 'application/pdf' }],
      message: 'Extract the totals [fail]',
    });
    const run = await bearer.waitForRun(started.run_id, { pollIntervalMs: 50, signal: AbortSignal.timeout(20_000) });
    expect(run.status).to.equal('failed');
  });

  it('inserts and updates a row, on the default and the egress route', async function () {
    expect(await client.insertRecord(SQL_CONNECTION, { entity: 'dbo.orders', values: { id: 101, sku: 'A-1', qty: 2, note: null } })).to.deep.equal({ rows_affected: 1 });
    expect(await client.updateRecord(SQL_CONNECTION, { entity: 'dbo.orders', key_column: 'id', key_value: 101, values: { qty: 3 } }, { egress: true })).to.deep.equal({ rows_affected: 1 });
    expect(await client.updateRecord(SQL_CONNECTION, { entity: 'dbo.orders', key_column: 'id', key_value: 999, values: { qty: 3 } })).to.deep.equal({ rows_affected: 0 });
  });

  it('raises a validation problem as SvcApiError with status, code, detail, request id and errors', async function () {
    const error = await rejection(client.insertRecord(SQL_CONNECTION, { entity: 'orders', values: { qty: 1 } }));
    expect(error).to.be.instanceOf(SvcApiError);
    const problem = error as SvcApiError;
    expect(problem.status).to.equal(400);
    expect(problem.code).to.equal('validation_failed');
    expect(problem.detail).to.contain('/entity');
    expect(problem.errors.map((e) => e.path)).to.include('/entity');
    expect(problem.requestId).to.match(/^[0-9a-f-]{36}$/u);
    expect(problem.message).to.equal(`400 validation_failed: ${problem.detail}`);
  });

  it('raises writes on a postgresql connection, unknown runs and bad credentials with their codes', async function () {
    const refused = (await rejection(client.insertRecord(PG_CONNECTION, { entity: 'public.orders', values: { id: 1 } }))) as SvcApiError;
    expect([refused.status, refused.code]).to.deep.equal([400, 'writes_not_supported']);
    const missing = (await rejection(client.getRun('00000000-0000-4000-8000-000000000000'))) as SvcApiError;
    expect([missing.status, missing.code]).to.deep.equal([404, 'not_found']);
    const foreign = (await rejection(new SvcClient({ baseUrl: api.base, apiKey: OTHER_KEY }).insertRecord(SQL_CONNECTION, { entity: 'dbo.orders', values: { id: 1 } }))) as SvcApiError;
    expect([foreign.status, foreign.code]).to.deep.equal([404, 'not_found']);
    const wrong = (await rejection(new SvcClient({ baseUrl: api.base, apiKey: 'svc-not-a-key-of-anyone-at-all' }).getRun('x'))) as SvcApiError;
    expect([wrong.status, wrong.code]).to.deep.equal([401, 'invalid_credential']);
    expect(() => new SvcClient({ baseUrl: api.base, apiKey: API_KEY, accessToken: ACCESS_TOKEN })).to.throw(TypeError, /not both/u);
  });

  it('honours Retry-After of a 429: waits as told, then the retry succeeds', async function () {
    // The agent's window allows AGENT_REQUESTS starts: use them up, then one more must wait.
    const events: RetryEvent[] = [];
    const patient = new SvcClient({ baseUrl: api.base, apiKey: API_KEY, onRetry: (e) => events.push(e) });
    const limitedOnce = new SvcClient({ baseUrl: api.base, apiKey: API_KEY, maxRetries: 0 });
    let refused: SvcApiError | undefined;
    for (let i = 0; i < 10 && refused === undefined; i += 1) {
      refused = await limitedOnce.startRun(LIMITED_AGENT, { message: `fill ${i}` }).then(
        () => undefined,
        (error: unknown) => error as SvcApiError,
      );
    }
    expect(refused, 'a 429 within 10 starts').to.be.instanceOf(SvcApiError);
    expect([refused?.status, refused?.code]).to.deep.equal([429, 'rate_limited']);
    expect(refused?.retryAfterSeconds).to.be.within(1, AGENT_WINDOW_SECONDS);

    // Over the cap: no wait at all, the 429 at once.
    const impatient = new SvcClient({ baseUrl: api.base, apiKey: API_KEY, maxRetryDelayMs: 100 });
    const startedAt = performance.now();
    const error = (await rejection(impatient.startRun(LIMITED_AGENT, { message: 'too soon' }))) as SvcApiError;
    expect(error.status).to.equal(429);
    expect(performance.now() - startedAt).to.be.below(1000);

    const before = performance.now();
    const started = await patient.startRun(LIMITED_AGENT, { message: 'after the wait' });
    expect(started.status).to.equal('queued');
    expect(events.length).to.be.at.least(1);
    const first = events[0] as RetryEvent;
    expect((first.error as SvcApiError).status).to.equal(429);
    expect(first.delayMs).to.equal(((first.error as SvcApiError).retryAfterSeconds ?? -1) * 1000);
    expect(performance.now() - before).to.be.at.least(first.delayMs - 50);
  });
});

describe('@svc/client retries, timeouts and cancellation (scripted loopback server)', function () {
  this.timeout(20_000);

  it('retries a 503 after its Retry-After, and sends the body again', async function () {
    const bodies: string[] = [];
    const stub = await stubServer((req, res, n) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => {
        bodies.push(body);
        if (n === 1) {
          res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
          res.end(JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'Redis is away', code: 'service_unavailable', request_id: 'r1' }));
          return;
        }
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{"data":{"rows_affected":1}}');
      });
    });
    try {
      const events: RetryEvent[] = [];
      const client = new SvcClient({ baseUrl: stub.base, apiKey: API_KEY, onRetry: (e) => events.push(e) });
      const started = performance.now();
      expect(await client.insertRecord(SQL_CONNECTION, { entity: 'dbo.orders', values: { id: 1 } })).to.deep.equal({ rows_affected: 1 });
      expect(performance.now() - started).to.be.at.least(950);
      expect(events.map((e) => e.delayMs)).to.deep.equal([1000]);
      expect(bodies).to.have.length(2);
      expect(bodies[1]).to.equal(bodies[0]);
    } finally {
      await stub.close();
    }
  });

  it('gives up after maxRetries 503s with the last SvcApiError', async function () {
    const stub = await stubServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'down', code: 'service_unavailable' }));
    });
    try {
      const error = (await rejection(new SvcClient({ baseUrl: stub.base, apiKey: API_KEY, maxRetries: 2 }).getRun('r'))) as SvcApiError;
      expect([error.status, error.code, error.retryAfterSeconds]).to.deep.equal([503, 'service_unavailable', 0]);
      expect(stub.requests()).to.equal(3);
    } finally {
      await stub.close();
    }
  });

  it('retries a POST that timed out with the same Idempotency-Key, and a 409 idempotency_key_in_use after its Retry-After', async function () {
    const keys: (string | undefined)[] = [];
    const stub = await stubServer((req, res, n) => {
      keys.push(req.headers['idempotency-key'] as string | undefined);
      if (n === 1) return; // never answers: the client times out
      if (n === 2) {
        res.writeHead(409, { 'content-type': 'application/problem+json', 'retry-after': '0' });
        res.end(JSON.stringify({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'in flight', code: 'idempotency_key_in_use' }));
        return;
      }
      res.writeHead(202, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      res.end(JSON.stringify({ data: { run_id: 'r1', workflow_run_id: 'w1', status: 'queued', status_url: `${stub.base}/api/v1/runs/r1`, message: 'queued' } }));
    });
    try {
      const events: RetryEvent[] = [];
      const client = new SvcClient({ baseUrl: stub.base, apiKey: API_KEY, timeoutMs: 300, backoffMs: 10, onRetry: (e) => events.push(e) });
      const started = await client.startRun(AGENT, { message: 'x' });
      expect(started.run_id).to.equal('r1');
      expect(keys).to.have.length(3);
      expect(keys[0]).to.match(/^[0-9a-f-]{36}$/u);
      expect(new Set(keys).size).to.equal(1, 'one key on every attempt');
      expect(events.map((e) => (e.error instanceof SvcNetworkError ? e.error.kind : (e.error as SvcApiError).code))).to.deep.equal(['timeout', 'idempotency_key_in_use']);
      await client.insertRecord(SQL_CONNECTION, { entity: 'dbo.orders', values: { id: 1 } }, { idempotencyKey: 'my-key-7' }).catch(() => undefined);
      expect(keys.at(-1)).to.equal('my-key-7');
    } finally {
      await stub.close();
    }
  });

  it('does not retry a POST that timed out without an Idempotency-Key (idempotencyKey: false)', async function () {
    const keys: (string | undefined)[] = [];
    const stub = await stubServer((req) => {
      keys.push(req.headers['idempotency-key'] as string | undefined);
      // never answers
    });
    try {
      const started = performance.now();
      const error = await rejection(new SvcClient({ baseUrl: stub.base, apiKey: API_KEY, timeoutMs: 300 }).startRun(AGENT, { message: 'x' }, { idempotencyKey: false }));
      expect(keys).to.deep.equal([undefined]);
      expect(error).to.be.instanceOf(SvcNetworkError);
      expect((error as SvcNetworkError).kind).to.equal('timeout');
      expect(performance.now() - started).to.be.within(250, 3000);
      expect(stub.requests()).to.equal(1);
    } finally {
      await stub.close();
    }
  });

  it('retries a refused connection, then raises SvcNetworkError connection_refused', async function () {
    const port = await freePort();
    const events: RetryEvent[] = [];
    const error = await rejection(new SvcClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY, maxRetries: 2, backoffMs: 20, onRetry: (e) => events.push(e) }).index());
    expect(error).to.be.instanceOf(SvcNetworkError);
    expect((error as SvcNetworkError).kind).to.equal('connection_refused');
    expect(events.map((e) => e.delayMs)).to.deep.equal([20, 40]);
  });

  it('waitForRun stops when its signal aborts, with the signal reason', async function () {
    const stub = await stubServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const now = new Date().toISOString();
      res.end(JSON.stringify({ data: { run_id: 'r', workflow_run_id: 'w', agent_id: AGENT, status: 'running', created_at: now, updated_at: now, status_url: 'x', attempts: 1 } }));
    });
    try {
      const controller = new AbortController();
      const reason = new Error('enough');
      const statuses: string[] = [];
      const waiting = new SvcClient({ baseUrl: stub.base, apiKey: API_KEY }).waitForRun('r', {
        pollIntervalMs: 10_000,
        signal: controller.signal,
        onStatus: (run) => {
          statuses.push(run.status);
          controller.abort(reason);
        },
      });
      expect(await rejection(waiting)).to.equal(reason);
      expect(statuses).to.deep.equal(['running']);
    } finally {
      await stub.close();
    }
  });

  it('cancels a wait for Retry-After when its signal aborts', async function () {
    const stub = await stubServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '30' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'slow down', code: 'rate_limited' }));
    });
    try {
      const started = performance.now();
      const error = await rejection(new SvcClient({ baseUrl: stub.base, apiKey: API_KEY }).getRun('r', { signal: AbortSignal.timeout(200) }));
      expect((error as Error).name).to.equal('TimeoutError');
      expect(performance.now() - started).to.be.below(5000);
      expect(stub.requests()).to.equal(1);
    } finally {
      await stub.close();
    }
  });

  it('reads Retry-After as seconds or as an HTTP date (RFC 9110 §10.2.3)', function () {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('7', now)).to.equal(7);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:05 GMT', now)).to.equal(5);
    expect(retryAfterSeconds('soon', now)).to.equal(undefined);
    expect(retryAfterSeconds(null, now)).to.equal(undefined);
  });
});
