import { expect } from 'chai';
import { createCore, inProcessPrincipal, RunFailedError, type RunProcessor } from '@svc/core';
import { ACCOUNT_A, anAgent, InMemoryAgentCatalog, ManualClock, RunDriver } from '@svc/core/testing';

describe('RunDriver: a queued run driven through a processor on a manual clock', function () {
  const agent = anAgent();

  function aCore() {
    const clock = new ManualClock(new Date('2026-03-01T00:00:00Z'));
    const core = createCore({ agents: new InMemoryAgentCatalog([agent]), clock }, { baseUrl: 'https://api.example.com' });
    return { clock, core };
  }

  async function start(core: ReturnType<typeof aCore>['core'], message = 'hello'): Promise<string> {
    const started = await core.startRun.execute({ principal: inProcessPrincipal(ACCOUNT_A), agentId: agent.agentId, body: { message } });
    if (!started.ok) throw new Error(started.error.detail);
    return started.value.run_id;
  }

  it('drives a run to succeeded with its output and progress, visible to GetRun', async function () {
    const { clock, core } = aCore();
    const runId = await start(core);
    const processor: RunProcessor = {
      async process(run, context) {
        await context.reportProgress({ percent: 40, message: `Reading ${run.request.message ?? ''}` });
        return { ok: true, output: { words: 1 } };
      },
    };
    const runs = await new RunDriver({ runs: core.runs, processor, clock }).drain();
    expect(runs.map((r) => r.status)).to.deep.equal(['succeeded']);
    const view = await core.getRun.execute({ principal: inProcessPrincipal(ACCOUNT_A), runId });
    expect(view.ok && view.value).to.deep.include({ status: 'succeeded', attempts: 1, output: { words: 1 }, progress: { percent: 40, message: 'Reading hello', updated_at: '2026-03-01T00:00:00.000Z' } });
  });

  it('retries a throwing processor after the doubling backoff, on the manual clock, with no real wait', async function () {
    const { clock, core } = aCore();
    await start(core);
    const seen: [number, string][] = [];
    const processor: RunProcessor = {
      process(_run, context) {
        seen.push([context.attempt, clock.now().toISOString()]);
        return context.attempt < 3 ? Promise.reject(new Error('flaky')) : Promise.resolve({ ok: true });
      },
    };
    const started = Date.now();
    const [run] = await new RunDriver({ runs: core.runs, processor, clock, backoffMs: 60_000 }).drain();
    expect(Date.now() - started, 'two backoffs of 1 and 2 minutes took no real time').to.be.below(1000);
    expect(seen).to.deep.equal([
      [1, '2026-03-01T00:00:00.000Z'],
      [2, '2026-03-01T00:01:00.000Z'],
      [3, '2026-03-01T00:03:00.000Z'],
    ]);
    expect(run).to.include({ status: 'succeeded', attempts: 3 });
  });

  it('fails at once for a RunFailedError, and after the last attempt for anything else', async function () {
    const { clock, core } = aCore();
    await start(core, 'first');
    await start(core, 'second');
    const processor: RunProcessor = {
      process: (run) => Promise.reject(run.request.message === 'first' ? new RunFailedError('Not an invoice.') : new Error('down at 10.1.2.3')),
    };
    const [first, second] = await new RunDriver({ runs: core.runs, processor, clock, attempts: 2 }).drain();
    expect(first).to.include({ status: 'failed', attempts: 1, failureReason: 'Not an invoice.' });
    expect(second).to.include({ status: 'failed', attempts: 2, failureReason: 'Processing failed after 2 attempts.' });
  });
});
