import { DependencyUnavailableError, fileListKey } from '@svc/core';
import { eventually, fileCatalogContract } from '@svc/core/testing';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { RedisFileCatalog } from '@svc/adapter-queue';
import { deleteKeys, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';
import { expectUnavailableWithin, startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';

// The file records every instance shares pass the suite core's InMemoryFileCatalog passes
// (core/test/memory/file-catalog-contract.test.ts): one set of rules, two catalogs.
describe('RedisFileCatalog (against the Redis at REDIS_URL)', function () {
  const filePrefix = uniquePrefix('file-catalog');
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

  /** A catalog on a key prefix of its own (so its due set is empty), whose keys are deleted when the test ends. */
  function harness(): Promise<{ catalog: RedisFileCatalog; close: () => Promise<void> }> {
    n += 1;
    const prefix = `${filePrefix}${n}`;
    return Promise.resolve({ catalog: new RedisFileCatalog(client, { prefix }), close: () => deleteKeys(client, prefix) });
  }

  /** The key prefix a catalog of {@link harness} was given. */
  const prefixOf = (catalog: RedisFileCatalog): string => catalog.keyOf('').slice(0, -':file:'.length);

  /** Every key that starts with `prefix` (SCAN, never KEYS, on a shared server). */
  async function keysUnder(prefix: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    return found;
  }

  fileCatalogContract('RedisFileCatalog', harness);

  it('keeps the indexes exactly in step with the records: nothing is left once every file is removed', async function () {
    const { catalog, close } = await harness();
    const base = { accountId: 'acct:x|y', fileName: 'a.pdf', contentType: 'application/pdf', sizeBytes: 3, runIds: [] };
    const at = new Date('2026-03-01T00:00:00Z');
    await catalog.create({ ...base, fileKey: 'file_1', status: 'pending', createdAt: at, expiresAt: at });
    await catalog.create({ ...base, fileKey: 'file_2', status: 'pending', createdAt: at, expiresAt: at });
    const [one, two] = [fileListKey({ createdAt: at, fileKey: 'file_1' }), fileListKey({ createdAt: at, fileKey: 'file_2' })];
    expect(await client.zrange(catalog.indexKeyOf('acct:x|y'), '0', '-1')).to.deep.equal([one, two]);
    await catalog.replace({ ...base, fileKey: 'file_1', status: 'ready', createdAt: at, expiresAt: at, sha256: 'b'.repeat(64), completedAt: at }, 'pending');
    await catalog.addRun('file_1', 'run-1', new Date('2026-03-02T00:00:00Z'));
    await catalog.replace({ ...base, fileKey: 'file_2', status: 'rejected', reason: 'refused', createdAt: at, expiresAt: at }, 'pending');
    expect(await client.zrange(catalog.indexKeyOf('acct:x|y', 'ready'), '0', '-1')).to.deep.equal([one]);
    expect(await client.zrange(catalog.indexKeyOf('acct:x|y', 'rejected'), '0', '-1')).to.deep.equal([two]);
    expect(await client.exists(catalog.indexKeyOf('acct:x|y', 'pending'))).to.equal(0);
    expect(await client.zrange(catalog.dueKey, '0', '-1', 'WITHSCORES')).to.deep.equal(['file_1', String(Date.parse('2026-03-02T00:00:00Z'))]);
    expect(await client.hget(catalog.keyOf('file_1'), 'runIds')).to.equal('["run-1"]');
    await catalog.remove('file_1');
    await catalog.remove('file_2');
    expect(await keysUnder(`${prefixOf(catalog)}:`)).to.deep.equal([]);
    await close();
  });

  it('throws, naming the file key only, when a key under the prefix holds no valid file record; replace leaves it as it was', async function () {
    const { catalog, close } = await harness();
    await client.hset(catalog.keyOf('file_bad'), 'v', '1', 'status', 'pending', 'fileName', 'customer text');
    const error = await catalog.get('file_bad').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(Error).and.not.instanceOf(DependencyUnavailableError);
    expect((error as Error).message).to.include('file_bad').and.not.include('customer text');
    const at = new Date('2026-03-01T00:00:00Z');
    const replacing = catalog.replace({ fileKey: 'file_bad', accountId: 'a', fileName: 'a.pdf', contentType: 'application/pdf', sizeBytes: 1, status: 'ready', createdAt: at, expiresAt: at, runIds: [] }, 'pending');
    expect(await replacing.catch((e: unknown) => e)).to.be.instanceOf(Error).and.not.instanceOf(DependencyUnavailableError);
    expect(await client.hgetall(catalog.keyOf('file_bad'))).to.deep.equal({ v: '1', status: 'pending', fileName: 'customer text' });
    await close();
  });
});

// docs/CONTRACT.md "Dependencies and faults": a lost or paused Redis is the core's
// DependencyUnavailableError within the bound (the request answers 503 fast). On a
// redis-server of the test's own: the shared one is never killed.
describe('RedisFileCatalog when its own redis-server is killed and paused', function () {
  this.timeout(30_000);
  const BOUND_MS = 300;
  // Slack over the bound for a loaded 2-core machine.
  const SLACK_MS = 700;
  let server: RedisServer;
  let catalog: RedisFileCatalog;

  before(async function () {
    server = await startRedisServer();
    catalog = await RedisFileCatalog.connect(server.url, { prefix: 'faults', operationTimeoutMs: BOUND_MS });
  });

  after(async function () {
    server?.resume();
    await catalog?.close();
    await server?.stop();
  });

  const expectUnavailable = (work: () => Promise<unknown>): Promise<number> => expectUnavailableWithin(server, work, BOUND_MS, SLACK_MS);


  it('paused (SIGSTOP) and killed: every call rejects with DependencyUnavailableError within the bound; restarted: the same catalog serves again', async function () {
    const at = new Date('2026-03-01T00:00:00Z');
    const file = { fileKey: 'file_faults', accountId: 'acct_f', fileName: 'a.pdf', contentType: 'application/pdf', sizeBytes: 1, status: 'pending' as const, createdAt: at, expiresAt: at, runIds: [] };
    await catalog.create(file);
    const calls: readonly (() => Promise<unknown>)[] = [
      () => catalog.get(file.fileKey),
      () => catalog.create({ ...file, fileKey: 'file_other' }),
      () => catalog.replace({ ...file, status: 'ready' }, 'pending'),
      () => catalog.addRun(file.fileKey, 'run-1', at),
      () => catalog.list(file.accountId, {}, { limit: 10 }),
      () => catalog.remove(file.fileKey),
      () => catalog.due(at, 10),
    ];
    server.pause();
    try {
      // At once: each waits out the bound on its own.
      await Promise.all(calls.map((call) => expectUnavailable(call)));
    } finally {
      server.resume();
    }
    await server.kill();
    for (const call of calls) await expectUnavailable(call);
    expect(await catalog.ping()).to.equal(false);
    await server.restart();
    // Without persistence the restarted server is empty: a create that succeeds shows the client reconnected.
    await eventually(async () => (await catalog.create({ ...file, fileKey: 'file_after' }).then(() => true, () => false)), 'the catalog to serve again', 5_000, 50);
    expect((await catalog.get('file_after'))?.fileKey).to.equal('file_after');
  });
});
