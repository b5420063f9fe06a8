import { expect } from 'chai';
import {
  DependencyUnavailableError,
  RunLifecycle,
  wireBody,
  type AttemptOptions,
  type InsertRecord,
  type StartRun,
  type RecordWriteInput,
  type RunProcessor,
} from '@svc/core';
import {
  aConnection,
  aPrincipal,
  aRun,
  aStoredCredential,
  FailingAgentCatalog,
  FailingConnectionCatalog,
  FailingCredentialStore,
  FailingRateLimitStore,
  FailingRecordWriter,
  FailingRunQueue,
  FailingRunStore,
  InjectedFaultError,
  InMemoryAgentCatalog,
  InMemoryConnectionCatalog,
  InMemoryCredentialStore,
  InMemoryRateLimitStore,
  InMemoryRecordWriter,
  InMemoryRunQueue,
  ManualClock,
} from '@svc/core/testing';
import { AGENT, aRecordWrite, aWorld, CONNECTION, ORDERS, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

/** Options of an attempt with attempts left. */
const NOT_LAST: AttemptOptions = { lastAttempt: false, maxAttempts: 3 };

/** What `promise` rejected with; fails the test when it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.fail('expected a rejection, got a value');
}

/** Asserts `error` is the DependencyUnavailableError a real adapter throws, with an injected cause. */
function expectUnavailable(error: unknown, dependency: string): void {
  expect(error).to.be.instanceOf(DependencyUnavailableError).and.to.include({ dependency, message: `${dependency} is unavailable` });
  expect((error as Error).cause).to.be.instanceOf(InjectedFaultError);
}

describe('failing fakes (@svc/core/testing)', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  describe('the switch every failing fake has', function () {
    it('lets calls through until told, fails every call after failWith, and none after recover', async function () {
      const queue = new FailingRunQueue(w.queue);
      await queue.enqueue(aRun({ runId: 'r1' }));
      queue.failWith('unavailable');
      expectUnavailable(await rejectionOf(queue.enqueue(aRun({ runId: 'r2' }))), 'run_queue');
      expectUnavailable(await rejectionOf(queue.enqueue(aRun({ runId: 'r3' }))), 'run_queue');
      queue.recover();
      await queue.enqueue(aRun({ runId: 'r4' }));
      expect(w.runs.all().map((r) => r.runId)).to.deep.equal(['r1', 'r4']);
      expect(queue.failures).to.equal(2);
    });

    it('failNext(n) fails exactly the next n calls, also when they run concurrently', async function () {
      const queue = new FailingRunQueue(w.queue).failNext(2, 'unavailable');
      const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((runId) => queue.enqueue(aRun({ runId }))));
      expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected', 'fulfilled', 'fulfilled']);
      expect(w.runs.all().map((r) => r.runId)).to.deep.equal(['c', 'd']);
    });

    it('fails only the operations in `only`, and counts only those against failNext', async function () {
      const store = new FailingRunStore(w.runs).failNext(1, 'unavailable', { only: ['transition'] });
      await store.save(aRun({ runId: 'r1' }));
      expect((await store.get('r1'))?.status).to.equal('queued');
      expectUnavailable(await rejectionOf(store.transition('r1', { to: 'running', at: new Date() })), 'redis');
      expect((await store.transition('r1', { to: 'running', at: new Date() })).applied).to.equal(true);
      expect(store.failures).to.equal(1);
    });

    it('a later failWith or failNext replaces the earlier one', async function () {
      const writer = new FailingRecordWriter(w.writer).failWith('connection_unavailable').failNext(1, 'connection_timeout');
      const command = { connection: CONNECTION, entity: { schema: 'dbo', table: 'orders' }, values: { id: 1 }, route: 'default' } as const;
      expect(errorOf(await writer.insert(command)).code).to.equal('connection_timeout');
      expect(valueOf(await writer.insert(command))).to.deep.equal({ rowsAffected: 1 });
    });

    it('refuses a failNext count that is not a whole number ≥ 1', function () {
      const queue = new FailingRunQueue(w.queue);
      for (const count of [0, -1, 1.5, Number.NaN]) expect(() => queue.failNext(count, 'unavailable')).to.throw(RangeError, /whole number/);
    });
  });

  describe('FailingRunQueue', function () {
    function startRunOn(queue: FailingRunQueue<InMemoryRunQueue>): StartRun {
      return w.coreWith({ runQueue: queue }).startRun;
    }

    it('unavailable: StartRun rejects with DependencyUnavailableError(run_queue) after charging the request, and no run exists', async function () {
      const queue = new FailingRunQueue(w.queue).failWith('unavailable');
      const meter = w.rateLimits.meterFor(aPrincipal());
      const error = await rejectionOf(startRunOn(queue).execute({ principal: aPrincipal(), meter, agentId: AGENT.agentId, body: { message: 'hi' } }));
      expectUnavailable(error, 'run_queue');
      expect(meter.charged).to.equal(true);
      expect(w.runs.all()).to.deep.equal([]);
      expect(w.queue.take()).to.equal(undefined);
    });

    it('recovered: the same StartRun answers queued again', async function () {
      const queue = new FailingRunQueue(w.queue).failNext(1, 'unavailable');
      const startRun = startRunOn(queue);
      const input = () => ({ principal: aPrincipal(), meter: w.rateLimits.meterFor(aPrincipal()), agentId: AGENT.agentId, body: { message: 'hi' } });
      await rejectionOf(startRun.execute(input()));
      const started = valueOf(await startRun.execute(input()));
      expect(started.status).to.equal('queued');
      expect(queue.inner.take()).to.equal(started.run_id);
    });

    it('unavailable after applying: StartRun rejects, yet the run is recorded and scheduled (Redis committed, then died)', async function () {
      const queue = new FailingRunQueue(w.queue).failWith('unavailable', { applied: true });
      const meter = w.rateLimits.meterFor(aPrincipal());
      expectUnavailable(await rejectionOf(startRunOn(queue).execute({ principal: aPrincipal(), meter, agentId: AGENT.agentId, body: { message: 'hi' } })), 'run_queue');
      const [run] = w.runs.all();
      expect(run?.status).to.equal('queued');
      expect(w.queue.take()).to.equal(run?.runId);
    });

    it('names another dependency when told', async function () {
      const queue = new FailingRunQueue(w.queue, { dependency: 'sqs' }).failWith('unavailable');
      expectUnavailable(await rejectionOf(queue.enqueue(aRun())), 'sqs');
    });
  });

  describe('FailingRunStore', function () {
    const processed: string[] = [];
    const processor: RunProcessor = {
      process: (run) => {
        processed.push(run.runId);
        return Promise.resolve({ ok: true });
      },
    };
    beforeEach(function () {
      processed.length = 0;
    });

    it('unavailable: get, save and transition reject with DependencyUnavailableError(redis), changing nothing', async function () {
      await w.runs.save(aRun({ runId: 'r1' }));
      const store = new FailingRunStore(w.runs).failWith('unavailable');
      expectUnavailable(await rejectionOf(store.get('r1')), 'redis');
      expectUnavailable(await rejectionOf(store.save(aRun({ runId: 'r2' }))), 'redis');
      expectUnavailable(await rejectionOf(store.transition('r1', { to: 'running', at: new Date(), countAttempt: true })), 'redis');
      expect(w.runs.all()).to.deep.equal([aRun({ runId: 'r1' })]);
    });

    it('unavailable: GetRun rejects after charging the request', async function () {
      await w.runs.save(aRun({ runId: 'r1' }));
      const meter = w.rateLimits.meterFor(aPrincipal());
      const getRun = w.coreWith({ runStore: new FailingRunStore(w.runs).failWith('unavailable') }).getRun;
      expectUnavailable(await rejectionOf(getRun.execute({ principal: aPrincipal(), meter, runId: 'r1' })), 'redis');
      expect(meter.charged).to.equal(true);
    });

    it('unavailable: RunLifecycle.attempt rejects before processing, the run stays queued, and the retry after recovery runs it', async function () {
      await w.runs.save(aRun({ runId: 'r1' }));
      const store = new FailingRunStore(w.runs).failWith('unavailable');
      const lifecycle = new RunLifecycle({ store, processor, clock: w.clock });
      expectUnavailable(await rejectionOf(lifecycle.attempt('r1', NOT_LAST)), 'redis');
      expect(processed).to.deep.equal([]);
      expect(await w.runs.get('r1')).to.include({ status: 'queued', attempts: 0 });
      store.recover();
      expect(await lifecycle.attempt('r1', NOT_LAST)).to.deep.equal({ kind: 'succeeded' });
      expect(await w.runs.get('r1')).to.include({ status: 'succeeded', attempts: 1 });
    });

    it('lost while the run is processed: the attempt rejects with the run left running, and the next attempt finishes it', async function () {
      await w.runs.save(aRun({ runId: 'r1' }));
      const store = new FailingRunStore(w.runs);
      // Flipped mid-attempt, on the first one: its start went through, its finishing
      // transition meets Redis down.
      const flaky: RunProcessor = {
        process: async (run, context) => {
          if (processed.length === 0) store.failNext(1, 'unavailable', { only: ['transition'] });
          return processor.process(run, context);
        },
      };
      const lifecycle = new RunLifecycle({ store, processor: flaky, clock: w.clock });
      expectUnavailable(await rejectionOf(lifecycle.attempt('r1', NOT_LAST)), 'redis');
      expect(await w.runs.get('r1')).to.include({ status: 'running', attempts: 1 });
      expect(await lifecycle.attempt('r1', NOT_LAST)).to.deep.equal({ kind: 'succeeded' });
      expect(await w.runs.get('r1')).to.include({ status: 'succeeded', attempts: 2 });
      expect(processed).to.deep.equal(['r1', 'r1']);
    });
  });

  describe('FailingRecordWriter', function () {
    function insertOn(writer: FailingRecordWriter<InMemoryRecordWriter>): InsertRecord {
      return w.coreWith({ recordWriter: writer }).insertRecord;
    }
    const insert = (): RecordWriteInput => ({ ...aRecordWrite({ entity: ORDERS, values: { id: 1, sku: 'A-1' } }), meter: w.rateLimits.meterFor(aPrincipal()) });

    it('connection_timeout: InsertRecord answers connection_timeout (a result, not a throw) and no row is written', async function () {
      const writer = new FailingRecordWriter(w.writer).failWith('connection_timeout');
      const error = errorOf(await insertOn(writer).execute(insert()));
      expect(error).to.deep.equal({ code: 'connection_timeout', detail: 'The database did not answer in time; the outcome of the write is unknown if it was sent.' });
      expect(w.writer.received).to.deep.equal([]);
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal([]);
    });

    it('connection_timeout after applying: the row is written, and still the answer is connection_timeout', async function () {
      const writer = new FailingRecordWriter(w.writer).failWith('connection_timeout', { applied: true });
      expect(errorOf(await insertOn(writer).execute(insert())).code).to.equal('connection_timeout');
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal([{ id: 1, sku: 'A-1' }]);
    });

    it('connection_unavailable: UpdateRecord answers connection_unavailable with a detail naming no host', async function () {
      w.writer.defineTable(ORDERS, ['id', 'sku', 'qty', 'paid', 'note'], [{ id: 1, sku: 'A-1' }]);
      const writer = new FailingRecordWriter(w.writer).failWith('connection_unavailable', { only: ['update'] });
      const update = w.coreWith({ recordWriter: writer }).updateRecord;
      const body = { entity: ORDERS, key_column: 'id', key_value: 1, values: { sku: 'B-2' } };
      const error = errorOf(await update.execute({ ...aRecordWrite(body), meter: w.rateLimits.meterFor(aPrincipal()) }));
      expect(error.code).to.equal('connection_unavailable');
      expect(error.detail).to.not.match(/127\.0\.0\.1|localhost|sa\b|password/iu);
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal([{ id: 1, sku: 'A-1' }]);
      // `only: ['update']`: inserts still go through.
      expect(valueOf(await insertOn(writer).execute({ ...aRecordWrite({ entity: ORDERS, values: { id: 2 } }), meter: w.rateLimits.meterFor(aPrincipal()) }))).to.deep.equal({ rows_affected: 1 });
    });

    it('unexpected_error: InsertRecord rejects with an InjectedFaultError (a bug or an unmapped database error: a 500)', async function () {
      const writer = new FailingRecordWriter(w.writer).failWith('unexpected_error');
      const error = await rejectionOf(insertOn(writer).execute(insert()));
      expect(error).to.be.instanceOf(InjectedFaultError).and.not.to.be.instanceOf(DependencyUnavailableError);
      expect((error as InjectedFaultError).where).to.equal('FailingRecordWriter.insert');
    });
  });

  describe('FailingRateLimitStore', function () {
    const rule = { key: 'credential:acct_a:key_1', limit: 5, windowSeconds: 60 };

    it('unavailable: chargeAll rejects with DependencyUnavailableError(redis) and charges nothing; applied: it charges first', async function () {
      const inner = new InMemoryRateLimitStore(new ManualClock());
      const store = new FailingRateLimitStore(inner).failNext(1, 'unavailable');
      expectUnavailable(await rejectionOf(store.chargeAll([rule])), 'redis');
      expect((await store.chargeAll([rule])).windows[0]?.count).to.equal(1);
      store.failNext(1, 'unavailable', { applied: true });
      expectUnavailable(await rejectionOf(store.chargeAll([rule])), 'redis');
      expect((await store.chargeAll([rule])).windows[0]?.count).to.equal(3);
    });

    it('full: chargeAll refuses with every window at its limit and whole, charging nothing', async function () {
      const inner = new InMemoryRateLimitStore(new ManualClock());
      const agentRule = { key: 'agent:acct_a:agent_demo', limit: 30, windowSeconds: 10 };
      const store = new FailingRateLimitStore(inner).failWith('full');
      expect(await store.chargeAll([rule, agentRule])).to.deep.equal({
        charged: false,
        windows: [
          { count: 5, msLeft: 60_000 },
          { count: 30, msLeft: 10_000 },
        ],
      });
      store.recover();
      expect((await store.chargeAll([rule])).windows[0]?.count).to.equal(1);
    });

    it('unavailable: InsertRecord rejects before the writer is called', async function () {
      const policy = w.coreWith({ rateLimitStore: new FailingRateLimitStore(w.rateLimitStore).failWith('unavailable') }).rateLimits;
      const error = await rejectionOf(w.coreWith({}).insertRecord.execute({ ...aRecordWrite({ entity: ORDERS, values: { id: 1 } }), meter: policy.meterFor(aPrincipal()) }));
      expectUnavailable(error, 'redis');
      expect(w.writer.received).to.deep.equal([]);
    });

    it('full: StartRun answers rate_limited, Retry-After the window, and queues nothing', async function () {
      const policy = w.coreWith({ rateLimitStore: new FailingRateLimitStore(w.rateLimitStore).failWith('full') }).rateLimits;
      const meter = policy.meterFor(aPrincipal());
      const startRun = w.coreWith({}).startRun;
      const error = errorOf(await startRun.execute({ principal: aPrincipal(), meter, agentId: AGENT.agentId, body: { message: 'hi' } }));
      expect(error.code).to.equal('rate_limited');
      expect(meter.decision).to.include({ allowed: false, retryAfterSeconds: 60, remaining: 0 });
      expect(w.runs.all()).to.deep.equal([]);
    });
  });

  describe('FailingCredentialStore', function () {
    const KEY = 'svc-failing-fakes-key-000001';

    it('unavailable: Authenticate rejects for a credential it must look up, and answers 401s it decides without the store', async function () {
      const store = new FailingCredentialStore(new InMemoryCredentialStore([aStoredCredential(KEY)])).failWith('unavailable');
      const authenticate = w.coreWith({ credentials: store }).authenticate;
      expectUnavailable(await rejectionOf(authenticate.execute({ apiKeys: [KEY], authorizations: [], operation: 'insertRecord' })), 'credential_store');
      expect(errorOf(await authenticate.execute({ apiKeys: [], authorizations: [], operation: 'insertRecord' })).code).to.equal('missing_credential');
      expect(errorOf(await authenticate.execute({ apiKeys: ['no-prefix'], authorizations: [], operation: 'insertRecord' })).code).to.equal('invalid_credential');
      expect(store.failures).to.equal(1);
      store.recover();
      expect(valueOf(await authenticate.execute({ apiKeys: [KEY], authorizations: [], operation: 'insertRecord' })).credentialId).to.equal(aStoredCredential(KEY).credentialId);
    });
  });

  describe('FailingConnectionCatalog', function () {
    it('unavailable: a valid row write rejects after the charge and before the writer; an invalid one is refused without the lookup', async function () {
      const catalog = new FailingConnectionCatalog(new InMemoryConnectionCatalog([aConnection()])).failWith('unavailable');
      const insertRecord = w.coreWith({ connections: catalog }).insertRecord;
      const meter = w.rateLimits.meterFor(aPrincipal());
      expectUnavailable(await rejectionOf(insertRecord.execute({ ...aRecordWrite({ entity: ORDERS, values: { id: 1 } }), meter })), 'connection_catalog');
      expect(meter.charged).to.equal(true);
      expect(w.writer.received).to.deep.equal([]);
      const invalid = await insertRecord.execute({ ...aRecordWrite({ entity: ORDERS }), meter: w.rateLimits.meterFor(aPrincipal()) });
      expect(errorOf(invalid).code).to.equal('validation_failed');
      expect(catalog.failures).to.equal(1);
    });
  });

  describe('FailingAgentCatalog', function () {
    it('unavailable: StartRun rejects before charging or queueing; an invalid body is refused without the lookup', async function () {
      const agents = new FailingAgentCatalog(new InMemoryAgentCatalog([AGENT])).failWith('unavailable');
      const startRun = w.coreWith({ agents }).startRun;
      const meter = w.rateLimits.meterFor(aPrincipal());
      expectUnavailable(await rejectionOf(startRun.execute({ principal: aPrincipal(), meter, agentId: AGENT.agentId, body: { message: 'hi' } })), 'agent_catalog');
      expect(meter.charged).to.equal(false);
      expect(w.runs.all()).to.deep.equal([]);
      const invalid = await startRun.execute({ principal: aPrincipal(), meter: w.rateLimits.meterFor(aPrincipal()), agentId: AGENT.agentId, body: wireBody({}) });
      expect(errorOf(invalid).code).to.equal('validation_failed');
      expect(agents.failures).to.equal(1);
    });
  });
});
