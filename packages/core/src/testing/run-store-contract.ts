import assert from 'node:assert/strict';
import { canTransition, FINAL_RUN_STATUSES, RUN_STATUSES, type Run, type RunStatus } from '../domain/run.js';
import type { RunStore } from '../ports/run-store.js';
import { aRun } from './builders.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What the {@link runStoreContract} (and core's `runLifecycleContract`) need: a store. */
export interface RunStoreHarness {
  /** A store that holds no run with a `store-contract-*` or `lifecycle-contract-*` id. */
  readonly store: RunStore;
  /** Frees keys and clients. */
  close(): Promise<void>;
}

let issued = 0;
/** A run id no other test uses, so that a harness may share one store between tests. */
function contractRunId(what: string): string {
  issued += 1;
  return `store-contract-${what}-${Date.now()}-${issued}`;
}

/**
 * The behaviour every {@link RunStore} shares (core `ports/run-store.ts`): unknown ids
 * are absent, saves replace, and `transition` is a compare-and-set that follows core
 * `canTransition` exactly, never moves a final run, lets exactly one of concurrent
 * finishing changes apply, counts attempts and sets or clears the failure reason.
 * Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a fresh harness for each test (closed after it).
 * @param runner - the runner to register with: `{ describe, it, beforeEach, afterEach }`
 *   from `node:test`, mocha or another BDD runner ({@link TestRunner}); default mocha's
 *   globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function runStoreContract(name: string, makeHarness: () => Promise<RunStoreHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'runStoreContract');
  describe(`RunStore contract: ${name}`, function () {
    let h: RunStoreHarness;
    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    /** Saves a run with `overrides` under a fresh id and returns it. */
    async function given(overrides: Partial<Run> = {}): Promise<Run> {
      const run = aRun({ runId: contractRunId('run'), ...overrides });
      await h.store.save(run);
      return run;
    }

    it('answers undefined for an unknown id', async function () {
      assert.equal(await h.store.get(contractRunId('unknown')), undefined);
    });

    it('returns a saved run with every field, and replaces it on the next save (upsert)', async function () {
      const run = await given({
        status: 'failed',
        attempts: 2,
        failureReason: 'The file could not be read.',
        updatedAt: new Date('2026-01-01T00:01:00.123Z'),
        request: { kind: 'files', files: [{ file_key: 'k', file_name: 'n.pdf', content_type: 'application/pdf' }], message: 'm', processTogether: true, backgroundFiles: [], notificationEmail: 'a@example.com' },
        requestId: 'req-contract-1',
      });
      assert.deepEqual(await h.store.get(run.runId), run);
      const replaced: Run = { ...aRun({ runId: run.runId }), status: 'running', attempts: 1 };
      await h.store.save(replaced);
      const stored = await h.store.get(run.runId);
      assert.deepEqual(stored, replaced);
      assert.equal(stored !== undefined && 'failureReason' in stored, false, 'a save replaces the whole run: no reason survives it');
    });

    it('queued → running: applies, stamps updatedAt, counts one attempt, changes nothing else', async function () {
      const run = await given({ status: 'queued', attempts: 0, requestId: 'req-contract-2' });
      const at = new Date('2026-01-01T00:00:05.000Z');
      const outcome = await h.store.transition(run.runId, { to: 'running', at, countAttempt: true });
      const expected: Run = { ...run, status: 'running', updatedAt: at, attempts: 1 };
      assert.equal(outcome.applied, true);
      assert.deepEqual(outcome.run, expected);
      assert.deepEqual(await h.store.get(run.runId), expected, 'the outcome is what the store now holds');
    });

    it('counts an attempt only with countAttempt (running → running is one more; running → queued none)', async function () {
      const run = await given({ status: 'running', attempts: 1 });
      assert.equal((await h.store.transition(run.runId, { to: 'running', at: new Date(), countAttempt: true })).run?.attempts, 2);
      assert.equal((await h.store.transition(run.runId, { to: 'queued', at: new Date() })).run?.attempts, 2);
      assert.equal((await h.store.transition(run.runId, { to: 'running', at: new Date(), countAttempt: false })).run?.attempts, 2);
      assert.equal((await h.store.get(run.runId))?.attempts, 2);
    });

    it('sets the failure reason when given, and clears an earlier one when not', async function () {
      const stale = await given({ status: 'running', attempts: 1, failureReason: 'an earlier reason' });
      const succeeded = await h.store.transition(stale.runId, { to: 'succeeded', at: new Date() });
      assert.equal(succeeded.applied, true);
      assert.equal(succeeded.run !== undefined && 'failureReason' in succeeded.run, false);
      const read = await h.store.get(stale.runId);
      assert.equal(read !== undefined && 'failureReason' in read, false, 'the reason is cleared in the store too');

      const failing = await given({ status: 'running', attempts: 3 });
      const failed = await h.store.transition(failing.runId, { to: 'failed', at: new Date(), failureReason: 'Processing failed after 3 attempts.' });
      assert.equal(failed.run?.failureReason, 'Processing failed after 3 attempts.');
      assert.equal((await h.store.get(failing.runId))?.failureReason, 'Processing failed after 3 attempts.');
    });

    it('applies exactly the moves core canTransition allows, from every status to every status', async function () {
      const wrong: string[] = [];
      for (const from of RUN_STATUSES) {
        for (const to of RUN_STATUSES) {
          const run = await given({ status: from, attempts: 1 });
          const outcome = await h.store.transition(run.runId, { to, at: new Date('2026-01-02T00:00:00Z') });
          const stored = await h.store.get(run.runId);
          const expected = canTransition(from, to) ? to : from;
          if (outcome.applied !== canTransition(from, to) || stored?.status !== expected || outcome.run?.status !== expected) {
            wrong.push(`${from} → ${to}: applied ${String(outcome.applied)}, stored ${String(stored?.status)}`);
          }
        }
      }
      assert.deepEqual(wrong, []);
    });

    it('never moves a final run, and answers it as found', async function () {
      for (const status of FINAL_RUN_STATUSES) {
        const run = await given({ status, attempts: 1, ...(status === 'failed' ? { failureReason: 'kept' } : {}) });
        for (const to of RUN_STATUSES) {
          const outcome = await h.store.transition(run.runId, { to, at: new Date('2026-01-02T00:00:00Z'), countAttempt: true });
          assert.equal(outcome.applied, false, `${status} → ${to} must not apply`);
          assert.deepEqual(outcome.run, run, `${status} → ${to}: the run as found`);
        }
        assert.deepEqual(await h.store.get(run.runId), run);
      }
    });

    it('lets exactly one of concurrent changes to a final status apply', async function () {
      const finals: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];
      for (let round = 0; round < 5; round++) {
        const run = await given({ status: 'running', attempts: 1 });
        const at = new Date();
        const outcomes = await Promise.all(
          Array.from({ length: 6 }, (_, i) => {
            const to = finals[i % finals.length] ?? 'succeeded';
            return h.store.transition(run.runId, { to, at, ...(to === 'failed' ? { failureReason: `racer ${i}` } : {}) });
          }),
        );
        const applied = outcomes.filter((o) => o.applied);
        assert.equal(applied.length, 1, `round ${round}: ${applied.length} of 6 racing changes applied`);
        const stored = await h.store.get(run.runId);
        assert.deepEqual(stored, applied[0]?.run, 'the store holds the one change that applied');
        assert.equal(stored?.attempts, 1);
        for (const o of outcomes) assert.ok(o.run !== undefined && FINAL_RUN_STATUSES.has(o.run.status), 'every loser sees a final run');
      }
    });

    it('does not apply a change to a missing run, nor create one', async function () {
      const runId = contractRunId('missing');
      const outcome = await h.store.transition(runId, { to: 'running', at: new Date(), countAttempt: true });
      assert.deepEqual(outcome, { applied: false, run: undefined });
      assert.equal(await h.store.get(runId), undefined);
    });
  });
}
