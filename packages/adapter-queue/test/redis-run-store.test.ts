import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { runListKey, type Run, type RunListFilter } from '@svc/core';
import { aRun, RecordingLogger, runEventLogContract, runLifecycleContract, runStoreContract, type RunEventLogHarness } from '@svc/core/testing';
import { DEFAULT_FINISHED_RUN_TTL_SECONDS, RedisRunStore, type RedisRunStoreOptions } from '@svc/adapter-queue';
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
  function harness(): Promise<RunEventLogHarness> {
    n += 1;
    const keyPrefix = `${filePrefix}${n}:`;
    const indexKeyPrefix = `${filePrefix}${n}-index:`;
    const eventsKeyPrefix = `${filePrefix}${n}-events:`;
    const store = new RedisRunStore({ client, keyPrefix, indexKeyPrefix, eventsKeyPrefix, eventPollMs: 20 });
    return Promise.resolve({
      store,
      close: async () => {
        expect(store.watcherCount).to.equal(0, 'nothing left watched');
        await deleteKeys(client, keyPrefix);
        await deleteKeys(client, indexKeyPrefix);
        await deleteKeys(client, eventsKeyPrefix);
      },
    });
  }

  runStoreContract('RedisRunStore', harness);
  runLifecycleContract('RedisRunStore', harness);
  runEventLogContract('RedisRunStore', harness);

  it('keeps a run\'s events stream as long as its record: expires with it once final, never while not final', async function () {
    n += 1;
    const keyPrefix = `${filePrefix}${n}:`;
    const store = new RedisRunStore({ client, keyPrefix, finishedRunTtlSeconds: 60 });
    const run = aRun({ runId: `ttl-${n}` });
    await store.save(run);
    await store.transition(run.runId, { to: 'running', at: new Date(), countAttempt: true });
    expect(await client.ttl(store.eventsKeyOf(run.runId))).to.equal(-1);
    await store.transition(run.runId, { to: 'succeeded', at: new Date() });
    const ttl = await client.ttl(store.eventsKeyOf(run.runId));
    expect(ttl).to.be.within(1, 60);
    expect(await client.ttl(store.keyOf(run.runId))).to.be.within(ttl - 1, 60);
    await client.del(store.eventsKeyOf(run.runId), store.keyOf(run.runId), store.indexKeyOf(run.accountId), store.indexKeyOf(run.accountId, run.agentId));
  });

  it('watch: a lost Redis tells every listener the error once, and stops polling', async function () {
    n += 1;
    const { Redis: RedisClient } = await import('ioredis');
    const doomed = new RedisClient(client.options.port ?? 6379, client.options.host ?? '127.0.0.1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    await doomed.connect();
    const store = new RedisRunStore({ client: doomed, keyPrefix: `${filePrefix}${n}:`, eventPollMs: 10, operationTimeoutMs: 200 });
    const errors: unknown[] = [];
    const unwatch = store.watch('lost-run', (error) => {
      if (error !== undefined) errors.push(error);
    });
    doomed.disconnect();
    for (let i = 0; i < 200 && errors.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(errors).to.have.length(1);
    expect(store.watcherCount).to.equal(0);
    unwatch();
  });

  describe('the run list index', function () {
    let keyPrefix: string;
    let indexKeyPrefix: string;
    beforeEach(function () {
      n += 1;
      keyPrefix = `${filePrefix}${n}:`;
      indexKeyPrefix = `${filePrefix}${n}-index:`;
    });

    const storeWith = (options: Partial<RedisRunStoreOptions> = {}): RedisRunStore => new RedisRunStore({ client, keyPrefix, indexKeyPrefix, ...options });
    /** `count` queued runs of account `acct_list`, one a second (the last is the newest), with `overrides` per run. */
    const runsOf = (count: number, overrides: (i: number) => Partial<Run> = () => ({})): Run[] =>
      Array.from({ length: count }, (_, i) => aRun({ runId: `list-${String(i).padStart(4, '0')}`, accountId: 'acct_list', createdAt: new Date(Date.UTC(2026, 3, 1, 0, 0, i)), ...overrides(i) }));
    /** Follows `next` to the last page: the runs, and the pages' sizes. */
    async function listAll(store: RedisRunStore, filter: RunListFilter, limit: number): Promise<{ ids: string[]; sizes: number[] }> {
      const ids: string[] = [];
      const sizes: number[] = [];
      let after: string | undefined;
      do {
        const page = await store.list('acct_list', filter, { limit, ...(after === undefined ? {} : { after }) });
        ids.push(...page.items.map((r) => r.runId));
        sizes.push(page.items.length);
        after = page.next;
      } while (after !== undefined && sizes.length < 100);
      return { ids, sizes };
    }

    it('indexes a run created through the queue transaction (create), per account and per agent, members being runListKey', async function () {
      const store = storeWith();
      const run = aRun({ runId: 'created-1', accountId: 'acct:x', agentId: 'agent%y' });
      expect(await store.create(run)).to.equal(undefined);
      expect(await client.zrange(`${indexKeyPrefix}a:acct%3Ax`, '0', '-1')).to.deep.equal([runListKey(run)]);
      expect(await client.zrange(`${indexKeyPrefix}g:acct%3Ax:agent%25y`, '0', '-1')).to.deep.equal([runListKey(run)]);
      expect((await store.list('acct:x', { agentId: 'agent%y' }, { limit: 5 })).items).to.deep.equal([run]);
      // `:` and `%` are escaped: another account and agent pair that would concatenate the same is another key.
      expect((await store.list('acct', { agentId: 'x:agent%y' }, { limit: 5 })).items).to.deep.equal([]);
      // A second create of the same run changes nothing, in the record or the index.
      expect(await store.create({ ...run, status: 'running' })).to.equal('queued');
      expect(await client.zcard(`${indexKeyPrefix}a:acct%3Ax`)).to.equal(1);
    });

    it('keeps the index keys for the finished-run retention plus 30 days, refreshed by each new run; forever with retention 0', async function () {
      const store = storeWith();
      await store.create(aRun({ runId: 'ttl-1', accountId: 'acct_ttl' }));
      const ttl = await client.ttl(`${indexKeyPrefix}a:acct_ttl`);
      expect(ttl).to.be.within(DEFAULT_FINISHED_RUN_TTL_SECONDS + 30 * 24 * 3600 - 5, DEFAULT_FINISHED_RUN_TTL_SECONDS + 30 * 24 * 3600);
      expect(await client.ttl(`${indexKeyPrefix}g:acct_ttl:agent_demo`)).to.equal(ttl);
      const keeping = storeWith({ finishedRunTtlSeconds: 0 });
      await keeping.save(aRun({ runId: 'ttl-2', accountId: 'acct_keep' }));
      expect(await client.ttl(`${indexKeyPrefix}a:acct_keep`)).to.equal(-1);
    });

    it('skips and drops the entries of runs whose record expired or was withdrawn', async function () {
      const store = storeWith();
      const runs = runsOf(6);
      for (const run of runs) await store.save(run);
      // As if their records had expired: gone from under the index.
      await client.del(store.keyOf('list-0001'), store.keyOf('list-0004'));
      expect((await listAll(store, {}, 2)).ids).to.deep.equal(['list-0005', 'list-0003', 'list-0002', 'list-0000']);
      expect(await client.zrange(store.indexKeyOf('acct_list'), '0', '-1')).to.deep.equal(['list-0005', 'list-0003', 'list-0002', 'list-0000'].map((id) => runListKey(runs.find((r) => r.runId === id) as Run)));
      // With a status filter too, and in the agent's index.
      await client.del(store.keyOf('list-0002'));
      expect((await listAll(store, { agentId: 'agent_demo', status: 'queued' }, 10)).ids).to.deep.equal(['list-0005', 'list-0003', 'list-0000']);
      expect(await client.zcard(store.indexKeyOf('acct_list', 'agent_demo'))).to.equal(3);
    });

    it('skips a record it cannot read (a corrupt hash, another type under the key), lists the runs around it, and reports the run id only', async function () {
      const logger = new RecordingLogger();
      const store = storeWith({ logger });
      for (const run of runsOf(6)) await store.save(run);
      // list-0003: a hash of no known layout whose status still reads `queued`; list-0001: a string.
      await client.del(store.keyOf('list-0003'), store.keyOf('list-0001'));
      await client.hset(store.keyOf('list-0003'), 'status', 'queued', 'run', '{"message":"customer text"', 'attempts', '0');
      await client.set(store.keyOf('list-0001'), 'customer text');
      const expected = ['list-0005', 'list-0004', 'list-0002', 'list-0000'];
      // Pages stay full: an unreadable record is not counted as a listed run.
      expect(await listAll(store, {}, 2)).to.deep.equal({ ids: expected, sizes: [2, 2] });
      // With a status filter (the status is read first: WRONGTYPE there too), in the agent's index.
      expect((await listAll(store, { agentId: 'agent_demo', status: 'queued' }, 10)).ids).to.deep.equal(expected);
      // One error line each time a list reads such a record (a page ending just before one reads it again on the next).
      const reported = new Set(logger.at('error').map((l) => `${String(l.fields.run_id)} ${String(l.fields.reason)}`));
      expect([...reported]).to.have.members(['list-0003 invalid_record', 'list-0001 wrong_type']);
      expect(logger.text()).to.not.include('customer text');
      // Left for an operator to look at: neither the records nor their entries are dropped.
      expect(await client.zcard(store.indexKeyOf('acct_list'))).to.equal(6);
      expect(await client.exists(store.keyOf('list-0003'), store.keyOf('list-0001'))).to.equal(2);
    });

    it('lists a run saved again with another creation time or agent once, at its new place, and drops the stale entries', async function () {
      const store = storeWith();
      const [older, moved] = runsOf(2) as [Run, Run];
      await store.save(older);
      await store.save(moved);
      const movedAgain: Run = { ...moved, agentId: 'agent_moved', createdAt: new Date(older.createdAt.getTime() - 1000) };
      await store.save(movedAgain);
      expect((await listAll(store, {}, 1)).ids).to.deep.equal([older.runId, moved.runId]);
      expect((await listAll(store, { agentId: 'agent_demo' }, 5)).ids).to.deep.equal([older.runId]);
      expect((await listAll(store, { agentId: 'agent_moved' }, 5)).ids).to.deep.equal([moved.runId]);
      expect(await client.zrange(store.indexKeyOf('acct_list'), '0', '-1')).to.deep.equal([runListKey(older), runListKey(movedAgain)]);
      expect(await client.zrange(store.indexKeyOf('acct_list', 'agent_demo'), '0', '-1')).to.deep.equal([runListKey(older)]);
    });

    it('prunes dead entries as runs are created, so that an index an account never lists stays near its live runs', async function () {
      const store = storeWith();
      for (const run of runsOf(200)) await store.create(run);
      // Every record expires...
      await deleteKeys(client, keyPrefix);
      // ...while 200 new runs are created: each examines 3 entries from a random rank.
      for (const run of runsOf(200, (i) => ({ runId: `new-${i}`, createdAt: new Date(Date.UTC(2026, 4, 1, 0, 0, i)) }))) await store.create(run);
      const size = await client.zcard(store.indexKeyOf('acct_list'));
      console.log(`      index entries after 200 dead and 200 new: ${size}`);
      // 207 measured (a handful of dead entries left); 300 would be half of the dead ones left.
      expect(size).to.be.below(300);
    });

    it('examines at most maxListScan entries a call: a sparse status filter answers short pages with next, and paging still reaches every match', async function () {
      const store = storeWith({ maxListScan: 50 });
      const runs = runsOf(130, (i) => ({ status: i === 0 || i === 64 ? 'queued' : 'succeeded', attempts: 1 }));
      for (const run of runs) await store.save(run);
      const first = await store.list('acct_list', { status: 'queued' }, { limit: 10 });
      expect(first.items, '50 succeeded runs examined, none queued').to.deep.equal([]);
      expect(first.next).to.equal(runListKey(runs[80] as Run), 'next: the 50th entry examined');
      const { ids, sizes } = await listAll(store, { status: 'queued' }, 10);
      expect(ids).to.deep.equal(['list-0064', 'list-0000']);
      expect(sizes).to.deep.equal([0, 1, 1]);
      // Without a filter (and without dead entries) pages are full: limit + 1 entries are examined.
      expect((await listAll(store, {}, 20)).sizes).to.deep.equal([20, 20, 20, 20, 20, 20, 10]);
    });

    it('refuses an index prefix that record keys could reach, or that could reach them', function () {
      expect(() => new RedisRunStore({ client, keyPrefix: 'p:run-record:', indexKeyPrefix: 'p:run-record:index:' })).to.throw(RangeError);
      expect(() => new RedisRunStore({ client, keyPrefix: 'p:run-record:', indexKeyPrefix: 'p:' })).to.throw(RangeError);
      expect(() => new RedisRunStore({ client, keyPrefix: 'records' })).to.throw(RangeError, /indexKeyPrefix must be given/u);
      expect(new RedisRunStore({ client, keyPrefix: 'p:run-record:' }).indexKeyOf('a')).to.equal('p:run-record-index:a:a');
    });
  });
});
