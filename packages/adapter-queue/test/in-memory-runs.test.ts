import { expect } from 'chai';
import type { Run, RunProcessingResult, RunProcessor } from '@svc/core';
import { aRun, runQueueContract } from '@svc/core/testing';
import { DemoRunProcessor, InMemoryRuns, LogNotifier } from '@svc/adapter-queue';
import { eventually as waitFor, RecordingLogger } from '@svc/core/testing';
import { expectCancelToWork, expectRunToSucceedOnce, GatedProcessor, RecordingNotifier } from './support/runs.js';

runQueueContract('InMemoryRuns', () => {
  const runs = new InMemoryRuns();
  return Promise.resolve({ queue: runs.queue, store: runs.store, close: async () => void (await runs.close()) });
});

describe('InMemoryRuns with an InProcessRunWorker', function () {
  let runs: InMemoryRuns;
  beforeEach(function () {
    runs = new InMemoryRuns();
  });
  afterEach(async function () {
    await runs.close();
  });

  it('cancel: a queued run cancelled never reaches the processor; a running one ends cancelled within 1 s; an ignored signal is abandoned after the grace', async function () {
    const { honouredMs, abandonedMs } = await expectCancelToWork(runs, (what) => `mem-${what}`);
    expect(honouredMs).to.be.below(1000);
    expect(abandonedMs).to.be.within(300, 2000);
  });

  it('moves a run queued → running → succeeded and notifies once', async function () {
    const run = aRun({ runId: 'mem-ok' });
    const stored = await expectRunToSucceedOnce(runs, run);
    expect(stored?.updatedAt.getTime()).to.be.greaterThan(run.createdAt.getTime());
  });

  it('fails a run at once with the processor reason when it answers ok: false', async function () {
    const processor = new GatedProcessor({ ok: false, reason: 'The file could not be read.' });
    processor.release();
    const notifier = new RecordingNotifier();
    await runs.startWorker(processor, { notifier, attempts: 3, backoffMs: 1 });
    await runs.queue.enqueue(aRun({ runId: 'mem-no' }));
    await waitFor(async () => (await runs.store.get('mem-no'))?.status === 'failed', 'the run never failed');
    expect(await runs.store.get('mem-no')).to.include({ attempts: 1, failureReason: 'The file could not be read.' });
    expect(processor.calls).to.have.length(1);
    expect(notifier.count('mem-no')).to.equal(1);
  });

  it('retries a throwing processor with backoff, then fails the run with a safe reason', async function () {
    const processor = new ThrowingProcessor();
    const notifier = new RecordingNotifier();
    await runs.startWorker(processor, { notifier, attempts: 3, backoffMs: 20 });
    await runs.queue.enqueue(aRun({ runId: 'mem-throw' }));
    await waitFor(async () => (await runs.store.get('mem-throw'))?.status === 'failed', 'the run never failed');
    const failed = await runs.store.get('mem-throw');
    expect(failed).to.include({ attempts: 3, failureReason: 'Processing failed after 3 attempts.' });
    expect(processor.startedAt).to.have.length(3);
    const [a, b, c] = processor.startedAt as [number, number, number];
    expect(b - a, 'first backoff: 20 ms').to.be.at.least(19);
    expect(c - b, 'second backoff: 40 ms').to.be.at.least(39);
    expect(notifier.count('mem-throw')).to.equal(1);
  });

  it('runs the DemoRunProcessor: succeeds, fails on "[fail]", and retries "[crash]"', async function () {
    await runs.startWorker(new DemoRunProcessor({ delayMs: 5 }), { attempts: 2, backoffMs: 1, concurrency: 3 });
    await runs.queue.enqueue(aRun({ runId: 'demo-ok', request: { kind: 'message', message: 'summarise' } }));
    await runs.queue.enqueue(aRun({ runId: 'demo-fail', request: { kind: 'message', message: 'please [fail]' } }));
    await runs.queue.enqueue(aRun({ runId: 'demo-crash', request: { kind: 'message', message: 'please [crash]' } }));
    const final = async (id: string): Promise<Run | undefined> => {
      await waitFor(async () => ['succeeded', 'failed'].includes((await runs.store.get(id))?.status ?? ''), `${id} never finished`);
      return runs.store.get(id);
    };
    expect(await final('demo-ok')).to.include({ status: 'succeeded', attempts: 1 });
    expect(await final('demo-fail')).to.include({ status: 'failed', attempts: 1, failureReason: 'The demo agent was asked to fail.' });
    expect(await final('demo-crash')).to.include({ status: 'failed', attempts: 2, failureReason: 'Processing failed after 2 attempts.' });
  });

  it('closes promptly while a run waits for its next attempt', async function () {
    const worker = await runs.startWorker(new ThrowingProcessor(), { attempts: 5, backoffMs: 60_000 });
    await runs.queue.enqueue(aRun({ runId: 'mem-backoff' }));
    await waitFor(async () => (await runs.store.get('mem-backoff'))?.attempts === 1 && (await runs.store.get('mem-backoff'))?.status === 'queued', 'no first attempt');
    const started = Date.now();
    await worker.close();
    expect(Date.now() - started).to.be.below(1_000);
  });
});

describe('LogNotifier', function () {
  it('logs one line that a notification is due, with the run and request ids and the status, never the address nor anything else of the run', async function () {
    const logger = new RecordingLogger();
    const notifier = new LogNotifier(logger);
    const run = aRun({
      runId: 'run-mail',
      status: 'succeeded',
      requestId: 'req-mail',
      request: { kind: 'files', files: [{ file_key: 'k', file_name: 'secret-plan.pdf', content_type: 'application/pdf' }], message: 'private text', processTogether: false, backgroundFiles: [], notificationEmail: 'ops@example.com' },
    });
    await notifier.runFinished(run);
    expect(logger.lines).to.have.length(1);
    expect(logger.lines[0]?.fields).to.deep.equal({ run_id: 'run-mail', request_id: 'req-mail', status: 'succeeded', channel: 'email' });
    expect(logger.text()).to.not.match(/ops@example\.com|secret-plan|private text/);
  });

  it('writes nothing for a run without a notification address', async function () {
    const logger = new RecordingLogger();
    await new LogNotifier(logger).runFinished(aRun({ status: 'failed' }));
    expect(logger.lines).to.have.length(0);
  });
});

/** Throws on every attempt and remembers when each started (epoch ms). */
class ThrowingProcessor implements RunProcessor {
  readonly startedAt: number[] = [];
  process(): Promise<RunProcessingResult> {
    this.startedAt.push(Date.now());
    return Promise.reject(new Error('agent runtime down at 10.0.0.7'));
  }
}
