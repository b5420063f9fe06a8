import { expect } from 'chai';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../../tools/test-support/ports.js';
import { SvcApiError, SvcClient, SvcFileRejectedError, SvcNetworkError, retryAfterSeconds, type File, type RetryEvent, type Run } from '@svc/client';
import { ACCESS_TOKEN, AGENT, AGENT_WINDOW_SECONDS, API_KEY, LIMITED_AGENT, OTHER_KEY, PG_CONNECTION, SQL_CONNECTION, startApiServer, TOKEN_AGENT, type ApiServer } from './support/api-server.js';
import { CSV_BYTES, PDF_BYTES, PNG_BYTES, sha256Hex } from './support/files.js';

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
    // An agent of its own: AGENT's window is used up by the runs above.
    const started = await bearer.startRun(TOKEN_AGENT, { message: 'Extract the totals [fail]' });
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

/** Entries of the temporary directory that uploads spool to (none may be left behind). */
async function spoolDirs(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith('svc-upload-'));
}

describe('@svc/client files against the API server (prepare, streamed PUT, complete)', function () {
  this.timeout(60_000);
  let api: ApiServer;
  let client: SvcClient;
  let dir: string;

  before(async function () {
    api = await startApiServer();
    client = new SvcClient({ baseUrl: api.base, apiKey: API_KEY });
    dir = await mkdtemp(join(tmpdir(), 'svc-client-files-'));
  });
  after(async function () {
    await api?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('uploads a PDF from a path: ready, its type from the extension, its SHA-256 declared and confirmed; a run reads it', async function () {
    const path = join(dir, 'invoice-17.pdf');
    await writeFile(path, PDF_BYTES);
    const file = await client.uploadFile(path);
    expect(file).to.include({ file_name: 'invoice-17.pdf', content_type: 'application/pdf', size_bytes: PDF_BYTES.length, sha256: sha256Hex(PDF_BYTES), status: 'ready', reason: null });
    expect(file.file_key).to.match(/^file_[0-9a-f]{32}$/u);
    expect(await client.getFile(file.file_key)).to.deep.equal(file);

    const started = await client.startRun(AGENT, { files: [{ file_key: file.file_key, file_name: file.file_name, content_type: file.content_type }], message: 'Extract the totals' });
    const run = await client.waitForRun(started.run_id, { pollIntervalMs: 50, signal: AbortSignal.timeout(20_000) });
    expect(run.status).to.equal('succeeded');
    expect((run.output as { read_files: unknown[] }).read_files).to.deep.equal([
      { file_key: file.file_key, file_name: 'invoice-17.pdf', content_type: 'application/pdf', size_bytes: PDF_BYTES.length, sha256: sha256Hex(PDF_BYTES) },
    ]);
  });

  it('uploads a CSV from a stream of unknown size (spooled to a temporary file, then removed) and of a given size (sent as it comes)', async function () {
    const before = await spoolDirs();
    const spooled = await client.uploadFile(Readable.from([CSV_BYTES.subarray(0, 10), CSV_BYTES.subarray(10)]), { fileName: 'orders.csv' });
    expect(spooled).to.include({ file_name: 'orders.csv', content_type: 'text/csv', size_bytes: CSV_BYTES.length, sha256: sha256Hex(CSV_BYTES), status: 'ready' });
    expect(await spoolDirs()).to.deep.equal(before);

    async function* chunks(): AsyncGenerator<Uint8Array> {
      yield CSV_BYTES.subarray(0, 5);
      yield CSV_BYTES.subarray(5);
    }
    const streamed = await client.uploadFile(chunks(), { fileName: 'orders.txt', contentType: 'text/csv', sizeBytes: CSV_BYTES.length });
    expect(streamed).to.include({ file_name: 'orders.txt', content_type: 'text/csv', size_bytes: CSV_BYTES.length, sha256: sha256Hex(CSV_BYTES), status: 'ready' });
  });

  it('keeps a slow upload going as long as bytes move: the PUT has an idle timeout, not a total one', async function () {
    // 12 chunks 150 ms apart: 1.8 s in all, past both timeouts, never 400 ms without progress.
    const slow = new SvcClient({ baseUrl: api.base, apiKey: API_KEY, timeoutMs: 1000, uploadIdleTimeoutMs: 400, maxRetries: 0 });
    const bytes = Buffer.concat(Array.from({ length: 12 }, (_, i) => Buffer.from(`line ${i}\n`)));
    async function* trickle(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 12; i += 1) {
        await sleep(150);
        yield Buffer.from(`line ${i}\n`);
      }
    }
    const started = performance.now();
    const file = await slow.uploadFile(trickle(), { fileName: 'slow.txt', sizeBytes: bytes.length });
    expect(performance.now() - started).to.be.above(1500);
    expect(file).to.include({ status: 'ready', content_type: 'text/plain', size_bytes: bytes.length, sha256: sha256Hex(bytes) });
  });

  it('throws SvcFileRejectedError, the reason in its message, for PNG bytes declared application/pdf', async function () {
    const path = join(dir, 'not-really.pdf');
    await writeFile(path, PNG_BYTES);
    const error = await rejection(client.uploadFile(path));
    expect(error).to.be.instanceOf(SvcFileRejectedError);
    const rejected = error as SvcFileRejectedError;
    expect(rejected.file).to.include({ file_name: 'not-really.pdf', content_type: 'application/pdf', status: 'rejected' });
    expect(rejected.reason).to.equal('The bytes are image/png, not the declared application/pdf.');
    expect(rejected.message).to.equal(`file not-really.pdf (${rejected.file.file_key}) was rejected: ${rejected.reason}`);
    expect((await client.getFile(rejected.file.file_key)).status).to.equal('rejected');
  });

  it('lists files page by page (newest first) and by status; deletes one', async function () {
    const other = new SvcClient({ baseUrl: api.base, apiKey: OTHER_KEY });
    const mine: File[] = [];
    for (const name of ['a.csv', 'b.csv', 'c.csv']) mine.push(await client.uploadFile(Readable.from([CSV_BYTES]), { fileName: name }));
    const seen: File[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listFiles({ limit: 2, ...(cursor !== undefined ? { cursor } : {}) });
      expect(page.data.length).to.be.at.most(2);
      seen.push(...page.data);
      cursor = page.next_cursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).to.be.at.least(2);
    const keys = seen.map((f) => f.file_key);
    expect(new Set(keys).size).to.equal(keys.length, 'no file twice');
    expect(keys.slice(0, 3)).to.deep.equal(mine.map((f) => f.file_key).reverse());
    const created = seen.map((f) => f.created_at);
    expect(created).to.deep.equal([...created].sort().reverse());

    const ready = await client.listFiles({ status: 'ready', limit: 100 });
    expect(ready.data.every((f) => f.status === 'ready')).to.equal(true);
    expect(ready.data.map((f) => f.file_key)).to.include.members(mine.map((f) => f.file_key));
    expect((await other.listFiles()).data).to.deep.equal([]);

    const gone = mine[0]?.file_key ?? '';
    await client.deleteFile(gone);
    const missing = (await rejection(client.getFile(gone))) as SvcApiError;
    expect([missing.status, missing.code]).to.deep.equal([404, 'not_found']);
    const again = (await rejection(client.deleteFile(gone))) as SvcApiError;
    expect([again.status, again.code]).to.deep.equal([404, 'not_found']);
  });

  it('refuses a file over the declared size limit, or a stream without a name, before sending bytes', async function () {
    const error = (await rejection(client.prepareFile({ file_name: 'huge.bin', content_type: 'application/octet-stream', size_bytes: 200 * 1024 * 1024 }))) as SvcApiError;
    expect([error.status, error.code, error.errors[0]?.path]).to.deep.equal([400, 'validation_failed', '/size_bytes']);
    const unnamed = await rejection(client.uploadFile(Readable.from([CSV_BYTES]), {} as { fileName: string }));
    expect(unnamed).to.be.instanceOf(TypeError);
    const absent = (await rejection(client.uploadFile(join(dir, 'absent.pdf')))) as NodeJS.ErrnoException;
    expect(absent.code).to.equal('ENOENT');
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

  it('PUTs to the absolute upload_url with exactly upload_headers and Content-Length, no credential; a stalled PUT fails after the idle timeout, naming the URL without its signature', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'svc-client-stub-'));
    const path = join(dir, 'report.pdf');
    await writeFile(path, PDF_BYTES);
    const puts: { url: string; headers: IncomingHttpHeaders; bytes: number }[] = [];
    const stub = await stubServer((req, res) => {
      if (req.method === 'POST' && req.url === '/api/v1/files') {
        res.writeHead(201, { 'content-type': 'application/json' });
        const now = new Date().toISOString();
        res.end(
          JSON.stringify({
            data: {
              file_key: 'file_1', file_name: 'report.pdf', content_type: 'application/pdf', size_bytes: PDF_BYTES.length, sha256: sha256Hex(PDF_BYTES), status: 'pending', reason: null, created_at: now, expires_at: now,
              upload_url: `${stub.base}/bucket/file_1?X-Signature=secret-signature`, upload_method: 'PUT', upload_headers: { 'Content-Type': 'application/pdf', 'x-amz-meta-origin': 'svc' },
            },
          }),
        );
        return;
      }
      let bytes = 0;
      req.removeAllListeners('data');
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('end', () => puts.push({ url: req.url ?? '', headers: req.headers, bytes })); // and never answers
    });
    try {
      const client = new SvcClient({ baseUrl: stub.base, apiKey: API_KEY, uploadIdleTimeoutMs: 300, maxRetries: 0 });
      const started = performance.now();
      const error = (await rejection(client.uploadFile(path))) as SvcNetworkError;
      expect(error).to.be.instanceOf(SvcNetworkError);
      expect(error.kind).to.equal('timeout');
      expect(error.message).to.equal(`PUT ${stub.base}/bucket/file_1: no progress for 300 ms`);
      expect(performance.now() - started).to.be.within(250, 5000);
      expect(puts).to.have.length(1);
      const put = puts[0] as (typeof puts)[number];
      expect(put.url).to.equal('/bucket/file_1?X-Signature=secret-signature');
      expect(put.bytes).to.equal(PDF_BYTES.length);
      expect(put.headers['content-length']).to.equal(String(PDF_BYTES.length));
      expect(put.headers['content-type']).to.equal('application/pdf');
      expect(put.headers['x-amz-meta-origin']).to.equal('svc');
      expect(put.headers['transfer-encoding']).to.equal(undefined);
      expect(put.headers['x-api-key']).to.equal(undefined);
      expect(put.headers['authorization']).to.equal(undefined);
    } finally {
      await stub.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sends a file again from its start when its PUT is refused with 503 (a repeated upload replaces the first)', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'svc-client-stub-'));
    const path = join(dir, 'orders.csv');
    await writeFile(path, CSV_BYTES);
    const bodies: Buffer[] = [];
    const now = new Date().toISOString();
    const file = { file_key: 'file_2', file_name: 'orders.csv', content_type: 'text/csv', size_bytes: CSV_BYTES.length, sha256: sha256Hex(CSV_BYTES), status: 'pending', reason: null, created_at: now, expires_at: now };
    const stub = await stubServer((req, res) => {
      const chunks: Buffer[] = [];
      req.removeAllListeners('data');
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.method === 'POST' && req.url === '/api/v1/files') {
          res.writeHead(201).end(JSON.stringify({ data: { ...file, upload_url: `${stub.base}/upload/file_2?sig=s`, upload_method: 'PUT', upload_headers: { 'Content-Type': 'text/csv' } } }));
        } else if (req.method === 'PUT') {
          bodies.push(Buffer.concat(chunks));
          if (bodies.length === 1) res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/problem+json' }).end(JSON.stringify({ status: 503, code: 'service_unavailable', detail: 'storage away' }));
          else res.writeHead(200).end('');
        } else res.writeHead(200).end(JSON.stringify({ data: { ...file, status: 'ready' } }));
      });
    });
    try {
      const events: RetryEvent[] = [];
      const ready = await new SvcClient({ baseUrl: stub.base, apiKey: API_KEY, onRetry: (e) => events.push(e) }).uploadFile(path);
      expect(ready.status).to.equal('ready');
      expect(bodies.map((b) => b.toString('utf8'))).to.deep.equal([CSV_BYTES.toString('utf8'), CSV_BYTES.toString('utf8')]);
      expect(events.map((e) => (e.error as SvcApiError).status)).to.deep.equal([503]);
    } finally {
      await stub.close();
      await rm(dir, { recursive: true, force: true });
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
