// Issue 10 part 2: every close is bounded, names what it abandons or loses, and "no
// bound" (a non-finite one) never turns into "give up at once".
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunProcessingResult, RunProcessor } from '@svc/core';
import { aRun, eventually } from '@svc/core/testing';
import { expect } from 'chai';
import { BullMqRuns, InMemoryRuns, QUIT_TIMEOUT_MS, RUN_WORKER_STOP_SLACK_MS, within } from '@svc/adapter-queue';
import { startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';

/** A processor that never ends: only a grace can end the wait for it. */
const hanging: RunProcessor = { process: () => new Promise<RunProcessingResult>(() => undefined) };

describe('within', function () {
  it('waits without a timer when the bound is not finite or longer than a Node timer holds', async function () {
    // Node clamps setTimeout(Infinity) to 1 ms: such a bound used to time out at once.
    expect(await within(sleep(30, 'v'), Number.POSITIVE_INFINITY)).to.deep.equal({ outcome: 'done', value: 'v' });
    expect(await within(sleep(30, 'w'), 2 ** 31)).to.deep.equal({ outcome: 'done', value: 'w' });
  });

  it('times out past a finite bound, and reports a rejection as failed', async function () {
    expect(await within(new Promise(() => undefined), 10)).to.deep.equal({ outcome: 'timeout' });
    const failed = await within(Promise.reject(new Error('x')), 1_000);
    expect(failed.outcome).to.equal('failed');
  });
});

describe('InMemoryRuns: a bounded close names the runs it loses', function () {
  it('names the run in progress when the grace ends and every run still queued', async function () {
    const runs = new InMemoryRuns();
    const worker = await runs.startWorker(hanging);
    await runs.queue.enqueue(aRun({ runId: 'mem-hang' }));
    await eventually(async () => (await runs.store.get('mem-hang'))?.status === 'running', 'the run to start');
    await runs.queue.enqueue(aRun({ runId: 'mem-queued' }));
    const started = Date.now();
    const report = await worker.close(false, 100);
    const ms = Date.now() - started;
    console.log(`      figures: in-process worker close with graceMs 100 took ${ms} ms`);
    expect(report).to.deep.equal({ abandonedRunIds: [], lostRunIds: ['mem-hang'] });
    expect(ms).to.be.below(1_000);
    expect(worker.runsInProgress()).to.deep.equal(['mem-hang']);
    expect(await runs.close()).to.deep.equal({ abandonedRunIds: [], lostRunIds: ['mem-hang', 'mem-queued'] });
  });
});

describe('BullMqRuns.close with its own redis-server paused (SIGSTOP)', function () {
  this.timeout(30_000);
  let server: RedisServer | undefined;

  afterEach(async function () {
    server?.resume();
    await server?.stop();
  });

  it('ends within graceMs + the stop slack + one QUIT bound, naming the abandoned run and the three dropped clients', async function () {
    server = await startRedisServer();
    const runs = await BullMqRuns.connect({ redis: server.url, prefix: 'close-paths' });
    await runs.startWorker(hanging, { lockDurationMs: 1_000 });
    await runs.queue.enqueue(aRun({ runId: 'paused-1' }));
    await eventually(async () => (await runs.store.get('paused-1'))?.status === 'running', 'the run to start', 10_000);
    server.pause();
    const grace = 300;
    const started = Date.now();
    const report = await runs.close(false, grace);
    const ms = Date.now() - started;
    const bound = grace + RUN_WORKER_STOP_SLACK_MS + QUIT_TIMEOUT_MS;
    console.log(`      figures: close with Redis paused took ${ms} ms (bound ${bound} ms; the QUITs in series took > 5 s before)`);
    expect(report.abandonedRunIds).to.deep.equal(['paused-1']);
    expect([...(report.droppedClients ?? [])].sort()).to.deep.equal(['run-queue', 'run-queue-jobs', 'run-worker']);
    expect(ms).to.be.below(bound + 500);
  });
});
