import { expect } from 'chai';
import { InMemoryRuns, type RunProcessor } from '@svc/core';
import { aRun, eventually, ManualClock } from '@svc/core/testing';

describe('InMemoryRuns: the in-process worker', function () {
  it('waits its retry backoff on the injected clock, not on real time', async function () {
    const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
    const runs = new InMemoryRuns({ clock });
    const attempts: string[] = [];
    const processor: RunProcessor = {
      process(_run, context) {
        attempts.push(clock.now().toISOString());
        return context.attempt === 1 ? Promise.reject(new Error('flaky')) : Promise.resolve({ ok: true, output: 'done' });
      },
    };
    await runs.startWorker(processor, { clock, backoffMs: 3_600_000 });
    try {
      await runs.queue.enqueue(aRun({ runId: 'clocked' }));
      await eventually(() => clock.pendingSleeps === 1, 'the worker to wait its backoff on the clock');
      expect((await runs.store.get('clocked'))?.status).to.equal('queued');
      expect(clock.nextWakeAt()?.toISOString()).to.equal('2026-05-01T01:00:00.000Z');
      clock.advanceMs(3_600_000);
      await eventually(async () => (await runs.store.get('clocked'))?.status === 'succeeded', 'the second attempt');
      expect(await runs.store.get('clocked')).to.include({ status: 'succeeded', attempts: 2, output: 'done' });
      expect(attempts).to.deep.equal(['2026-05-01T00:00:00.000Z', '2026-05-01T01:00:00.000Z']);
    } finally {
      await runs.close();
    }
  });

  it('aborts the signal of the attempts still in progress when a close runs out of grace, and names them lost', async function () {
    const runs = new InMemoryRuns();
    let aborted: unknown;
    const processor: RunProcessor = {
      process: (_run, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted = signal.reason;
            reject(signal.reason as Error);
          });
        }),
    };
    const worker = await runs.startWorker(processor);
    await runs.queue.enqueue(aRun({ runId: 'stuck' }));
    await eventually(async () => (await runs.store.get('stuck'))?.status === 'running', 'the run to start');
    const report = await worker.close(false, 20);
    expect(report).to.deep.include({ lostRunIds: ['stuck'] });
    await eventually(() => aborted !== undefined, 'the processor to see the abort');
    await eventually(async () => (await runs.store.get('stuck'))?.status === 'queued', 'an interrupted attempt to queue the run again, not fail it');
    await runs.close();
  });
});
