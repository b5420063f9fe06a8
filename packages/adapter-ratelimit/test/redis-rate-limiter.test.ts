import { expect } from 'chai';
import { Redis } from 'ioredis';
import { rateLimiterContract } from '@svc/core/testing';
import { RedisRateLimiter } from '@svc/adapter-ratelimit';
import { RecordingLogger } from '@svc/core/testing';
import { freePort } from '../../../tools/test-support/ports.js';
import { deleteKeys, REDIS_URL, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';

describe('RedisRateLimiter (against the Redis at REDIS_URL)', function () {
  const runPrefix = uniquePrefix('rl');
  let client: Redis;
  let harnesses = 0;
  const credential = { key: 'credential:key_1', limit: 600, windowSeconds: 60 };
  const agent = { key: 'agent:agent_demo', limit: 30, windowSeconds: 60 };

  before(async function () {
    client = await redisOrSkip(this);
  });

  after(async function () {
    if (client === undefined) return;
    await deleteKeys(client, runPrefix);
    await client.quit();
  });

  rateLimiterContract('RedisRateLimiter', () => {
    const keyPrefix = `${runPrefix}contract-${harnesses++}:`;
    return Promise.resolve({ limiter: new RedisRateLimiter({ client, keyPrefix }), close: () => deleteKeys(client, keyPrefix) });
  });

  it('allows exactly 30 of 100 concurrent requests on one agent rule, and counts exactly 30', async function () {
    const keyPrefix = `${runPrefix}one-rule:`;
    const limiter = new RedisRateLimiter({ client, keyPrefix });
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume([agent])));
    expect(decisions.filter((d) => d.allowed)).to.have.length(30);
    expect(await client.get(`${keyPrefix}${agent.key}`)).to.equal('30');
  });

  it('with [credential, agent] rules, charges the credential exactly 30 times for 100 concurrent run starts', async function () {
    const keyPrefix = `${runPrefix}two-rules:`;
    const limiter = new RedisRateLimiter({ client, keyPrefix });
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume([credential, agent])));
    expect(decisions.filter((d) => d.allowed)).to.have.length(30);
    expect(await client.get(`${keyPrefix}${credential.key}`)).to.equal('30');
    expect(await client.get(`${keyPrefix}${agent.key}`)).to.equal('30');
    const refused = decisions.filter((d) => !d.allowed);
    expect(refused.every((d) => d.key === agent.key && d.remaining === 0 && d.retryAfterSeconds !== undefined)).to.equal(true);
  });

  it('shares the limits between instances (two clients, 50 concurrent requests each)', async function () {
    const keyPrefix = `${runPrefix}shared:`;
    const other = new Redis(REDIS_URL);
    try {
      // An injected client must be connected: until it is, the limiter uses its insurance.
      await waitUntil(() => other.status === 'ready', 'the second client never connected');
      const a = new RedisRateLimiter({ client, keyPrefix });
      const b = new RedisRateLimiter({ client: other, keyPrefix });
      const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).consume([credential, agent])));
      expect(decisions.filter((d) => d.allowed)).to.have.length(30);
    } finally {
      await other.quit();
    }
  });

  it('reports limit, remaining, reset (delta s) and resetAt (unix s) from the Redis window', async function () {
    const limiter = new RedisRateLimiter({ client, keyPrefix: `${runPrefix}fields:` });
    const before = Date.now() / 1000;
    const d = await limiter.consume([credential, agent]);
    expect(d).to.include({ allowed: true, key: agent.key, limit: 30, remaining: 29 });
    expect(d.resetSeconds).to.be.within(59, 60);
    expect(d.resetAt).to.be.within(Math.floor(before) + 59, Math.ceil(Date.now() / 1000) + 60);
    expect(d.retryAfterSeconds).to.equal(undefined);
  });

  it('takes one Redis round trip per request (EVALSHA), two only while Redis lacks the script', async function () {
    const limiter = new RedisRateLimiter({ client, keyPrefix: `${runPrefix}round-trips:` });
    await limiter.consume([credential, agent]); // loads the script if this server lacks it
    const sent: string[] = [];
    const original = client.sendCommand.bind(client);
    client.sendCommand = (command, stream) => {
      sent.push(command.name);
      return original(command, stream);
    };
    try {
      await limiter.consume([credential, agent]);
      await limiter.consume([credential]);
    } finally {
      client.sendCommand = original;
    }
    expect(sent).to.deep.equal(['evalsha', 'evalsha']);
  });

  describe('insurance when Redis fails', function () {
    it('falls back to memory with each limit divided by the instance count, warns once, and goes back to Redis', async function () {
      const keyPrefix = `${runPrefix}insurance:`;
      const logger = new RecordingLogger();
      // A dedicated client, so that "Redis fails" is this client losing its connection:
      // the shared server keeps running for everyone else.
      const own = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      own.on('error', () => undefined);
      const limiter = new RedisRateLimiter({ client: own, ownsClient: true, keyPrefix, instanceCount: 3, logger });
      try {
        await waitUntil(() => own.status === 'ready', 'the dedicated client never connected');
        for (let i = 0; i < 5; i++) expect((await limiter.consume([agent])).allowed).to.equal(true);

        own.disconnect();
        const during = await Promise.all(Array.from({ length: 20 }, () => limiter.consume([agent])));
        expect(during.filter((d) => d.allowed), 'ceil(30 / 3) = 10 per instance').to.have.length(10);
        expect(during.every((d) => d.limit === 10)).to.equal(true);
        expect(logger.at('warn'), 'one warning per outage, not per request').to.have.length(1);
        expect(logger.at('warn')[0]?.fields).to.include({ component: 'rate-limiter', instance_count: 3 });
        expect(JSON.stringify(logger.lines)).to.not.match(/127\.0\.0\.1|6379|redis:\/\//);

        await waitUntil(() => own.status === 'end', 'the dedicated client never closed');
        await own.connect();
        const back = await limiter.consume([agent]);
        expect(back).to.include({ allowed: true, limit: 30, remaining: 24 });
        expect(logger.at('info')).to.have.length(1);
        expect(await client.get(`${keyPrefix}${agent.key}`)).to.equal('6');
      } finally {
        await limiter.close();
      }
      await waitUntil(() => own.status === 'end', 'close() did not quit the owned client');
    });

    it('starts on the insurance when Redis never answers (a closed port), warning once', async function () {
      const port = await freePort();
      const logger = new RecordingLogger();
      const limiter = await RedisRateLimiter.connect({ host: '127.0.0.1', port, retryStrategy: () => null }, { instanceCount: 2, logger, readyTimeoutMs: 1_000 });
      try {
        const rule = { key: 'agent:offline', limit: 4, windowSeconds: 60 };
        const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume([rule])));
        expect(decisions.filter((d) => d.allowed)).to.have.length(2);
        expect(logger.at('warn')).to.have.length(1);
        expect(JSON.stringify(logger.lines)).to.not.include(String(port));
      } finally {
        await limiter.close();
      }
    });
  });
});

/** Polls `condition` on each turn of the event loop until it holds or 5 s pass. */
async function waitUntil(condition: () => boolean, message: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

