import { createServer, request, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createHttpApp, requestListener, ROUTES, type HttpAppSettings } from '@svc/adapter-http';
import { noopTelemetry, type Telemetry } from '@svc/core';
import { RecordingLogger } from '@svc/core/testing';
import { BASE_URL, EGRESS_URL, startApps, type RunningApps } from './support/harness.js';

/** One answer as it came off the socket: status, header lines in order (without `Date`), body bytes. */
interface RawAnswer {
  readonly status: number;
  readonly headers: readonly string[];
  readonly body: string;
}

function send(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i]?.toLowerCase() !== 'date') lines.push(`${res.rawHeaders[i] ?? ''}: ${res.rawHeaders[i + 1] ?? ''}`);
        }
        resolve({ status: res.statusCode ?? 0, headers: lines, body: Buffer.concat(chunks).toString('latin1') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function listen(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** The paths of the fixed routes on the main listener: the index, the documents, llms.txt, /docs, the OAuth metadata, /livez. */
const FIXED_PATHS = ROUTES.filter((route) => route.kind === 'fixed').flatMap((route) => route.paths.main ?? []);

describe('adapter-http: fixed answers before Koa (requestListener)', function () {
  let apps: RunningApps;
  let servers: Server[];
  let koaSeen: number;
  let finished: [string, number][];
  let logger: RecordingLogger;

  /** The same app served twice: through Koa (`app.callback()`) and through `requestListener(app)`. */
  async function both(extra: Partial<HttpAppSettings> = {}): Promise<{ koa: string; fast: string }> {
    logger = new RecordingLogger();
    const telemetry: Telemetry = { ...noopTelemetry, requestFinished: (operation, status) => void finished.push([operation, status]) };
    const settings: HttpAppSettings = { baseUrl: BASE_URL, egressUrl: EGRESS_URL, logger, telemetry, deprecations: { describeApi: { deprecatedAt: new Date('2026-12-01T00:00:00Z'), link: 'https://example.com/changelog' } }, ...extra };
    const app = createHttpApp(apps.world.useCases, settings);
    // Koa composes its middleware when a listener is made: counted from here on, by both.
    app.middleware.unshift((_ctx, next) => {
      koaSeen += 1;
      return next();
    });
    const koa = await listen(app.callback());
    const fast = await listen(requestListener(app));
    servers.push(koa.server, fast.server);
    return { koa: koa.url, fast: fast.url };
  }

  beforeEach(async function () {
    apps = await startApps();
    servers = [];
    koaSeen = 0;
    finished = [];
  });
  afterEach(async function () {
    await Promise.all(servers.map(close));
    await apps.close();
  });

  it('answers every fixed path byte for byte as Koa does, without Koa: GET, HEAD, a query, 304, the log line and the metrics', async function () {
    expect(FIXED_PATHS).to.include.members(['/api/v1', '/openapi.yaml', '/llms.txt', '/docs', '/livez']);
    const { koa, fast } = await both();
    for (const path of FIXED_PATHS) {
      const first = await send(koa, 'GET', path, { 'X-Request-Id': 'same-id' });
      const etag = first.headers.find((line) => line.toLowerCase().startsWith('etag: '))?.slice('etag: '.length);
      const cases: [string, string, Record<string, string>][] = [
        ['GET', path, { 'X-Request-Id': 'same-id' }],
        ['HEAD', path, { 'X-Request-Id': 'same-id' }],
        ['GET', `${path}?q=1`, { 'X-Request-Id': 'same-id' }],
        ...(etag !== undefined ? ([['GET', path, { 'X-Request-Id': 'same-id', 'If-None-Match': `W/${etag}` }]] as [string, string, Record<string, string>][]) : []),
        ['GET', path, { 'X-Request-Id': 'same-id', 'If-None-Match': '"other"' }],
      ];
      for (const [method, target, headers] of cases) {
        const seenBefore = koaSeen;
        const byKoa = await send(koa, method, target, headers);
        expect(koaSeen, `${method} ${target} through app.callback()`).to.equal(seenBefore + 1);
        const linesBefore = logger.lines.length;
        const finishedBefore = finished.length;
        const byFast = await send(fast, method, target, headers);
        expect(koaSeen, `${method} ${target} answered before Koa`).to.equal(seenBefore + 1);
        expect(byFast, `${method} ${target} ${JSON.stringify(headers)}`).to.deep.equal(byKoa);
        const line = logger.lines.at(-1);
        expect(logger.lines.length).to.equal(linesBefore + 1);
        const koaLine = logger.lines.at(-2);
        const { duration_ms: d1, ...fastFields } = line?.fields ?? {};
        const { duration_ms: d2, ...koaFields } = koaLine?.fields ?? {};
        expect([typeof d1, typeof d2]).to.deep.equal(['number', 'number']);
        expect(fastFields).to.deep.equal(koaFields);
        expect(line?.message).to.equal('request');
        expect(finished.length).to.equal(finishedBefore + 1);
        expect(finished.at(-1)).to.deep.equal(finished.at(-2));
      }
    }
    const index = await send(fast, 'GET', '/api/v1');
    expect(index.status).to.equal(200);
    expect(index.headers.some((line) => /^x-request-id: [0-9a-f-]{36}$/iu.test(line)), 'a request id is made when none is sent').to.equal(true);
    expect(index.headers.some((line) => line.toLowerCase().startsWith('deprecation: '))).to.equal(true);
  });

  it('leaves to Koa another method, another path, a request with a body, and a listener with CORS origins', async function () {
    const { fast } = await both();
    const cases: [string, string, Record<string, string>, string | undefined, number][] = [
      ['POST', '/api/v1', {}, undefined, 405],
      ['GET', '/api/v1/', {}, undefined, 200],
      ['GET', '/api/v1/runs/nope', {}, undefined, 401],
      ['GET', '/api/v1', { 'Content-Type': 'application/json', 'Content-Length': '7' }, '{"a":1}', 200],
      ['GET', '/api/v1', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }, '{"a":1}', 200],
    ];
    for (const [method, path, headers, body, status] of cases) {
      const before = koaSeen;
      const answer = await send(fast, method, path, headers, body);
      expect(answer.status, `${method} ${path}`).to.equal(status);
      expect(koaSeen, `${method} ${path} went through Koa`).to.equal(before + 1);
    }
    const cors = await both({ corsOrigins: ['https://app.example.test'] });
    const before = koaSeen;
    const answer = await send(cors.fast, 'GET', '/api/v1', { Origin: 'https://app.example.test' });
    expect(answer.status).to.equal(200);
    expect(answer.headers).to.include('Access-Control-Allow-Origin: https://app.example.test');
    expect(koaSeen).to.equal(before + 1);
  });

  it('leaves to Koa a fixed answer whose metrics throw, which then answers as through app.callback()', async function () {
    const throwing: Telemetry = {
      ...noopTelemetry,
      requestFinished: () => {
        throw new Error('metrics registry broken');
      },
    };
    const { koa, fast } = await both({ telemetry: throwing });
    const byKoa = await send(koa, 'GET', '/livez', { 'X-Request-Id': 'same-id' });
    const before = koaSeen;
    const byFast = await send(fast, 'GET', '/livez', { 'X-Request-Id': 'same-id' });
    expect(koaSeen, 'handed to Koa').to.equal(before + 1);
    expect(byFast).to.deep.equal(byKoa);
    expect(byFast.status).to.equal(500);
  });
});
