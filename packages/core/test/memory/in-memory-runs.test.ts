import { expect } from 'chai';
import { RunLifecycle } from '@svc/core';
import { aRun, InMemoryRunQueue, InMemoryRunStore, ManualClock } from '@svc/core/testing';

describe('in-memory runs', function () {
  it('an embedder takes a run queued → running → succeeded with the core queue, store and RunLifecycle alone', async function () {
    const store = new InMemoryRunStore();
    const queue = new InMemoryRunQueue(store);
    const seen: string[] = [];
    const lifecycle = new RunLifecycle({
      store,
      processor: {
        process: async (run) => {
          seen.push((await store.get(run.runId))?.status ?? 'missing');
          return { ok: true };
        },
      },
    });
    await queue.enqueue(aRun({ runId: 'embedded-1' }));
    expect((await store.get('embedded-1'))?.status).to.equal('queued');
    const runId = queue.take();
    expect(runId).to.equal('embedded-1');
    expect(await lifecycle.attempt(runId ?? '', { lastAttempt: true, maxAttempts: 1 })).to.deep.equal({ kind: 'succeeded' });
    expect(seen).to.deep.equal(['running']);
    expect(await store.get('embedded-1')).to.include({ status: 'succeeded', attempts: 1 });
  });

  it('counts a run made final by transition toward the bounds of finished runs', async function () {
    const clock = new ManualClock();
    const store = new InMemoryRunStore({ maxFinishedRuns: 1, retentionSeconds: 60, clock });
    for (const runId of ['a', 'b']) {
      await store.save(aRun({ runId, status: 'running', attempts: 1 }));
      await store.transition(runId, { to: 'succeeded', at: clock.now() });
    }
    expect(await store.get('a'), 'past maxFinishedRuns the first finished is dropped').to.equal(undefined);
    expect((await store.get('b'))?.status).to.equal('succeeded');
    clock.advanceSeconds(61);
    expect(await store.get('b'), 'expired after retentionSeconds').to.equal(undefined);
  });
});
