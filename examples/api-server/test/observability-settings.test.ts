import { sha256Hex } from '@svc/core';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { ConfigError, settingsFrom, startServer, type RunningServer } from '@svc/api-server';
import { deleteKeys, REDIS_URL, redisOrSkip } from '../../../tools/test-support/redis.js';
import { scrape, valueOf } from './support/metrics.js';

describe('Observability settings', function () {
  it('default to an admin listener on 127.0.0.1:9464 (worker 9465), no CORS origin and no trusted proxy', function () {
    expect(settingsFrom({}, {}).observability).to.deep.equal({
      admin: { enabled: true, host: '127.0.0.1', port: 9464, workerPort: 9465 },
      corsOrigins: [],
      trustedProxies: [],
    });
  });

  it('read admin_listen, cors.origins (lower-cased) and trusted_proxies', function () {
    const settings = settingsFrom(
      { admin_listen: { host: '10.0.0.5', port: 9100, worker_port: 9101 }, cors: { origins: ['https://App.Example.com', 'http://localhost:3000'] }, trusted_proxies: ['10.0.0.0/8', '127.0.0.1', 'loopback', '::1'] },
      {},
    );
    expect(settings.observability).to.deep.equal({
      admin: { enabled: true, host: '10.0.0.5', port: 9100, workerPort: 9101 },
      corsOrigins: ['https://app.example.com', 'http://localhost:3000'],
      trustedProxies: ['10.0.0.0/8', '127.0.0.1', 'loopback', '::1'],
    });
  });

  it('refuse a bad trusted proxy, a CORS origin with a path or a wildcard, and an unknown admin field, naming the field', function () {
    expect(() => settingsFrom({ trusted_proxies: ['10.0.0.0/8', 'not-an-address'] }, {})).to.throw(ConfigError, /trusted_proxies\[1\]: trusted proxy "not-an-address"/u);
    expect(() => settingsFrom({ cors: { origins: ['https://app.example.com/path'] } }, {})).to.throw(ConfigError, /cors\.origins\[0\]/u);
    expect(() => settingsFrom({ cors: { origins: ['*'] } }, {})).to.throw(ConfigError, /cors\.origins\[0\]/u);
    expect(() => settingsFrom({ admin_listen: { address: '0.0.0.0' } }, {})).to.throw(ConfigError, /admin_listen\.address/u);
  });

  it('admin_listen.enabled: false starts no admin listener', async function () {
    const server = await startServer(
      settingsFrom({ base_url: 'http://127.0.0.1:1', listen: { port: 0 }, egress: { url: 'http://127.0.0.1:2', listen: { port: 0 } }, admin_listen: { enabled: false }, worker: { enabled: false } }, {}),
    );
    try {
      expect(server.adminPort).to.equal(undefined);
    } finally {
      await server.stop();
    }
  });
});

describe('Metrics of a server on Redis (in process)', function () {
  this.timeout(30_000);
  const KEY = 'svc-observability-redis-key-0123456789';
  const prefix = `svc-test-metrics-${process.pid}-${Date.now()}`;
  let redis: Redis;
  let server: RunningServer | undefined;

  before(async function () {
    redis = await redisOrSkip(this);
  });
  after(async function () {
    await server?.stop();
    if (redis !== undefined) {
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
  });

  it('report Redis up and the runs waiting in the BullMQ queue, read at the scrape', async function () {
    server = await startServer(
      settingsFrom(
        {
          base_url: 'http://127.0.0.1:1',
          listen: { port: 0 },
          egress: { url: 'http://127.0.0.1:2', listen: { port: 0 } },
          admin_listen: { port: 0 },
          redis_url: REDIS_URL,
          redis_prefix: prefix,
          worker: { enabled: false },
          accounts: [{ id: 'acct_m', api_keys: [{ id: 'key_m', sha256: sha256Hex(KEY) }], agents: [{ id: 'agent_m' }] }],
        },
        {},
      ),
    );
    const admin = `http://127.0.0.1:${server.adminPort as number}`;
    const before = await scrape(admin);
    expect(valueOf(before, 'svc_dependency_up', { dependency: 'redis' })).to.equal(1);
    expect(valueOf(before, 'svc_run_queue_depth')).to.equal(0);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/agents/agent_m/run`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `queued ${i}` }),
      });
      expect(res.status).to.equal(202);
      await res.arrayBuffer();
    }
    const after = await scrape(admin);
    expect(valueOf(after, 'svc_run_queue_depth'), 'no worker: the three runs wait').to.equal(3);
    expect(valueOf(after, 'svc_runs_started_total')).to.equal(3);
    expect(valueOf(after, 'svc_rate_limit_decisions_total', { scope: 'credential', outcome: 'allowed' })).to.equal(3);
  });
});
