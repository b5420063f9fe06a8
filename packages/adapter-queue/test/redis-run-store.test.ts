import type { Redis } from 'ioredis';
import { runLifecycleContract, runStoreContract, type RunStoreHarness } from '@svc/core/testing';
import { RedisRunStore } from '@svc/adapter-queue';
import { deleteKeys, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';

// The run store a BullMQ worker changes statuses in passes the same suites as core's
// InMemoryRunStore (core/test/memory/contracts.test.ts): one set of rules, two stores.
describe('RedisRunStore (against the Redis at REDIS_URL)', function () {
  const filePrefix = uniquePrefix('run-store');
  let client: Redis;
  let n = 0;

  before(async function () {
    client = await redisOrSkip(this);
  });

  after(async function () {
    if (client === undefined) return;
    await deleteKeys(client, filePrefix);
    await client.quit();
  });

  /** A store on a key prefix of its own, whose keys are deleted when the test ends. */
  function harness(): Promise<RunStoreHarness> {
    const keyPrefix = `${filePrefix}${n++}:`;
    return Promise.resolve({ store: new RedisRunStore({ client, keyPrefix }), close: () => deleteKeys(client, keyPrefix) });
  }

  runStoreContract('RedisRunStore', harness);
  runLifecycleContract('RedisRunStore', harness);
});
