import { request } from 'node:http';
import { rateLimitHeaders, setRateLimitHeaders } from '@svc/adapter-http';
import type { RateLimitDecision } from '@svc/core';
import { expect } from 'chai';
import { apiKey, runPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

/** An answer as it came off the socket: header names with their case, in order. */
interface RawAnswer {
  readonly status: number;
  /** `[name, value]` in wire order, without `Date` (it changes every second). */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

function raw(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i] ?? '', res.rawHeaders[i + 1] ?? '']);
        resolve({ status: res.statusCode ?? 0, headers: pairs.filter(([name]) => name !== 'Date'), body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The answer with its fresh request id replaced, to compare two answers. */
function withoutRequestId(answer: RawAnswer): RawAnswer {
  return { ...answer, headers: answer.headers.map(([name, value]) => [name, name === 'X-Request-Id' ? '<id>' : value] as const) };
}

const names = (answer: RawAnswer): string[] => answer.headers.map(([name]) => name);
const value = (answer: RawAnswer, name: string): string | undefined => answer.headers.find(([n]) => n === name)?.[1];

describe('adapter-http: wire format', function () {
  let apps: RunningApps;
  afterEach(async function () {
    await apps.close();
  });

  describe('precomputed answers (index, documents, /livez)', function () {
    const spellings: Record<string, readonly string[]> = {
      '/api/v1': ['/api/v1/', '/API/V1'],
      '/openapi.yaml': ['/openapi.yaml/', '/OpenAPI.yaml'],
      '/docs/api-reference/openapi.yaml': ['/docs/api-reference/openapi.yaml/'],
      '/llms.txt': ['/LLMS.txt'],
      '/docs': ['/docs/', '/Docs'],
      '/.well-known/oauth-protected-resource': ['/.well-known/oauth-protected-resource/'],
      '/livez': ['/livez/', '/LIVEZ'],
    };

    it('answer the exact path and every spelling the router accepts with the same bytes', async function () {
      apps = await startApps();
      for (const [path, others] of Object.entries(spellings)) {
        for (const method of ['GET', 'HEAD']) {
          const exact = withoutRequestId(await raw(apps.url, method, path));
          expect(exact.status, `${method} ${path}`).to.equal(200);
          for (const other of others) expect(withoutRequestId(await raw(apps.url, method, other)), `${method} ${other}`).to.deep.equal(exact);
        }
      }
    });

    it('send the index headers in order, with the exact media type, and 304 on a matching If-None-Match', async function () {
      apps = await startApps();
      const index = await raw(apps.url, 'GET', '/api/v1');
      expect(names(index)).to.deep.equal(['X-Request-Id', 'ETag', 'Cache-Control', 'Content-Type', 'Content-Length', 'Connection', 'Keep-Alive']);
      expect(value(index, 'Content-Type')).to.equal('application/json; charset=utf-8');
      expect(value(index, 'Cache-Control')).to.equal('public, max-age=300');
      expect(value(index, 'Content-Length')).to.equal(String(Buffer.byteLength(index.body)));
      for (const path of ['/api/v1', '/api/v1/']) {
        const notModified = await raw(apps.url, 'GET', path, { 'if-none-match': `W/${value(index, 'ETag') ?? ''}` });
        expect(notModified.status, path).to.equal(304);
        expect(names(notModified), path).to.deep.equal(['X-Request-Id', 'ETag', 'Cache-Control', 'Connection', 'Keep-Alive']);
        expect(notModified.body, path).to.equal('');
      }
      expect(value(await raw(apps.url, 'GET', '/openapi.yaml'), 'Content-Type')).to.equal('application/yaml; charset=utf-8');
      expect(value(await raw(apps.url, 'GET', '/llms.txt'), 'Content-Type')).to.equal('text/plain; charset=utf-8');
      const livez = await raw(apps.url, 'GET', '/livez');
      expect(names(livez)).to.deep.equal(['X-Request-Id', 'Content-Type', 'Content-Length', 'Connection', 'Keep-Alive']);
      expect(livez.body).to.equal('{"status":"ok"}');
    });

    it('put the deprecation headers of a deprecated index before ETag, on both paths', async function () {
      const link = 'https://example.com/changelog#index';
      apps = await startApps({ deprecations: { describeApi: { deprecatedAt: new Date('2026-12-01T00:00:00Z'), sunsetAt: new Date('2027-06-01T00:00:00Z'), link } } });
      for (const path of ['/api/v1', '/api/v1/']) {
        const index = await raw(apps.url, 'GET', path);
        expect(names(index).slice(0, 5), path).to.deep.equal(['X-Request-Id', 'Deprecation', 'Link', 'Sunset', 'ETag']);
        expect(value(index, 'Deprecation')).to.equal('@1796083200');
        expect(value(index, 'Link')).to.equal(`<${link}>; rel="deprecation"; type="text/html"`);
        expect(value(index, 'Sunset')).to.equal('Tue, 01 Jun 2027 00:00:00 GMT');
      }
    });

    it('log one access line for a precomputed answer, like any other', async function () {
      apps = await startApps();
      await raw(apps.url, 'GET', '/api/v1', { 'x-request-id': 'wire-1' });
      const line = apps.logger.lines.find((l) => l.fields['request_id'] === 'wire-1');
      expect(line?.message).to.equal('request');
      expect(line?.fields).to.include({ method: 'GET', path: '/api/v1', status: 200 });
    });
  });

  describe('metered answers', function () {
    it('send a run start with X-Request-Id, Location, the six rate-limit headers, then the body headers', async function () {
      apps = await startApps();
      const body = JSON.stringify({ message: 'hello' });
      const answer = await raw(apps.url, 'POST', runPath(), { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' }, body);
      expect(answer.status, answer.body).to.equal(202);
      expect(names(answer)).to.deep.equal([
        'X-Request-Id',
        'Location',
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'Content-Type',
        'Content-Length',
        'Connection',
        'Keep-Alive',
      ]);
      expect(value(answer, 'Content-Type')).to.equal('application/json; charset=utf-8');
      expect(value(answer, 'Location')).to.equal((JSON.parse(answer.body) as { data: { status_url: string } }).data.status_url);
    });

    it('send problem details as application/problem+json, without a charset', async function () {
      apps = await startApps();
      const answer = await raw(apps.url, 'POST', runPath(), { 'content-type': 'application/json' }, '{}');
      expect(answer.status).to.equal(401);
      expect(value(answer, 'Content-Type')).to.equal('application/problem+json');
    });
  });

  describe('rate-limit headers', function () {
    const allowed: RateLimitDecision = { allowed: true, limit: 600, remaining: 599, resetSeconds: 60, resetAt: 1_800_000_060, key: 'credential:k' };
    const refusedNoRetry: RateLimitDecision = { allowed: false, limit: 30, remaining: 0, resetSeconds: 12, resetAt: 1_800_000_012, key: 'agent:a' };
    const refused: RateLimitDecision = { ...refusedNoRetry, retryAfterSeconds: 7 };

    it('are set one by one in the order and with the values of rateLimitHeaders', function () {
      for (const decision of [allowed, refused, refusedNoRetry]) {
        const set: [string, string][] = [];
        setRateLimitHeaders({ setHeader: (name, v) => set.push([name, v]) }, decision);
        expect(set).to.deep.equal(Object.entries(rateLimitHeaders(decision)));
      }
      expect(rateLimitHeaders(refused)['Retry-After']).to.equal('7');
      expect(rateLimitHeaders(refusedNoRetry)['Retry-After']).to.equal('12');
      expect(rateLimitHeaders(allowed)).to.not.have.property('Retry-After');
    });
  });
});
