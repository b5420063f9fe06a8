import { expect } from 'chai';
import { Redis } from 'ioredis';
import { rateLimitStoreContract } from '@svc/core/testing';
import { RedisRateLimitStore } from '@svc/adapter-ratelimit';
import { RecordingLogger } from '@svc/core/testing';
import { freePort } from '../../../tools/test-support/ports.js';
import { deleteKeys, REDIS_URL, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';

describe('RedisRateLimitStore (against the Redis at REDIS_URL)', function () {
  const runPrefix = uniquePrefix('rl');
  let client: Redis;
  let harnesses = 0;
  const credential = { key: 'credential:acct:key_1', limit: 600, windowSeconds: 60 };
  const agent = { key: 'agent:acct:agent_demo', limit: 30, windowSeconds: 60 };

  before(async function () {
    client = await redisOrSkip(this);
  });

  after(async function () {
    if (client === undefined) return;
    await deleteKeys(client, runPrefix);
    await client.quit();
  });

  rateLimitStoreContract('RedisRateLimitStore', () => {
    const keyPrefix = `${runPrefix}contract-${harnesses++}:`;
    return Promise.resolve({ store: new RedisRateLimitStore({ client, keyPrefix }), close: () => deleteKeys(client, keyPrefix) });
  });

  it('charges exactly 30 of 100 concurrent requests on one agent rule, and counts exactly 30', async function () {
    const keyPrefix = `${runPrefix}one-rule:`;
    const store = new RedisRateLimitStore({ client, keyPrefix });
    const charges = await Promise.all(Array.from({ length: 100 }, () => store.chargeAll([agent])));
    expect(charges.filter((c) => c.charged)).to.have.length(30);
    expect(await client.get(`${keyPrefix}${agent.key}`)).to.equal('30');
  });

  it('with [credential, agent] rules, charges the credential exactly 30 times for 100 concurrent run starts', async function () {
    const keyPrefix = `${runPrefix}two-rules:`;
    const store = new RedisRateLimitStore({ client, keyPrefix });
    const charges = await Promise.all(Array.from({ length: 100 }, () => store.chargeAll([credential, agent])));
    expect(charges.filter((c) => c.charged)).to.have.length(30);
    expect(await client.get(`${keyPrefix}${credential.key}`)).to.equal('30');
    expect(await client.get(`${keyPrefix}${agent.key}`)).to.equal('30');
    const refused = charges.filter((c) => !c.charged);
    expect(refused.every((c) => c.windows[1]?.count === 30 && (c.windows[1]?.msLeft ?? 0) > 0)).to.equal(true);
  });

  it('shares the windows between instances (two clients, 50 concurrent requests each)', async function () {
    const keyPrefix = `${runPrefix}shared:`;
    const other = new Redis(REDIS_URL);
    try {
      // An injected client must be connected: until it is, the store uses its insurance.
      await waitUntil(() => other.status === 'ready', 'the second client never connected');
      const a = new RedisRateLimitStore({ client, keyPrefix });
      const b = new RedisRateLimitStore({ client: other, keyPrefix });
      const charges = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).chargeAll([credential, agent])));
      expect(charges.filter((c) => c.charged)).to.have.length(30);
    } finally {
      await other.quit();
    }
  });

  it('answers each window\'s count and milliseconds left from Redis', async function () {
    const store = new RedisRateLimitStore({ client, keyPrefix: `${runPrefix}fields:` });
    const c = await store.chargeAll([credential, agent]);
    expect(c.charged).to.equal(true);
    expect(c.windows.map((w) => w.count)).to.deep.equal([1, 1]);
    for (const w of c.windows) expect(w.msLeft).to.be.within(59_000, 60_000);
  });

  it('takes one Redis round trip per request (EVALSHA), two only while Redis lacks the script', async function () {
    const store = new RedisRateLimitStore({ client, keyPrefix: `${runPrefix}round-trips:` });
    await store.chargeAll([credential, agent]); // loads the script if this server lacks it
    const sent: string[] = [];
    const original = client.sendCommand.bind(client);
    client.sendCommand = (command, stream) => {
      sent.push(command.name);
      return original(command, stream);
    };
    try {
      await store.chargeAll([credential, agent]);
      await store.chargeAll([credential]);
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
      const store = new RedisRateLimitStore({ client: own, ownsClient: true, keyPrefix, instanceCount: 3, logger });
      try {
        await waitUntil(() => own.status === 'ready', 'the dedicated client never connected');
        for (let i = 0; i < 5; i++) expect((await store.chargeAll([agent])).charged).to.equal(true);

        own.disconnect();
        const during = await Promise.all(Array.from({ length: 20 }, () => store.chargeAll([agent])));
        expect(during.filter((c) => c.charged), 'ceil(30 / 3) = 10 per instance').to.have.length(10);
        expect(logger.at('warn'), 'one warning per outage, not per request').to.have.length(1);
        expect(logger.at('warn')[0]?.fields).to.include({ component: 'rate-limiter', instance_count: 3 });
        expect(JSON.stringify(logger.lines)).to.not.match(/127\.0\.0\.1|6379|redis:\/\//);

        await waitUntil(() => own.status === 'end', 'the dedicated client never closed');
        await own.connect();
        const back = await store.chargeAll([agent]);
        expect(back.charged).to.equal(true);
        expect(back.windows[0]?.count, 'the 5 before the outage + this one').to.equal(6);
        expect(logger.at('info')).to.have.length(1);
        expect(await client.get(`${keyPrefix}${agent.key}`)).to.equal('6');
      } finally {
        await store.close();
      }
      await waitUntil(() => own.status === 'end', 'close() did not quit the owned client');
    });

    it('starts on the insurance when Redis never answers (a closed port), warning once', async function () {
      const port = await freePort();
      const logger = new RecordingLogger();
      const store = await RedisRateLimitStore.connect({ host: '127.0.0.1', port, retryStrategy: () => null }, { instanceCount: 2, logger, readyTimeoutMs: 1_000 });
      try {
        const rule = { key: 'agent:acct:offline', limit: 4, windowSeconds: 60 };
        const charges = await Promise.all(Array.from({ length: 10 }, () => store.chargeAll([rule])));
        expect(charges.filter((c) => c.charged)).to.have.length(2);
        expect(logger.at('warn')).to.have.length(1);
        expect(JSON.stringify(logger.lines)).to.not.include(String(port));
      } finally {
        await store.close();
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

