import { expect } from 'chai';
import { DemoRunProcessor } from '@svc/adapter-queue';
import type { ProgressReport, RunProcessingContext } from '@svc/core';
import { aRun } from '@svc/core/testing';

function contextWith(signal: AbortSignal, reports: ProgressReport[]): RunProcessingContext {
  return { signal, attempt: 1, maxAttempts: 3, reportProgress: (p) => (reports.push(p), Promise.resolve(true)) };
}

// docs/CONTRACT.md "Runs lifecycle": the demo processor takes `worker.demo_delay_ms` and
// honours the AbortSignal at once.
describe('DemoRunProcessor', function () {
  it('reports progress and succeeds with an output after its delay', async function () {
    const reports: ProgressReport[] = [];
    const result = await new DemoRunProcessor({ delayMs: 1 }).process(aRun({ request: { kind: 'message', message: 'hello' } }), contextWith(new AbortController().signal, reports));
    expect(result).to.deep.equal({ ok: true, output: { demo: true, files: 0, message_characters: 5 } });
    expect(reports).to.deep.equal([{ percent: 0, message: 'Started.' }, { percent: 100, message: 'Done.' }]);
  });

  it('stops at once when the signal aborts, rejecting with an AbortError caused by its reason', async function () {
    const stop = new AbortController();
    const processing = new DemoRunProcessor({ delayMs: 60_000 }).process(aRun(), contextWith(stop.signal, []));
    const reason = new Error('worker stopping');
    const started = Date.now();
    stop.abort(reason);
    let thrown: unknown;
    await processing.catch((error: unknown) => (thrown = error));
    expect(thrown).to.have.property('name', 'AbortError');
    expect(thrown).to.have.property('cause', reason);
    expect(Date.now() - started, 'not the 60 s delay').to.be.below(5_000);
  });
});
