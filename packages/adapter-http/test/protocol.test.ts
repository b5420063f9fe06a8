import { request } from 'node:http';
import { expect } from 'chai';
import { expectData, expectProblem, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import {
  anInsert,
  apiKey,
  call,
  recordsPath,
  runPath,
  SECRETS,
  startApps,
  type Answer,
  type RunningApps,
} from './support/harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const key = apiKey(SECRETS.keyA);
const MiB = 1024 * 1024;

/** A JSON insert body of exactly `bytes` bytes (padding in a string value). */
function insertOfSize(bytes: number): string {
  const empty = JSON.stringify(anInsert({ values: { note: '' } }));
  const text = JSON.stringify(anInsert({ values: { note: 'x'.repeat(bytes - empty.length) } }));
  expect(Buffer.byteLength(text)).to.equal(bytes);
  return text;
}

/** Sends a body in chunks without Content-Length (Transfer-Encoding: chunked). */
function chunked(url: string, path: string, headers: Record<string, string>, chunks: string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const h = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') h.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: h, text, body: text === '' ? undefined : JSON.parse(text) });
      });
    });
    // The server may answer 413 and stop reading before every chunk is out.
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('adapter-http: protocol', function () {
  let apps: RunningApps;
  beforeEach(async function () {
    apps = await startApps();
  });
  afterEach(async function () {
    await apps.close();
  });

  describe('X-Request-Id', function () {
    it('echoes a valid incoming id on success and on errors', async function () {
      const id = 'req-2026.11_21:abc/DEF+0=~@';
      for (const answer of [
        await call(apps.url, 'GET', '/api/v1', { headers: { 'x-request-id': id } }),
        await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'x-request-id': id }, json: anInsert() }),
        await call(apps.url, 'GET', '/nowhere', { headers: { 'x-request-id': id } }),
      ]) {
        expect(answer.headers.get('x-request-id'), String(answer.status)).to.equal(id);
      }
      const problem = expectProblem(await call(apps.url, 'POST', recordsPath(), { headers: { 'x-request-id': id }, json: anInsert() }), 401, 'missing_credential');
      expect(problem.request_id).to.equal(id);
    });

    it('replaces an invalid id (spaces, 200 characters, control-free but odd characters) with a fresh one', async function () {
      const seen = new Set<string>();
      for (const bad of ['has spaces in it', 'a'.repeat(200), 'semi;colon', '<script>']) {
        const answer = await call(apps.url, 'GET', '/api/v1', { headers: { 'x-request-id': bad } });
        const got = answer.headers.get('x-request-id') ?? '';
        expect(got, bad).to.match(UUID);
        seen.add(got);
      }
      expect(seen.size, 'a fresh id per request').to.equal(4);
    });

    it('is on every answer: 200, 304, HEAD, OPTIONS, 404, 405, 401, 415, 413, 400', async function () {
      const etag = (await call(apps.url, 'GET', '/api/v1')).headers.get('etag') ?? '';
      const answers = [
        await call(apps.url, 'GET', '/api/v1'),
        await call(apps.url, 'GET', '/api/v1', { headers: { 'if-none-match': etag } }),
        await call(apps.url, 'HEAD', '/api/v1'),
        await call(apps.url, 'OPTIONS', recordsPath()),
        await call(apps.url, 'GET', '/api/v1/unknown'),
        await call(apps.url, 'PUT', recordsPath(), { headers: key, json: anInsert() }),
        await call(apps.url, 'POST', runPath(), { json: { message: 'x' } }),
        await call(apps.url, 'POST', runPath(), { headers: { ...key, 'content-type': 'text/plain' }, raw: 'hello' }),
        await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'application/json' }, raw: insertOfSize(MiB + 1) }),
        await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'application/json' }, raw: '{' }),
      ];
      expect(answers.map((a) => a.status)).to.deep.equal([200, 304, 200, 204, 404, 405, 401, 415, 413, 400]);
      for (const a of answers) expect(a.headers.get('x-request-id'), String(a.status)).to.match(UUID);
    });
  });

  describe('methods and paths', function () {
    it('answers 405 with Allow for another method on a known path', async function () {
      const cases: [string, string, string][] = [
        ['DELETE', recordsPath(), 'POST, PATCH, OPTIONS'],
        ['PUT', recordsPath(), 'POST, PATCH, OPTIONS'],
        ['GET', recordsPath(), 'POST, PATCH, OPTIONS'],
        ['POST', '/api/v1', 'GET, HEAD, OPTIONS'],
        ['GET', runPath(), 'POST, OPTIONS'],
        ['DELETE', '/api/v1/runs/abc', 'GET, HEAD, OPTIONS'],
        ['POST', '/openapi.yaml', 'GET, HEAD, OPTIONS'],
      ];
      for (const [method, path, allow] of cases) {
        const answer = await call(apps.url, method, path, { headers: key });
        expectProblem(answer, 405, 'method_not_allowed');
        expect(answer.headers.get('allow'), `${method} ${path}`).to.equal(allow);
      }
    });

    it('answers OPTIONS with 204 and Allow, without a body', async function () {
      for (const [path, allow] of [
        [recordsPath(), 'POST, PATCH, OPTIONS'],
        ['/api/v1', 'GET, HEAD, OPTIONS'],
        [runPath(), 'POST, OPTIONS'],
      ] as const) {
        const answer = await call(apps.url, 'OPTIONS', path);
        expect(answer.status).to.equal(204);
        expect(answer.headers.get('allow')).to.equal(allow);
        expect(answer.text).to.equal('');
      }
    });

    it('answers HEAD on the index with the GET headers and no body', async function () {
      const get = await call(apps.url, 'GET', '/api/v1');
      const head = await call(apps.url, 'HEAD', '/api/v1');
      expect(head.status).to.equal(200);
      expect(head.text).to.equal('');
      expect(head.headers.get('etag')).to.equal(get.headers.get('etag'));
      expect(head.headers.get('content-type')).to.equal(get.headers.get('content-type'));
      expect(head.headers.get('content-length')).to.equal(String(Buffer.byteLength(get.text)));
    });

    it('answers 404 problem details for unknown paths', async function () {
      for (const path of ['/', '/api', '/api/v2', '/api/v1/connection', '/api/v1/connections/x/y', '/api/v1/agents/a/run/x', '/v1/connections/x/records']) {
        const answer = await call(apps.url, 'GET', path, { headers: key });
        expectProblem(answer, 404, 'not_found');
      }
    });

    it('answers 304 to If-None-Match with the ETag, also in weak or list form; 200 otherwise', async function () {
      const etag = (await call(apps.url, 'GET', '/api/v1')).headers.get('etag') ?? '';
      expect(etag).to.match(/^"[^"]+"$/);
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const answer = await call(apps.url, 'GET', '/api/v1', { headers: { 'if-none-match': inm } });
        expect(answer.status, inm).to.equal(304);
        expect(answer.headers.get('etag')).to.equal(etag);
      }
      expect((await call(apps.url, 'GET', '/api/v1', { headers: { 'if-none-match': '"stale"' } })).status).to.equal(200);
    });
  });

  describe('request bodies', function () {
    it('reads a body sent as application/<vendor>+json like application/json', async function () {
      const answer = await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'application/vnd.svc+json' }, raw: JSON.stringify(anInsert()) });
      expectData(answer, 201);
    });

    it('answers 415 to a text/plain or missing content type, before reading JSON', async function () {
      const body = JSON.stringify(anInsert());
      expectProblem(await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'text/plain' }, raw: body }), 415, 'unsupported_media_type');
      expectProblem(await call(apps.url, 'PATCH', recordsPath(), { headers: { ...key, 'content-type': 'text/plain' }, raw: body }), 415, 'unsupported_media_type');
      expectProblem(await call(apps.url, 'POST', runPath(), { headers: { ...key, 'content-type': 'text/plain' }, raw: '{"message":"x"}' }), 415, 'unsupported_media_type');
      // A byte body: fetch sends no Content-Type at all.
      const untyped = await call(apps.url, 'POST', recordsPath(), { headers: key, raw: new TextEncoder().encode(body) });
      expectProblem(untyped, 415, 'unsupported_media_type');
      expect(apps.world.writer.received).to.have.length(0);
      expect(apps.world.runs.all()).to.have.length(0);
    });

    it('accepts a body of exactly 1 MiB and answers 413 to one byte more', async function () {
      const headers = { ...key, 'content-type': 'application/json' };
      expectData(await call(apps.url, 'POST', recordsPath(), { headers, raw: insertOfSize(MiB) }), 201);
      const tooLarge = expectProblem(await call(apps.url, 'POST', recordsPath(), { headers, raw: insertOfSize(MiB + 1) }), 413, 'payload_too_large');
      expect(tooLarge.detail).to.include(String(MiB));
      expect(apps.world.writer.received).to.have.length(1);
    });

    it('answers 400 invalid_json to malformed JSON, naming no input', async function () {
      for (const raw of ['{', '{"entity": "dbo.orders", values: 1}', '[1,,2]', 'not json at all']) {
        const problem = expectProblem(await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'application/json' }, raw }), 400, 'invalid_json');
        expect(problem.detail).to.not.include(raw);
      }
      expect(apps.world.writer.received).to.have.length(0);
    });

    it('answers 400 validation_failed naming the field when the body is absent or not an object', async function () {
      const absent = expectProblem(await call(apps.url, 'POST', recordsPath(), { headers: key }), 400, 'validation_failed');
      expect(absent.errors).to.be.an('array').with.length.greaterThan(0);
      const scalar = expectProblem(await call(apps.url, 'POST', recordsPath(), { headers: key, json: 42 }), 400, 'validation_failed');
      expect(scalar.errors?.[0]?.path).to.equal('');
      const member = expectProblem(await call(apps.url, 'POST', recordsPath(), { headers: key, json: anInsert({ values: { qty: [1] } }) }), 400, 'validation_failed');
      expect(member.errors?.map((e) => e.path)).to.include('/values/qty');
      expect(member.detail).to.include('/values/qty');
    });

    it('with a custom smaller limit: 413 over it (also chunked), accepted at it', async function () {
      const small = await startApps({ bodyLimitBytes: 1024 });
      try {
        const headers = { ...key, 'content-type': 'application/json' };
        expectData(await call(small.url, 'POST', recordsPath(), { headers, raw: insertOfSize(1024) }), 201);
        const over = expectProblem(await call(small.url, 'POST', recordsPath(), { headers, raw: insertOfSize(1025) }), 413, 'payload_too_large');
        expect(over.detail).to.include('1024');
        const body = insertOfSize(4096);
        const inChunks = await chunked(small.url, recordsPath(), headers, [body.slice(0, 1000), body.slice(1000, 3000), body.slice(3000)]);
        expectProblem(inChunks, 413, 'payload_too_large');
        expectProblem(await call(small.url, 'POST', runPath(), { headers, raw: JSON.stringify({ message: 'y'.repeat(2000) }) }), 413, 'payload_too_large');
        expect(small.world.writer.received).to.have.length(1);
        expect(small.world.runs.all()).to.have.length(0);
      } finally {
        await small.close();
      }
    });

    it('sends application/problem+json and rate-limit headers on every authenticated body failure', async function () {
      const headers = { ...key, 'content-type': 'application/json' };
      const answers = [
        expectProblem(await call(apps.url, 'POST', recordsPath(), { headers, raw: '{' }), 400, 'invalid_json'),
        expectProblem(await call(apps.url, 'POST', runPath(), { headers: { ...key, 'content-type': 'text/csv' }, raw: 'a,b' }), 415, 'unsupported_media_type'),
      ];
      expect(answers).to.have.length(2);
      expectRateLimitHeaders(await call(apps.url, 'POST', recordsPath(), { headers, raw: '{' }), true);
      expectRateLimitHeaders(await call(apps.url, 'POST', runPath(), { headers: { ...key, 'content-type': 'text/csv' }, raw: 'a,b' }), true);
      expectRateLimitHeaders(await call(apps.url, 'PATCH', recordsPath(), { headers, raw: insertOfSize(MiB + 10) }), true);
    });
  });
});
