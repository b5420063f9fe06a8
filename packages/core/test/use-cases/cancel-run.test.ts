import { expect } from 'chai';
import { ACCOUNT_B, aPrincipal, aRun } from '@svc/core/testing';
import type { Notifier, Run } from '@svc/core';
import { aWorld, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

/** A notifier whose runFinished never settles: it records the run and hangs, like an SMTP server that never answers. */
class HangingNotifier implements Notifier {
  readonly finished: Run[] = [];
  runFinished(run: Run): Promise<void> {
    this.finished.push(run);
    return new Promise<void>(() => undefined);
  }
}

describe('CancelRun (docs/CONTRACT.md "Runs lifecycle")', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  it('a queued run: cancelled at once, the notifier told exactly once, and the answer does not wait for it', async function () {
    const notifier = new HangingNotifier();
    const core = w.coreWith({ notifier });
    const run = aRun({ status: 'queued' });
    await w.runs.save(run);
    const result = await core.cancelRun.execute({ principal: aPrincipal(), runId: run.runId });
    expect(valueOf(result).status).to.equal('cancelled');
    expect(notifier.finished.map((r) => [r.runId, r.status])).to.deep.equal([[run.runId, 'cancelled']]);
    expect(errorOf(await core.cancelRun.execute({ principal: aPrincipal(), runId: run.runId })).code).to.equal('run_final');
    expect(notifier.finished).to.have.length(1);
  });

  it('a running run keeps running with cancel_requested_at; nobody is notified yet (the worker makes it final)', async function () {
    const notifier = new HangingNotifier();
    const core = w.coreWith({ notifier });
    const run = aRun({ status: 'running', attempts: 1 });
    await w.runs.save(run);
    const view = valueOf(await core.cancelRun.execute({ principal: aPrincipal(), runId: run.runId }));
    expect(view.status).to.equal('running');
    expect(view.cancel_requested_at).to.be.a('string');
    expect(notifier.finished).to.have.length(0);
  });

  it('a succeeded or failed run answers run_final; another account run not_found, like a missing one', async function () {
    const core = w.coreWith({});
    for (const status of ['succeeded', 'failed'] as const) {
      const run = aRun({ status });
      await w.runs.save(run);
      expect(errorOf(await core.cancelRun.execute({ principal: aPrincipal(), runId: run.runId })).code, status).to.equal('run_final');
    }
    const theirs = aRun({ accountId: ACCOUNT_B });
    await w.runs.save(theirs);
    expect(errorOf(await core.cancelRun.execute({ principal: aPrincipal(), runId: theirs.runId })).code).to.equal('not_found');
    expect((await w.runs.get(theirs.runId))?.cancelRequestedAt).to.equal(undefined);
    expect(errorOf(await core.cancelRun.execute({ principal: aPrincipal(), runId: 'no-such-run' })).code).to.equal('not_found');
  });
});
