import assert from 'node:assert/strict';
import { FINAL_RUN_STATUSES, type Run } from '../domain/run.js';
import { ManualClock } from '../memory/system-clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { RunProcessingContext, RunProcessingResult, RunProcessor } from '../ports/run-processor.js';
import type { RunStore } from '../ports/run-store.js';
import { RunLifecycle, type AttemptOptions } from '../use-cases/run-lifecycle.js';
import { RunCancelledError, RunFailedError, WorkerStoppingError } from '../domain/errors.js';
import { MAX_RUN_OUTPUT_BYTES } from '../domain/run.js';
import { aRun } from './builders.js';
import { RecordingLogger } from './recording-logger.js';
import type { RunStoreHarness } from './run-store-contract.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** Options of an attempt with attempts left, and of the last one (3 attempts in all). */
const NOT_LAST: AttemptOptions = { lastAttempt: false, maxAttempts: 3 };
const LAST: AttemptOptions = { lastAttempt: true, maxAttempts: 3 };

let issued = 0;
/** A run id no other test uses, so that a harness may share one store between tests. */
function lifecycleRunId(what: string): string {
  issued += 1;
  return `lifecycle-contract-${what}-${Date.now()}-${issued}`;
}

/** A notifier that keeps every run it was told about, and fails when told to. */
class ListNotifier implements Notifier {
  readonly finished: Run[] = [];
  constructor(private readonly failing = false) {}
  runFinished(run: Run): Promise<void> {
    this.finished.push(run);
    return this.failing ? Promise.reject(new Error('mail relay down at 10.0.0.9')) : Promise.resolve();
  }
  count(runId: string): number {
    return this.finished.filter((r) => r.runId === runId).length;
  }
}

/**
 * A processor that answers its `script` in order, one entry a call (the last one again
 * once spent; an Error is thrown), and records the run as the store held it meanwhile.
 */
class ScriptedProcessor implements RunProcessor {
  /** The run as the store held it while each call was processing. */
  readonly seen: (Run | undefined)[] = [];
  /** The context of each call. */
  readonly contexts: RunProcessingContext[] = [];
  constructor(
    private readonly store: RunStore,
    private readonly script: readonly (RunProcessingResult | Error)[],
    private readonly during?: (run: Run, context: RunProcessingContext) => Promise<void>,
  ) {}
  async process(run: Run, context: RunProcessingContext): Promise<RunProcessingResult> {
    const answer = this.script[Math.min(this.seen.length, this.script.length - 1)] ?? { ok: true };
    this.seen.push(await this.store.get(run.runId));
    this.contexts.push(context);
    await this.during?.(run, context);
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

/**
 * The status rules of core `RunLifecycle` (docs/CONTRACT.md "Runs"; `domain/run.ts`) driven
 * over a {@link RunStoreHarness}'s store, so that every store a worker may use is shown to
 * carry them: queued → running → succeeded; `{ok: false}` → failed without retry; a throw
 * with attempts left → queued again; a throw on the last attempt → failed with a safe
 * reason; a final or missing run is skipped; the notifier is told exactly once per run
 * the lifecycle made final. Registers a `describe` block with `runner` (default mocha's globals; see {@link TestRunner}).
 */
export function runLifecycleContract(name: string, makeHarness: () => Promise<RunStoreHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'runLifecycleContract');
  describe(`RunLifecycle contract: ${name}`, function () {
    let h: RunStoreHarness;
    let clock: ManualClock;
    let logger: RecordingLogger;
    beforeEach(async function () {
      h = await makeHarness();
      clock = new ManualClock(new Date('2026-01-01T00:00:10Z'));
      logger = new RecordingLogger();
    });
    afterEach(async function () {
      await h.close();
    });

    async function given(overrides: Partial<Run> = {}): Promise<Run> {
      const run = aRun({ runId: lifecycleRunId('run'), ...overrides });
      await h.store.save(run);
      return run;
    }

    function lifecycle(processor: RunProcessor, notifier: Notifier): RunLifecycle {
      return new RunLifecycle({ store: h.store, processor, notifier, logger, clock });
    }

    it('queued → running → succeeded: one attempt, running while processed, notified once', async function () {
      const run = await given();
      const processor = new ScriptedProcessor(h.store, [{ ok: true }]);
      const notifier = new ListNotifier();
      assert.deepEqual(await lifecycle(processor, notifier).attempt(run.runId, NOT_LAST), { kind: 'succeeded' });
      assert.equal(processor.seen.length, 1);
      assert.equal(processor.seen[0]?.status, 'running');
      assert.equal(processor.seen[0]?.attempts, 1);
      const stored = await h.store.get(run.runId);
      assert.deepEqual(stored, { ...run, status: 'succeeded', attempts: 1, updatedAt: clock.now() });
      assert.equal(notifier.count(run.runId), 1);
      assert.deepEqual(notifier.finished[0], stored, 'the notifier gets the final run');
    });

    it('fails the run at once, without retry, when the processor answers ok: false', async function () {
      const run = await given();
      const processor = new ScriptedProcessor(h.store, [{ ok: false, reason: 'The file could not be read.' }]);
      const notifier = new ListNotifier();
      const outcome = await lifecycle(processor, notifier).attempt(run.runId, NOT_LAST);
      assert.deepEqual(outcome, { kind: 'failed', reason: 'The file could not be read.' });
      assert.equal(processor.seen.length, 1);
      assert.deepEqual(await h.store.get(run.runId), { ...run, status: 'failed', attempts: 1, updatedAt: clock.now(), failureReason: 'The file could not be read.' });
      assert.equal(notifier.count(run.runId), 1);
    });

    it('queues the run again when the processor throws with attempts left, and runs it on the next attempt', async function () {
      const run = await given();
      const thrown = new Error('agent runtime down at 10.0.0.7');
      const processor = new ScriptedProcessor(h.store, [thrown, { ok: true }]);
      const notifier = new ListNotifier();
      const runs = lifecycle(processor, notifier);
      assert.deepEqual(await runs.attempt(run.runId, NOT_LAST), { kind: 'retry', error: thrown });
      const queued = await h.store.get(run.runId);
      assert.deepEqual(queued, { ...run, status: 'queued', attempts: 1, updatedAt: clock.now() });
      assert.equal(notifier.finished.length, 0, 'a run queued again is not final: nobody is told');
      clock.advanceSeconds(1);
      assert.deepEqual(await runs.attempt(run.runId, LAST), { kind: 'succeeded' });
      assert.deepEqual(await h.store.get(run.runId), { ...run, status: 'succeeded', attempts: 2, updatedAt: clock.now() });
      assert.equal(notifier.count(run.runId), 1);
    });

    it('fails the run with a safe reason when the processor throws on the last attempt', async function () {
      const run = await given();
      const processor = new ScriptedProcessor(h.store, [new Error('agent runtime down at 10.0.0.7')]);
      const notifier = new ListNotifier();
      const runs = lifecycle(processor, notifier);
      assert.equal((await runs.attempt(run.runId, NOT_LAST)).kind, 'retry');
      const reason = 'Processing failed after 2 attempts.';
      assert.deepEqual(await runs.attempt(run.runId, LAST), { kind: 'failed', reason });
      const stored = await h.store.get(run.runId);
      assert.deepEqual(stored, { ...run, status: 'failed', attempts: 2, updatedAt: clock.now(), failureReason: reason });
      assert.equal(notifier.count(run.runId), 1);
      assert.doesNotMatch(logger.text(), /10\.0\.0\.7/, 'the thrown message (a host) is never logged');

      const once = await given();
      assert.deepEqual(await lifecycle(new ScriptedProcessor(h.store, [new Error('x')]), notifier).attempt(once.runId, LAST), { kind: 'failed', reason: 'Processing failed after 1 attempt.' });
    });

    it('skips a run that is already final, or missing, without calling the processor or the notifier', async function () {
      const processor = new ScriptedProcessor(h.store, [{ ok: true }]);
      const notifier = new ListNotifier();
      for (const status of FINAL_RUN_STATUSES) {
        const run = await given({ status, attempts: 1 });
        assert.deepEqual(await lifecycle(processor, notifier).attempt(run.runId, NOT_LAST), { kind: 'skipped', status });
        assert.deepEqual(await h.store.get(run.runId), run, `a ${status} run is left as it is`);
      }
      const missing = lifecycleRunId('missing');
      assert.deepEqual(await lifecycle(processor, notifier).attempt(missing, LAST), { kind: 'skipped', status: undefined });
      assert.equal(await h.store.get(missing), undefined);
      assert.equal(processor.seen.length, 0);
      assert.equal(notifier.finished.length, 0);
    });

    it('notifies exactly once per final run when workers race to finish it', async function () {
      const run = await given({ status: 'running', attempts: 1 });
      const notifier = new ListNotifier();
      const idle = new ScriptedProcessor(h.store, [{ ok: true }]);
      const finishes = await Promise.all([
        lifecycle(idle, notifier).finish(run.runId, 'succeeded'),
        lifecycle(idle, notifier).finish(run.runId, 'failed', { failureReason: 'Processing was interrupted too many times.' }),
        lifecycle(idle, notifier).finish(run.runId, 'succeeded'),
      ]);
      assert.equal(finishes.filter(Boolean).length, 1, 'exactly one finish made the run final');
      assert.equal(notifier.count(run.runId), 1);
      assert.deepEqual(notifier.finished[0], await h.store.get(run.runId));
      assert.equal(await lifecycle(idle, notifier).finish(run.runId, 'failed', { failureReason: 'late' }), false);
      assert.equal(notifier.count(run.runId), 1);
    });

    it('does not notify for a run another writer made final while it was processed', async function () {
      const run = await given();
      const cancel = async (r: Run): Promise<void> => void (await h.store.transition(r.runId, { to: 'cancelled', at: clock.now() }));
      const processor = new ScriptedProcessor(h.store, [{ ok: true }], cancel);
      const notifier = new ListNotifier();
      await lifecycle(processor, notifier).attempt(run.runId, NOT_LAST);
      assert.equal((await h.store.get(run.runId))?.status, 'cancelled');
      assert.equal(notifier.finished.length, 0);
    });

    it('keeps the run final when the notifier fails, and logs no message of it', async function () {
      const run = await given();
      const notifier = new ListNotifier(true);
      assert.deepEqual(await lifecycle(new ScriptedProcessor(h.store, [{ ok: true }]), notifier).attempt(run.runId, NOT_LAST), { kind: 'succeeded' });
      assert.equal((await h.store.get(run.runId))?.status, 'succeeded');
      assert.equal(notifier.count(run.runId), 1);
      assert.equal(logger.at('warn').filter((l) => l.message === 'run notification failed').length, 1);
      assert.doesNotMatch(logger.text(), /10\.0\.0\.9/);
    });

    it('stores the output of a succeeded run, and tells the processor its attempt and the attempts in all', async function () {
      const run = await given();
      const output = { total: '1234.50', lines: [1, 2], note: 'é ☃' };
      const processor = new ScriptedProcessor(h.store, [new Error('transient'), { ok: true, output }]);
      const runs = lifecycle(processor, new ListNotifier());
      await runs.attempt(run.runId, NOT_LAST);
      assert.deepEqual(await runs.attempt(run.runId, NOT_LAST), { kind: 'succeeded' });
      assert.deepEqual(processor.contexts.map((c) => [c.attempt, c.maxAttempts]), [[1, 3], [2, 3]]);
      assert.deepEqual((await h.store.get(run.runId))?.output, output);
    });

    it('fails a run whose output is over MAX_RUN_OUTPUT_BYTES, or not JSON, with a safe reason', async function () {
      const big = await given();
      const outcome = await lifecycle(new ScriptedProcessor(h.store, [{ ok: true, output: 'x'.repeat(MAX_RUN_OUTPUT_BYTES) }]), new ListNotifier()).attempt(big.runId, NOT_LAST);
      assert.deepEqual(outcome, { kind: 'failed', reason: `The processor returned an output over ${MAX_RUN_OUTPUT_BYTES} bytes.` });
      assert.equal((await h.store.get(big.runId))?.output, undefined);
      const cyclic: Record<string, unknown> = {};
      cyclic['self'] = cyclic;
      const odd = await given();
      const notJson = await lifecycle(new ScriptedProcessor(h.store, [{ ok: true, output: cyclic as never }]), new ListNotifier()).attempt(odd.runId, NOT_LAST);
      assert.deepEqual(notJson, { kind: 'failed', reason: 'The processor returned an output that is not JSON.' });
    });

    it('records progress while the run is running, and refuses it once the run is final', async function () {
      const run = await given();
      let during: boolean[] = [];
      const processor = new ScriptedProcessor(h.store, [{ ok: true }], async (_r, context) => {
        during = [await context.reportProgress({ percent: 10, message: 'Reading' }), await context.reportProgress({ percent: 50 })];
        clock.advanceSeconds(1);
        await assert.rejects(context.reportProgress({ percent: 101 }), RangeError);
        await assert.rejects(context.reportProgress({}), RangeError);
        assert.deepEqual((await h.store.get(run.runId))?.progress, { percent: 50, updatedAt: new Date('2026-01-01T00:00:10Z') });
      });
      await lifecycle(processor, new ListNotifier()).attempt(run.runId, NOT_LAST);
      assert.deepEqual(during, [true, true]);
      const stored = await h.store.get(run.runId);
      assert.equal(stored?.status, 'succeeded');
      assert.deepEqual(stored?.progress, { percent: 50, updatedAt: new Date('2026-01-01T00:00:10Z') }, 'the last report stays with the finished run');
      assert.equal(await processor.contexts[0]?.reportProgress({ percent: 60 }), false, 'a final run takes no progress');
      assert.equal(await h.store.reportProgress(lifecycleRunId('missing'), { percent: 1, updatedAt: clock.now() }), false);
    });

    it('fails the run at once for a RunFailedError that is not retryable, with its reason', async function () {
      const run = await given();
      const processor = new ScriptedProcessor(h.store, [new RunFailedError('The document is encrypted.')]);
      assert.deepEqual(await lifecycle(processor, new ListNotifier()).attempt(run.runId, NOT_LAST), { kind: 'failed', reason: 'The document is encrypted.' });
      assert.equal((await h.store.get(run.runId))?.failureReason, 'The document is encrypted.');
      const again = await given();
      const retryable = new ScriptedProcessor(h.store, [new RunFailedError('The model is overloaded.', { retryable: true })]);
      const runs = lifecycle(retryable, new ListNotifier());
      assert.equal((await runs.attempt(again.runId, NOT_LAST)).kind, 'retry');
      assert.deepEqual(await runs.attempt(again.runId, LAST), { kind: 'failed', reason: 'The model is overloaded.' });
    });

    it('queues the run again, without failing it, when the signal aborted and the processor stopped', async function () {
      const run = await given();
      const stop = new AbortController();
      const processor = new ScriptedProcessor(h.store, [{ ok: true }], (_r, context) => {
        stop.abort();
        return Promise.reject(context.signal.reason as Error);
      });
      const notifier = new ListNotifier();
      assert.deepEqual(await lifecycle(processor, notifier).attempt(run.runId, { ...LAST, signal: stop.signal }), { kind: 'interrupted' });
      assert.equal((await h.store.get(run.runId))?.status, 'queued');
      assert.equal(notifier.finished.length, 0);
    });
    it('cancel while running: the signal fires with a RunCancelledError, the run ends cancelled (not queued, not failed), notified once', async function () {
      const run = await given();
      let reason: unknown;
      const processor = new ScriptedProcessor(h.store, [{ ok: true }], async (r, context) => {
        await h.store.requestCancel(r.runId, clock.now());
        await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
        reason = context.signal.reason;
        throw context.signal.reason;
      });
      const notifier = new ListNotifier();
      const runs = new RunLifecycle({ store: h.store, processor, notifier, logger, clock, cancelPollMs: 10, cancelGraceMs: 5000 });
      assert.deepEqual(await runs.attempt(run.runId, NOT_LAST), { kind: 'cancelled' });
      assert.ok(reason instanceof RunCancelledError, 'the reason tells a cancel from a worker stop');
      const stored = await h.store.get(run.runId);
      assert.equal(stored?.status, 'cancelled');
      assert.deepEqual(stored?.cancelRequestedAt, clock.now());
      assert.equal(notifier.count(run.runId), 1);
    });

    it('a cancel asked for as the processor answers (before any poll sees it) still ends the run cancelled, without its output, notified once', async function () {
      for (const answer of [{ ok: true, output: { total: 1 } }, { ok: false, reason: 'The agent gave up.' }] as const) {
        const run = await given();
        const processor = new ScriptedProcessor(h.store, [answer], async (r) => {
          await h.store.requestCancel(r.runId, clock.now());
        });
        const notifier = new ListNotifier();
        // A poll far away: only the store's compare-and-set can see the request.
        const runs = new RunLifecycle({ store: h.store, processor, notifier, logger, clock, cancelPollMs: 60_000 });
        assert.deepEqual(await runs.attempt(run.runId, NOT_LAST), { kind: 'cancelled' }, String(answer.ok));
        const stored = await h.store.get(run.runId);
        assert.equal(stored?.status, 'cancelled');
        assert.equal(stored?.output, undefined);
        assert.equal(stored?.failureReason, undefined);
        assert.deepEqual(notifier.finished.map((r) => r.status), ['cancelled']);
      }
    });

    it('cancel of a processor that ignores its signal: abandoned after cancelGraceMs, the run still ends cancelled', async function () {
      const run = await given();
      let release: (() => void) | undefined;
      const processor = new ScriptedProcessor(h.store, [{ ok: true }], async (r) => {
        await h.store.requestCancel(r.runId, clock.now());
        await new Promise<void>((resolve) => (release = resolve));
      });
      const notifier = new ListNotifier();
      const runs = new RunLifecycle({ store: h.store, processor, notifier, logger, clock, cancelPollMs: 10, cancelGraceMs: 50 });
      const started = Date.now();
      assert.deepEqual(await runs.attempt(run.runId, NOT_LAST), { kind: 'cancelled' });
      assert.ok(Date.now() - started >= 50, 'waited the grace');
      assert.equal((await h.store.get(run.runId))?.status, 'cancelled');
      release?.();
      assert.equal(notifier.count(run.runId), 1);
      assert.ok(logger.lines.some((l) => l.message === 'run processor ignored the cancel: abandoned'));
    });

    it('a run with a cancel request is cancelled when an attempt begins, without calling the processor', async function () {
      const run = await given({ status: 'running', attempts: 1 });
      assert.equal((await h.store.requestCancel(run.runId, clock.now())).kind, 'requested');
      const processor = new ScriptedProcessor(h.store, [{ ok: true }]);
      const notifier = new ListNotifier();
      assert.deepEqual(await lifecycle(processor, notifier).attempt(run.runId, LAST), { kind: 'cancelled' });
      assert.equal(processor.seen.length, 0);
      assert.equal((await h.store.get(run.runId))?.status, 'cancelled');
      assert.equal(notifier.count(run.runId), 1);
    });

    it('a cancelled queued run is skipped: never reaches the processor', async function () {
      const run = await given();
      assert.equal((await h.store.requestCancel(run.runId, clock.now())).kind, 'cancelled');
      const processor = new ScriptedProcessor(h.store, [{ ok: true }]);
      const notifier = new ListNotifier();
      assert.deepEqual(await lifecycle(processor, notifier).attempt(run.runId, NOT_LAST), { kind: 'skipped', status: 'cancelled' });
      assert.equal(processor.seen.length, 0);
      assert.equal(notifier.finished.length, 0, 'the worker does not notify: the cancel did');
    });

    it('a worker stop gives the signal a WorkerStoppingError', async function () {
      const run = await given();
      const stop = new AbortController();
      let reason: unknown;
      const processor = new ScriptedProcessor(h.store, [{ ok: true }], (_r, context) => {
        stop.abort(new WorkerStoppingError());
        reason = context.signal.reason;
        return Promise.reject(context.signal.reason as Error);
      });
      assert.deepEqual(await lifecycle(processor, new ListNotifier()).attempt(run.runId, { ...LAST, signal: stop.signal }), { kind: 'interrupted' });
      assert.ok(reason instanceof WorkerStoppingError);
    });

    it('a worker stop ends the cancel watch even while the processor ignores it (no poll outlives the stop)', async function () {
      const run = await given();
      const stop = new AbortController();
      let reads = 0;
      const counting: RunStore = new Proxy(h.store, {
        get(target, property, receiver) {
          if (property === 'get') return (runId: string) => ((reads += 1), target.get(runId));
          return Reflect.get(target, property, receiver) as unknown;
        },
      });
      let release = (): void => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      const processor = new ScriptedProcessor(h.store, [{ ok: true }], () => released);
      const attempt = new RunLifecycle({ store: counting, processor, notifier: new ListNotifier(), logger, clock, cancelPollMs: 5 }).attempt(run.runId, { ...LAST, signal: stop.signal });
      const deadline = Date.now() + 5_000;
      while (reads < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(reads >= 3, 'the watch polls the run while it is processed');
      stop.abort(new WorkerStoppingError());
      const atStop = reads;
      // Absence cannot be polled for: 20 poll periods pass, and at most one read already under way may land.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(reads <= atStop + 1, `the watch read the run ${reads - atStop} times after the stop`);
      release();
      await attempt;
    });
  });
}
