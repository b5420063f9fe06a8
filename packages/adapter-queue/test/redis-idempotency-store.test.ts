import { eventually, idempotencyStoreContract } from '@svc/core/testing';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { RedisIdempotencyStore } from '@svc/adapter-queue';
import { deleteKeys, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';
import { expectUnavailableWithin, startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';

// The Redis store of Idempotency-Keys passes the suite core's InMemoryIdempotencyStore
// passes (core/test/memory/contracts.test.ts): one set of rules, two stores.
describe('RedisIdempotencyStore (against the Redis at REDIS_URL)', function () {
  const prefix = uniquePrefix('idempotency');
  let client: Redis;

  before(async function () {
    client = await redisOrSkip(this);
  });

  after(async function () {
    if (client === undefined) return;
    await deleteKeys(client, prefix);
    await client.quit();
  });

  idempotencyStoreContract('RedisIdempotencyStore', () => Promise.resolve({ store: new RedisIdempotencyStore(client, { prefix }), close: () => Promise.resolve() }));

  it('two stores on one Redis (two instances) share keys: one claims, the other sees it in flight, then its answer', async function () {
    const [one, two] = [new RedisIdempotencyStore(client, { prefix }), new RedisIdempotencyStore(client, { prefix })];
    const claim = await one.claim('shared-scope', 'fp', 60_000);
    expect(claim.outcome).to.equal('claimed');
    expect(await two.claim('shared-scope', 'fp', 60_000)).to.deep.equal({ outcome: 'in_flight', fingerprint: 'fp' });
    if (claim.outcome !== 'claimed') return;
    await one.complete('shared-scope', claim.token, { status: 201, headers: { 'Content-Type': 'application/json' }, body: Buffer.from('{"data":{"rows_affected":1}}') }, 60_000);
    const seen = await two.claim('shared-scope', 'fp', 60_000);
    expect(seen.outcome).to.equal('completed');
    expect(seen.outcome === 'completed' && Buffer.from(seen.answer.body).toString()).to.equal('{"data":{"rows_affected":1}}');
    // Stored under the prefix, with the TTL asked for (ms).
    const ttl = await client.pttl(`${prefix}:idempotency:shared-scope`);
    expect(ttl).to.be.within(1, 60_000);
  });
});

// docs/CONTRACT.md "Dependencies and faults": a lost or paused Redis is the core's
// DependencyUnavailableError within the bound (the request answers 503 fast).
describe('RedisIdempotencyStore when its own redis-server is killed and paused', function () {
  this.timeout(30_000);
  const BOUND_MS = 300;
  // Slack over the bound for a loaded 2-core machine.
  const SLACK_MS = 700;
  let server: RedisServer;
  let store: RedisIdempotencyStore;

  before(async function () {
    server = await startRedisServer();
    store = await RedisIdempotencyStore.connect(server.url, { prefix: 'faults', operationTimeoutMs: BOUND_MS });
  });

  after(async function () {
    server?.resume();
    await store?.close();
    await server?.stop();
  });

  const expectUnavailable = (work: () => Promise<unknown>): Promise<number> => expectUnavailableWithin(server, work, BOUND_MS, SLACK_MS);


  it('paused (SIGSTOP) and killed: claim and release fail within the bound; restarted: the same store serves again', async function () {
    const claim = await store.claim('fault-scope', 'fp', 60_000);
    expect(claim.outcome).to.equal('claimed');
    server.pause();
    try {
      await expectUnavailable(() => store.claim('other-scope', 'fp', 60_000));
      await expectUnavailable(() => store.release('fault-scope', 'x'));
    } finally {
      server.resume();
    }
    await server.kill();
    await expectUnavailable(() => store.claim('other-scope', 'fp', 60_000));
    await server.restart();
    await eventually(async () => (await store.claim('after-restart', 'fp', 60_000).catch(() => undefined))?.outcome === 'claimed', 'the store to serve again', 5_000, 50);
  });
});
