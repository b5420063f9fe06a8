import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Run, RunProcessingResult, RunProcessor } from '@svc/core';
import { aRun, runQueueContract } from '@svc/core/testing';
import { BullMqRunQueue, BullMqRuns, DemoRunProcessor, INTERRUPTED_REASON, RedisRunStore, type BullMqRunsSettings } from '@svc/adapter-queue';
import { eventually as waitFor } from '@svc/core/testing';
import { deleteKeys, REDIS_URL, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';
import { expectCancelToWork, expectRunToSucceedOnce, RecordingNotifier, startFixture, type Child } from './support/runs.js';

describe('BullMqRuns (against the Redis at REDIS_URL)', function () {
  const runPrefix = uniquePrefix('q');
  let client: Redis;
  const opened: BullMqRuns[] = [];
  const children: Child[] = [];
  let n = 0;

  /** Runs on a prefix of their own, closed and deleted after the test. */
  async function openRuns(settings: Partial<BullMqRunsSettings> = {}, prefix = `${runPrefix}${n++}`): Promise<BullMqRuns> {
    const runs = await BullMqRuns.connect({ redis: REDIS_URL, prefix, attempts: 3, backoffMs: 20, ...settings });
    opened.push(runs);
    return runs;
  }

  before(async function () {
    client = await redisOrSkip(this);
  });

  afterEach(async function () {
    await Promise.all(children.splice(0).map((c) => c.kill()));
    await Promise.all(opened.splice(0).map((r) => r.close(true)));
  });

  after(async function () {
    if (client === undefined) return;
    await deleteKeys(client, runPrefix);
    await client.quit();
  });

  runQueueContract('BullMqRuns', async () => {
    const prefix = `${runPrefix}contract-${n++}`;
    const runs = await BullMqRuns.connect({ redis: REDIS_URL, prefix });
    return {
      queue: runs.queue,
      store: runs.store,
      scheduledCount: (runId) => runs.queue.scheduledCount(runId),
      close: async () => {
        await runs.close();
        await deleteKeys(client, prefix);
      },
    };
  });

  it("sends the run's MULTI on a request client that holds BullMQ's add script alone, the Queue's 64 scripts on a client of their own", async function () {
    const prefix = `${runPrefix}split-${n++}`;
    const requestClient = new Redis(REDIS_URL);
    const queueClient = new Redis(REDIS_URL);
    const store = new RedisRunStore({ client: requestClient, keyPrefix: `${prefix}:run-record:` });
    const queue = new BullMqRunQueue({ client: requestClient, queueClient, store, prefix, ownsClient: true });
    try {
      await queue.queue.waitUntilReady();
      const commands = (c: Redis): string[] => Object.keys(c).filter((name) => /^[A-Za-z]+:\d+\.\d+\.\d+$/u.test(name) && typeof (c as unknown as Record<string, unknown>)[name] === 'function');
      // ioredis copies every script of a client into each pipeline it makes (docs/decisions.md).
      expect(commands(requestClient).map((name) => name.split(':')[0])).to.deep.equal(['addStandardJob']);
      expect(commands(queueClient).length).to.be.above(30);
      await queue.enqueue(aRun({ runId: 'split-1' }));
      expect(await client.hget(store.keyOf('split-1'), 'status')).to.equal('queued');
      expect(await queue.scheduledCount('split-1')).to.equal(1);
      // An add script missing on the request client (BullMQ choosing another one): the
      // MULTI holds the record alone, and enqueue refuses and withdraws it, never a 202 without a job.
      for (const name of commands(requestClient)) delete (requestClient as unknown as Record<string, unknown>)[name];
      const refused = await queue.enqueue(aRun({ runId: 'split-2' })).then(() => 'accepted', (error: unknown) => (error as Error).message);
      expect(refused).to.match(/held 1 commands, not the record and the job/u);
      await waitFor(async () => (await client.exists(store.keyOf('split-2'))) === 0, 'the record of the refused run to be withdrawn');
      expect(await queue.scheduledCount('split-2')).to.equal(0);
    } finally {
      await queue.close();
      await deleteKeys(client, prefix);
    }
  });

  it('keeps the run record (with its request) in Redis, and trims finished jobs without losing it', async function () {
    const runs = await openRuns({ keepCompleted: { count: 0, ageSeconds: 0 } });
    const run = aRun({ runId: 'rec-1', request: { kind: 'message', message: 'hello' } });
    await runs.queue.enqueue(run);
    expect(await client.hget(runs.store.keyOf(run.runId), 'status')).to.equal('queued');
    await runs.startWorker(new DemoRunProcessor({ delayMs: 1 }));
    await waitFor(async () => (await runs.store.get(run.runId))?.status === 'succeeded', 'the run never succeeded');
    await waitFor(async () => (await runs.queue.scheduledCount(run.runId)) === 0, 'the completed job was not trimmed');
    // BullMQ takes the id again once its job is gone; the record says the run is done, so
    // the worker skips that job: the run is not processed a second time.
    await runs.queue.enqueue(run);
    await waitFor(async () => (await runs.queue.scheduledCount(run.runId)) === 0, 'the skipped job was not completed and trimmed');
    expect(await runs.store.get(run.runId)).to.deep.include({ status: 'succeeded', attempts: 1, request: run.request });
    const ttl = await client.ttl(runs.store.keyOf(run.runId));
    expect(ttl, 'a finished record expires after 7 days (core DEFAULT_RUN_RETENTION_SECONDS)').to.be.within(7 * 24 * 3600 - 5, 7 * 24 * 3600);
  });

  it('cancel: a queued run cancelled never reaches the processor (its job is skipped); a running one ends cancelled within 1 s; an ignored signal is abandoned after the grace', async function () {
    const runs = await openRuns();
    const { honouredMs, abandonedMs } = await expectCancelToWork(runs, (what) => `${what}-${n}`);
    expect(honouredMs).to.be.below(1000);
    expect(abandonedMs).to.be.within(300, 2000);
    expect(await client.hget(runs.store.keyOf(`cancel-queued-${n}`), 'status')).to.equal('cancelled');
  });

  it('follows a run through RunStore.get: queued → running → succeeded, notified once', async function () {
    const runs = await openRuns();
    const run = aRun({ runId: 'follow-1' });
    await expectRunToSucceedOnce(runs, run);
    expect(await runs.queue.queue.getJobState(run.runId)).to.equal('completed');
  });

  it('retries a throwing processor with BullMQ backoff, then fails the run with the reason after the last attempt', async function () {
    const runs = await openRuns({ attempts: 2, backoffMs: 50 });
    const processor = new CountingThrowingProcessor();
    const notifier = new RecordingNotifier();
    await runs.startWorker(processor, { notifier });
    await runs.queue.enqueue(aRun({ runId: 'throw-1' }));
    await waitFor(async () => (await runs.store.get('throw-1'))?.status === 'failed', 'the run never failed');
    expect(await runs.store.get('throw-1')).to.include({ attempts: 2, failureReason: 'Processing failed after 2 attempts.' });
    expect(processor.startedAt).to.have.length(2);
    expect((processor.startedAt[1] ?? 0) - (processor.startedAt[0] ?? 0), 'backoff of 50 ms').to.be.at.least(45);
    await waitFor(async () => (await runs.queue.queue.getJobState('throw-1')) === 'failed', 'the job is not failed');
    const job = await runs.queue.queue.getJob('throw-1');
    expect(job?.failedReason).to.equal('Processing failed after 2 attempts.');
    expect(JSON.stringify(job?.stacktrace ?? [])).to.not.include('10.0.0.7');
    expect(notifier.count('throw-1')).to.equal(1);
  });

  it('fails a run at once, without retries, when the processor answers ok: false', async function () {
    const runs = await openRuns({ attempts: 3 });
    const notifier = new RecordingNotifier();
    await runs.startWorker(new DemoRunProcessor({ delayMs: 1 }), { notifier });
    await runs.queue.enqueue(aRun({ runId: 'no-1', request: { kind: 'message', message: 'please [fail]' } }));
    await waitFor(async () => (await runs.store.get('no-1'))?.status === 'failed', 'the run never failed');
    expect(await runs.store.get('no-1')).to.include({ attempts: 1, failureReason: 'The demo agent was asked to fail.' });
    await waitFor(async () => (await runs.queue.queue.getJobState('no-1')) === 'failed', 'the job is not failed');
    expect(notifier.count('no-1')).to.equal(1);
  });

  it('lets exactly one of two racing final status changes apply (so the notifier runs once)', async function () {
    const runs = await openRuns();
    await runs.queue.enqueue(aRun({ runId: 'race-1' }));
    await runs.store.transition('race-1', { to: 'running', at: new Date(), countAttempt: true });
    const at = new Date();
    const outcomes = await Promise.all([
      runs.store.transition('race-1', { to: 'succeeded', at }),
      runs.store.transition('race-1', { to: 'failed', at, failureReason: 'late' }),
    ]);
    expect(outcomes.filter((o) => o.applied)).to.have.length(1);
    const final = await runs.store.get('race-1');
    expect(final?.status).to.equal(outcomes[0]?.applied === true ? 'succeeded' : 'failed');
    expect(final?.attempts).to.equal(1);
    expect((await runs.store.transition('no-such-run', { to: 'running', at })).applied).to.equal(false);
  });

  it('refuses to connect when Redis does not answer, naming no host', async function () {
    const error = await BullMqRuns.connect({ redis: { host: '127.0.0.1', port: 1, retryStrategy: () => null } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.equal('Redis for the run queue does not answer');
  });

  it('completes a run whose enqueuing process was killed (SIGKILL) before any worker ran', async function () {
    const prefix = `${runPrefix}${n++}`;
    const child = startFixture('enqueue-then-hang', { REDIS_URL, PREFIX: prefix, RUN_ID: 'orphan-1' });
    children.push(child);
    await waitFor(() => child.lines.includes('enqueued'), 'the child never enqueued', 15_000);
    await child.kill();
    const runs = await openRuns({}, prefix);
    expect(await runs.store.get('orphan-1'), 'readable from another process').to.include({ status: 'queued', attempts: 0 });
    const notifier = new RecordingNotifier();
    await runs.startWorker(new DemoRunProcessor({ delayMs: 1 }), { notifier });
    await waitFor(async () => (await runs.store.get('orphan-1'))?.status === 'succeeded', 'the orphaned run never succeeded');
    expect((await runs.store.get('orphan-1'))?.request).to.deep.equal({ kind: 'message', message: 'enqueued by a process that dies' });
    expect(notifier.count('orphan-1')).to.equal(1);
  });

  it('picks up the run of a worker killed (SIGKILL) mid-run; it succeeds exactly once', async function () {
    const prefix = `${runPrefix}${n++}`;
    const runs = await openRuns({}, prefix);
    await runs.queue.enqueue(aRun({ runId: 'stall-1' }));
    const child = startFixture('worker-hang', { REDIS_URL, PREFIX: prefix, LOCK_MS: '1000', STALLED_MS: '300' });
    children.push(child);
    await waitFor(async () => (await client.get(`${prefix}:started:stall-1`)) === '1', 'the child worker never started the run', 15_000);
    expect(await runs.store.get('stall-1')).to.include({ status: 'running', attempts: 1 });
    await child.kill();

    const processor = new RedisCountingProcessor(client, prefix);
    const notifier = new RecordingNotifier();
    await runs.startWorker(processor, { notifier, lockDurationMs: 1000, stalledIntervalMs: 300 });
    await waitFor(async () => (await runs.store.get('stall-1'))?.status === 'succeeded', 'the stalled run was never picked up', 15_000);
    expect(await runs.store.get('stall-1')).to.include({ status: 'succeeded', attempts: 2 });
    expect(await client.get(`${prefix}:started:stall-1`), 'started by the killed worker, then by the live one').to.equal('2');
    expect(await client.get(`${prefix}:completed:stall-1`), 'completed exactly once').to.equal('1');
    expect(notifier.count('stall-1')).to.equal(1);
  });

  it('a close bounded by graceMs abandons the run in progress, names it, and another worker picks it up once the lock expires', async function () {
    const prefix = `${runPrefix}${n++}`;
    const runs = await openRuns({}, prefix);
    await runs.queue.enqueue(aRun({ runId: 'grace-1' }));
    // A processor that never ends: only the grace can end the wait for it.
    const hanging: RunProcessor = { process: () => new Promise<RunProcessingResult>(() => undefined) };
    const worker = await runs.startWorker(hanging, { lockDurationMs: 1000, stalledIntervalMs: 300 });
    await waitFor(async () => (await runs.store.get('grace-1'))?.status === 'running', 'the run never started', 10_000);
    const closing = Date.now();
    const report = await worker.close(false, 300);
    const closeMs = Date.now() - closing;
    console.log(`      figures: close with graceMs 300 took ${closeMs} ms`);
    expect(report).to.deep.equal({ abandonedRunIds: ['grace-1'], droppedClients: [] });
    expect(closeMs).to.be.below(300 + 3_000);

    const other = await openRuns({}, prefix);
    const notifier = new RecordingNotifier();
    await other.startWorker(new DemoRunProcessor({ delayMs: 1 }), { notifier, lockDurationMs: 1000, stalledIntervalMs: 300 });
    await waitFor(async () => (await other.store.get('grace-1'))?.status === 'succeeded', 'the abandoned run was never picked up', 15_000);
    expect(await other.store.get('grace-1')).to.include({ status: 'succeeded', attempts: 2 });
    expect(notifier.count('grace-1')).to.equal(1);
  });

  it('fails a run that stalls more often than maxStalledCount, with a reason, notified once', async function () {
    const prefix = `${runPrefix}${n++}`;
    const runs = await openRuns({}, prefix);
    await runs.queue.enqueue(aRun({ runId: 'stall-2' }));
    const child = startFixture('worker-hang', { REDIS_URL, PREFIX: prefix, LOCK_MS: '1000', STALLED_MS: '300' });
    children.push(child);
    await waitFor(async () => (await client.get(`${prefix}:started:stall-2`)) === '1', 'the child worker never started the run', 15_000);
    await child.kill();

    const processor = new RedisCountingProcessor(client, prefix);
    const notifier = new RecordingNotifier();
    await runs.startWorker(processor, { notifier, lockDurationMs: 1000, stalledIntervalMs: 300, maxStalledCount: 0 });
    await waitFor(async () => (await runs.store.get('stall-2'))?.status === 'failed', 'the stalled run never failed', 15_000);
    expect(await runs.store.get('stall-2')).to.include({ failureReason: INTERRUPTED_REASON });
    expect(await client.get(`${prefix}:started:stall-2`), 'not processed again').to.equal('1');
    await waitFor(() => notifier.finished.length > 0, 'no notification');
    expect(notifier.count('stall-2')).to.equal(1);
  });
});

/** Throws on every attempt (with an address in the message) and remembers when each started. */
class CountingThrowingProcessor implements RunProcessor {
  readonly startedAt: number[] = [];
  process(): Promise<RunProcessingResult> {
    this.startedAt.push(Date.now());
    return Promise.reject(new Error('agent runtime down at 10.0.0.7'));
  }
}

/** Counts starts and completions per run in Redis, so "exactly once" spans processes. */
class RedisCountingProcessor implements RunProcessor {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}
  async process(run: Run): Promise<RunProcessingResult> {
    await this.redis.incr(`${this.prefix}:started:${run.runId}`);
    await this.redis.incr(`${this.prefix}:completed:${run.runId}`);
    return { ok: true };
  }
}
