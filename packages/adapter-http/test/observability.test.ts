import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createAdminApp, CORS_EXPOSED_HEADERS } from '@svc/adapter-http';
import { RecordingTelemetry } from '@svc/core/testing';
import { AGENT_ID, apiKey, call, recordsPath, runPath, SECRETS, startApps, anInsert, type RunningApps } from './support/harness.js';

describe('Observability of the HTTP adapter', function () {
  let apps: RunningApps | undefined;
  afterEach(async function () {
    await apps?.close();
    apps = undefined;
  });

  describe('request metrics', function () {
    it('count every answer by operation (the OpenAPI operationId, `unmatched` for 404 and 405) and status', async function () {
      const telemetry = new RecordingTelemetry();
      apps = await startApps({ settings: { telemetry }, limits: { credential: { limit: 100, windowSeconds: 60 }, agent: { limit: 1, windowSeconds: 60 } } });
      const { url, egressUrl } = apps;
      const statuses = [
        (await call(url, 'GET', '/api/v1')).status,
        (await call(url, 'GET', '/api/v1', { headers: { 'if-none-match': '*' } })).status,
        (await call(url, 'POST', runPath(), { headers: apiKey(SECRETS.keyA), json: { message: 'one' } })).status,
        (await call(url, 'POST', runPath(), { headers: apiKey(SECRETS.keyA), json: { message: 'two' } })).status,
        (await call(url, 'POST', runPath(), { json: { message: 'anonymous' } })).status,
        (await call(url, 'GET', '/api/v1/runs/nope', { headers: apiKey(SECRETS.keyA) })).status,
        (await call(url, 'GET', '/no/such/path')).status,
        (await call(url, 'DELETE', '/api/v1')).status,
        (await call(egressUrl, 'POST', `/v1${recordsPath().slice('/api/v1'.length)}`, { headers: apiKey(SECRETS.keyA), json: anInsert() })).status,
        (await call(url, 'GET', '/livez')).status,
      ];
      expect(statuses).to.deep.equal([200, 304, 202, 429, 401, 404, 404, 405, 201, 200]);
      expect(Object.fromEntries(telemetry.requests)).to.deep.equal({
        'describeApi|200': 1,
        'describeApi|304': 1,
        'startRun|202': 1,
        'startRun|429': 1,
        'startRun|401': 1,
        'getRun|404': 1,
        'unmatched|404': 1,
        'unmatched|405': 1,
        'insertRecordViaEgress|201': 1,
        'livez|200': 1,
      });
      expect(telemetry.durations.every((s) => s >= 0 && s < 10)).to.equal(true, 'durations in seconds');
    });
  });

  describe('access log lines', function () {
    it('carry request_id, operation, client_ip, and account_id and credential_id once authenticated, never the secret', async function () {
      apps = await startApps();
      const started = await call(apps.url, 'POST', runPath(), { headers: { ...apiKey(SECRETS.keyA), 'x-request-id': 'req-observed-1' }, json: { message: 'hi' } });
      expect(started.status).to.equal(202);
      await call(apps.url, 'GET', '/api/v1', { headers: { 'x-request-id': 'req-observed-2' } });
      await call(apps.url, 'GET', '/api/v1/runs/x', { headers: { ...apiKey('svc-not-a-known-key-000000000'), 'x-request-id': 'req-observed-3' } });
      const byId = (id: string) => apps?.logger.lines.find((l) => l.message === 'request' && l.fields['request_id'] === id)?.fields;
      expect(byId('req-observed-1')).to.include({ operation: 'startRun', account_id: 'acct_a', credential_id: 'key_a1', client_ip: '127.0.0.1', status: 202 });
      expect(byId('req-observed-2')).to.include({ operation: 'describeApi', client_ip: '127.0.0.1', status: 200 });
      expect(byId('req-observed-2')).not.to.have.any.keys('account_id', 'credential_id');
      expect(byId('req-observed-3')).to.include({ operation: 'getRun', status: 401 });
      expect(byId('req-observed-3')).not.to.have.any.keys('account_id', 'credential_id');
      expect(apps.logger.text()).not.to.include(SECRETS.keyA).and.not.to.include('svc-not-a-known-key');
      const runId = (started.body as { data: { run_id: string } }).data.run_id;
      expect((await apps.world.runs.get(runId))?.requestId, 'the run keeps the id of the request that started it').to.equal('req-observed-1');
    });
  });

  describe('trusted proxies', function () {
    /** A request with X-Forwarded-For and -Proto, from 127.0.0.1 (fetch cannot set them all). */
    function forwarded(base: string, id: string): Promise<number> {
      return new Promise((resolve, reject) => {
        const req = request(`${base}/api/v1`, { headers: { 'x-forwarded-for': '203.0.113.9, 10.1.2.3', 'x-forwarded-proto': 'https', 'x-request-id': id } }, (res) => {
          res.resume().once('end', () => resolve(res.statusCode ?? 0));
        });
        req.once('error', reject).end();
      });
    }

    it('believe X-Forwarded-For only from a trusted peer, stopping at the first untrusted hop', async function () {
      apps = await startApps({ settings: { trustedProxies: ['loopback', '10.0.0.0/8'] } });
      expect(await forwarded(apps.url, 'req-proxied')).to.equal(200);
      const line = apps.logger.lines.find((l) => l.fields['request_id'] === 'req-proxied');
      expect(line?.fields['client_ip']).to.equal('203.0.113.9');
    });

    it('ignore X-Forwarded-For from a peer that is not trusted (and by default)', async function () {
      for (const trustedProxies of [['10.0.0.0/8'], undefined]) {
        apps = await startApps(trustedProxies === undefined ? {} : { settings: { trustedProxies } });
        expect(await forwarded(apps.url, 'req-direct')).to.equal(200);
        expect(apps.logger.lines.find((l) => l.fields['request_id'] === 'req-direct')?.fields['client_ip']).to.equal('127.0.0.1');
        await apps.close();
        apps = undefined;
      }
    });
  });

  describe('CORS', function () {
    const ORIGIN = 'https://app.example.com';

    it('answers a configured origin with its own origin and the exposed headers, and an unknown one with no CORS header', async function () {
      apps = await startApps({ settings: { corsOrigins: [ORIGIN] } });
      const allowed = await call(apps.url, 'POST', runPath(AGENT_ID), { headers: { ...apiKey(SECRETS.keyA), origin: ORIGIN }, json: { message: 'from a browser' } });
      expect(allowed.status).to.equal(202);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal(ORIGIN);
      const exposed = (allowed.headers.get('access-control-expose-headers') ?? '').split(',');
      for (const name of ['X-Request-Id', 'RateLimit-Remaining', 'Retry-After', 'Location']) expect(exposed).to.include(name);
      expect(exposed).to.have.members([...CORS_EXPOSED_HEADERS]);
      expect(allowed.headers.get('vary')).to.match(/origin/i);

      const other = await call(apps.url, 'GET', '/api/v1', { headers: { origin: 'https://evil.example.net' } });
      expect(other.status).to.equal(200);
      expect(other.headers.get('access-control-allow-origin')).to.equal(null);
    });

    it('answers the preflight of a configured origin with 204, the methods and the headers a client sends', async function () {
      const telemetry = new RecordingTelemetry();
      apps = await startApps({ settings: { corsOrigins: [ORIGIN], telemetry } });
      const preflight = await call(apps.url, 'OPTIONS', runPath(AGENT_ID), {
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
      });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get('access-control-allow-origin')).to.equal(ORIGIN);
      expect(preflight.headers.get('access-control-allow-methods')).to.equal('GET,HEAD,POST,PATCH,PUT,DELETE');
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).to.include('x-api-key').and.include('authorization').and.include('content-type');
      expect(preflight.headers.get('access-control-max-age')).to.equal('600');
      expect(preflight.headers.get('x-request-id')).to.be.a('string');
      expect(telemetry.requests.get('preflight|204')).to.equal(1);
    });

    it('sends no CORS header at all by default', async function () {
      apps = await startApps();
      const answer = await call(apps.url, 'GET', '/api/v1', { headers: { origin: ORIGIN } });
      const preflight = await call(apps.url, 'OPTIONS', '/api/v1', { headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } });
      for (const a of [answer, preflight]) {
        expect([...a.headers.keys()].filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
      }
      expect(preflight.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
    });
  });

  describe('the admin app', function () {
    let admin: Server | undefined;
    afterEach(async function () {
      admin?.closeAllConnections();
      await new Promise<void>((resolve) => (admin ? admin.close(() => resolve()) : resolve()));
      admin = undefined;
    });

    async function startAdmin(up: boolean, draining = false): Promise<string> {
      const app = createAdminApp({
        metrics: () => Promise.resolve({ contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '# HELP x_total x\n# TYPE x_total counter\nx_total 1\n' }),
        readiness: { redis: () => Promise.resolve(up) },
        isDraining: () => draining,
      });
      admin = createServer(app.callback());
      await new Promise<void>((resolve) => admin?.listen(0, '127.0.0.1', () => resolve()));
      return `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
    }

    it('serves /metrics (no-store), /livez and /readyz, and 404 for anything else', async function () {
      const base = await startAdmin(true);
      const metrics = await call(base, 'GET', '/metrics');
      expect(metrics.status).to.equal(200);
      expect(metrics.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
      expect(metrics.headers.get('cache-control')).to.equal('no-store');
      expect(metrics.text).to.include('x_total 1');
      expect((await call(base, 'GET', '/livez')).body).to.deep.equal({ status: 'ok' });
      expect((await call(base, 'GET', '/readyz')).body).to.deep.equal({ status: 'ready', checks: { redis: 'ok' } });
      expect((await call(base, 'GET', '/api/v1')).status).to.equal(404);
      expect((await call(base, 'POST', '/metrics')).status).to.equal(404);
    });

    it('answers /readyz 503 like the public one when a check fails', async function () {
      const down = await startAdmin(false);
      const answer = await call(down, 'GET', '/readyz');
      expect([answer.status, answer.body]).to.deep.equal([503, { status: 'not_ready', checks: { redis: 'failing' } }]);
    });
  });
});
