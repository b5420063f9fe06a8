import { expect } from 'chai';
import { createCore, inProcessPrincipal, type Core } from '@svc/core';
import { ACCOUNT_A, anAgent, FailingRunQueue, InMemoryAgentCatalog, ManualClock, RunDriver } from '@svc/core/testing';
import { Summarizer, type SummaryModel } from '@svc/example-testing-with-fakes';

/** A model that fails its first `failures` calls, then answers; it keeps what it was asked. */
function aModel(failures = 0): SummaryModel & { readonly asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    summarize(text) {
      asked.push(text);
      return asked.length <= failures ? Promise.reject(new Error('model overloaded')) : Promise.resolve(`${text.slice(0, 10)}…`);
    },
  };
}

/** A core on the fakes, on a clock that moves only when told (or when the driver waits a backoff). */
function aCore(): { core: Core; clock: ManualClock } {
  const clock = new ManualClock(new Date('2026-06-01T09:00:00Z'));
  return { clock, core: createCore({ agents: new InMemoryAgentCatalog([anAgent()]), clock }, { baseUrl: 'https://api.example.com' }) };
}

async function start(core: Core, message: string): Promise<string> {
  const started = await core.startRun.execute({ principal: inProcessPrincipal(ACCOUNT_A), agentId: anAgent().agentId, body: { message } });
  if (!started.ok) throw new Error(started.error.detail);
  return started.value.run_id;
}

describe('Summarizer (a RunProcessor tested with RunDriver on a ManualClock)', function () {
  it('succeeds with the summary as output, and its progress is what GetRun shows', async function () {
    const { core, clock } = aCore();
    const runId = await start(core, 'Quarterly revenue grew by 12 %.');
    await new RunDriver({ runs: core.runs, processor: new Summarizer(aModel()), clock }).drain();
    const read = await core.getRun.execute({ principal: inProcessPrincipal(ACCOUNT_A), runId });
    expect(read.ok && read.value).to.deep.include({
      status: 'succeeded',
      output: { summary: 'Quarterly …' },
      progress: { percent: 10, message: 'Summarizing (attempt 1 of 3)', updated_at: '2026-06-01T09:00:00.000Z' },
    });
  });

  it('retries a model error after the backoff (no real time passes), and succeeds on the third attempt', async function () {
    const { core, clock } = aCore();
    await start(core, 'Write a summary.');
    const model = aModel(2);
    const [run] = await new RunDriver({ runs: core.runs, processor: new Summarizer(model), clock, backoffMs: 30_000 }).drain();
    expect(run).to.include({ status: 'succeeded', attempts: 3 });
    expect(model.asked).to.have.length(3);
    // Backoffs of 30 s and 60 s, on the manual clock.
    expect(run?.updatedAt.toISOString()).to.equal('2026-06-01T09:01:30.000Z');
  });

  it('fails an empty message at once, without calling the model', async function () {
    const { core, clock } = aCore();
    await start(core, '   ');
    const model = aModel();
    const [run] = await new RunDriver({ runs: core.runs, processor: new Summarizer(model), clock }).drain();
    expect(run).to.include({ status: 'failed', attempts: 1, failureReason: 'There is nothing to summarize.' });
    expect(model.asked).to.deep.equal([]);
  });

  it('a run start while the queue is unavailable rejects, and nothing is queued (a failing fake)', async function () {
    const { core, clock } = aCore();
    const queue = new FailingRunQueue(core.runs.queue).failWith('unavailable');
    const down = createCore({ agents: new InMemoryAgentCatalog([anAgent()]), clock, runs: core.runs, runQueue: queue }, { baseUrl: 'https://api.example.com' });
    let thrown: unknown;
    await start(down, 'hello').catch((error: unknown) => (thrown = error));
    expect(thrown).to.have.property('name', 'DependencyUnavailableError');
    expect(core.runs.queue.size).to.equal(0);
  });
});
