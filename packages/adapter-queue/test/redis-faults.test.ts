import { DependencyUnavailableError } from '@svc/core';
import { aRun, eventually } from '@svc/core/testing';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { BullMqRuns, DemoRunProcessor } from '@svc/adapter-queue';
import { startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';
import { RecordingNotifier } from './support/runs.js';

// docs/CONTRACT.md "Dependencies and faults": a lost, failing or paused Redis becomes the core's
// DependencyUnavailableError within the bound, and the same process works again after.
const BOUND_MS = 300;
/** Generous slack over the bound for a loaded 2-core machine; the measured figure is printed. */
const SLACK_MS = 700;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; outcome: T | unknown }> {
  const started = performance.now();
  const outcome = await work().catch((error: unknown) => error);
  return { ms: Math.round(performance.now() - started), outcome };
}

describe('BullMqRuns when its own redis-server is killed, paused and restarted', function () {
  this.timeout(30_000);
  let server: RedisServer;
  let runs: BullMqRuns;
  const slowest: Record<string, number> = {};

  before(async function () {
    server = await startRedisServer({ appendOnly: true });
    runs = await BullMqRuns.connect({ redis: server.url, prefix: 'faults', attempts: 2, backoffMs: 20, operationTimeoutMs: BOUND_MS });
  });

  after(async function () {
    console.log(`      measured (bound ${BOUND_MS} ms): ${JSON.stringify(slowest)}`);
    server?.resume();
    await runs?.close(true);
    await server?.stop();
  });

  async function expectUnavailable(name: string, work: () => Promise<unknown>): Promise<void> {
    const { ms, outcome } = await timed(work);
    slowest[name] = Math.max(slowest[name] ?? 0, ms);
    expect(outcome, name).to.be.instanceOf(DependencyUnavailableError);
    expect(JSON.stringify({ message: (outcome as Error).message }), 'no host or port in the message').to.not.include(String(server.port));
    expect(ms, `${name} answered within the bound + slack`).to.be.at.most(BOUND_MS + SLACK_MS);
  }

  /** The run ids of aRun's account, as the run list answers them. */
  const listed = async (): Promise<string[]> => (await runs.store.list(aRun().accountId, {}, { limit: 100 })).items.map((r) => r.runId);

  it('killed: enqueue, get, list and ready fail fast with DependencyUnavailableError; restarted: the same client serves again', async function () {
    await runs.queue.enqueue(aRun({ runId: 'before-kill' }));
    await server.kill();
    await expectUnavailable('killed enqueue', () => runs.queue.enqueue(aRun({ runId: 'during-kill' })));
    await expectUnavailable('killed get', () => runs.store.get('before-kill'));
    await expectUnavailable('killed list', () => runs.store.list(aRun().accountId, { status: 'queued' }, { limit: 20 }));
    const ready = await timed(() => runs.ready());
    expect(ready.outcome).to.equal(false);
    expect(ready.ms).to.be.at.most(BOUND_MS + SLACK_MS);

    await server.restart();
    await eventually(() => runs.ready(), 'the run queue client to reconnect', 5_000, 50);
    expect(await runs.store.get('before-kill'), 'kept by the AOF').to.include({ status: 'queued' });
    expect(await runs.store.get('during-kill'), 'a refused enqueue wrote nothing').to.equal(undefined);
    await runs.queue.enqueue(aRun({ runId: 'after-restart' }));
    expect(await runs.queue.scheduledCount('after-restart')).to.equal(1);
    // Listed: the index entry is written in the run's transaction, and kept by the AOF too.
    expect(await listed()).to.have.members(['before-kill', 'after-restart']);
  });

  it('paused (SIGSTOP): enqueue, get and list fail within the bound; resumed: the run refused meanwhile does not exist and never runs', async function () {
    server.pause();
    try {
      await expectUnavailable('paused enqueue', () => runs.queue.enqueue(aRun({ runId: 'during-pause', request: { kind: 'message', message: 'paused' } })));
      await expectUnavailable('paused get', () => runs.store.get('before-kill'));
      await expectUnavailable('paused list', () => runs.store.list(aRun().accountId, {}, { limit: 20 }));
      const ready = await timed(() => runs.ready());
      expect(ready.outcome).to.equal(false);
      expect(ready.ms).to.be.at.most(BOUND_MS + SLACK_MS);
    } finally {
      server.resume();
    }
    // The resumed server runs the transaction it received, then the withdrawal sent behind
    // it on the same connection, then this PING: once it answers, both have run.
    await eventually(() => runs.ready(), 'the run queue client to answer again', 5_000, 50);
    expect(await runs.store.get('during-pause'), 'withdrawn: a 503 means not created').to.equal(undefined);
    expect(await runs.store.events('during-pause'), 'its events stream withdrawn with it').to.deep.equal([]);
    expect(await listed(), 'nor listed (its index entry is dropped when read)').to.have.members(['before-kill', 'after-restart']);
    const notifier = new RecordingNotifier();
    await runs.startWorker(new DemoRunProcessor({ delayMs: 1 }), { notifier });
    await eventually(async () => ['before-kill', 'after-restart'].every((id) => notifier.count(id) === 1), 'the accepted runs to finish', 10_000, 20);
    // Its job, committed with the record (so the transaction did run on SIGCONT), is
    // skipped by the worker: completed without processing.
    await eventually(async () => (await runs.queue.queue.getJobState('during-pause')) === 'completed', 'the orphan job to be completed', 10_000, 20);
    expect(notifier.count('during-pause')).to.equal(0);
    expect(await runs.store.get('during-pause')).to.equal(undefined);
  });
});

describe('BullMqRuns when its own redis-server forgets its scripts (SCRIPT FLUSH)', function () {
  this.timeout(30_000);
  let server: RedisServer | undefined;
  let runs: BullMqRuns | undefined;

  afterEach(async function () {
    await runs?.close(true);
    await server?.stop();
  });

  it('still adds the job of every run started after it: never a queued record without its job', async function () {
    server = await startRedisServer();
    runs = await BullMqRuns.connect({ redis: server.url, prefix: 'flush', operationTimeoutMs: 2_000 });
    await runs.queue.enqueue(aRun({ runId: 'before-flush' }));
    expect(await runs.queue.scheduledCount('before-flush')).to.equal(1);
    const admin = new Redis(server.url);
    try {
      expect(await admin.script('FLUSH')).to.equal('OK');
    } finally {
      admin.disconnect();
    }
    // Before the fix: ioredis kept sending EVALSHA inside the MULTI, each NOSCRIPT was
    // let through, and both runs were recorded `queued` with no job (scheduledCount 0).
    for (const runId of ['after-flush-1', 'after-flush-2']) {
      await runs.queue.enqueue(aRun({ runId }));
      expect((await runs.store.get(runId))?.status).to.equal('queued');
      expect(await runs.queue.scheduledCount(runId)).to.equal(1);
    }
  });
});
