import assert from 'node:assert/strict';
import { canTransition, compareRunListKeys, FINAL_RUN_STATUSES, RUN_STATUSES, runListKey, type Run, type RunStatus } from '../domain/run.js';
import type { RunListFilter, RunStore } from '../ports/run-store.js';
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

/** An account id no other test uses, so that a list in a shared store holds this test's runs only. */
function contractAccountId(): string {
  issued += 1;
  return `store-contract-acct-${Date.now()}-${issued}`;
}

/** Most pages {@link RunStoreHarness} listings follow before calling the paging endless. */
const MAX_PAGES = 200;

/**
 * The behaviour every {@link RunStore} shares (core `ports/run-store.ts`): unknown ids
 * are absent, saves replace, and `transition` is a compare-and-set that follows core
 * `canTransition` exactly, never moves a final run, lets exactly one of concurrent
 * finishing changes apply, counts attempts and sets or clears the failure reason.
 * `list` answers one account's runs newest first (ties by run id), filtered by agent and
 * status, and pages to the last page without a gap, a repeat or another account's run,
 * also when statuses change between pages.
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

    /** Follows `next` from the first page (or the one after `from`) to the last: the pages' runs, in order. */
    async function listAll(accountId: string, filter: RunListFilter, limit: number, from?: string): Promise<{ runs: Run[]; pages: number }> {
      const runs: Run[] = [];
      let after: string | undefined = from;
      for (let pages = 1; pages <= MAX_PAGES; pages += 1) {
        const page = await h.store.list(accountId, filter, { limit, ...(after === undefined ? {} : { after }) });
        assert.ok(page.items.length <= limit, `page ${pages}: ${page.items.length} runs, over the limit ${limit}`);
        runs.push(...page.items);
        if (page.next === undefined) return { runs, pages };
        after = page.next;
      }
      throw new Error(`list of ${accountId} still had a next page after ${MAX_PAGES} pages`);
    }

    /** Saves runs of `accountId`, one a second from 2026-02-01 on (the last newest), with `overrides` per run. */
    async function givenList(accountId: string, overrides: readonly Partial<Run>[]): Promise<Run[]> {
      const saved: Run[] = [];
      for (const [i, o] of overrides.entries()) {
        const at = new Date(Date.UTC(2026, 1, 1, 0, 0, i));
        saved.push(await given({ accountId, createdAt: at, updatedAt: at, ...o }));
      }
      return saved;
    }

    const newestFirst = (runs: readonly Run[]): Run[] => [...runs].sort((a, b) => compareRunListKeys(runListKey(a), runListKey(b)));
    const ids = (runs: readonly Run[]): string[] => runs.map((r) => r.runId);

    it('list: answers the runs of the account newest first, runs of the same millisecond by run id, as get answers them', async function () {
      const accountId = contractAccountId();
      const base = contractRunId('tie');
      const sameMs = new Date('2026-02-03T04:05:06.789Z');
      // Saved out of order: the order comes from createdAt, not from when they were saved.
      const runs = [
        await given({ accountId, runId: `${base}-b`, createdAt: sameMs, updatedAt: sameMs }),
        await given({ accountId, createdAt: new Date('2026-02-01T00:00:00Z'), status: 'succeeded', attempts: 1, output: { n: 1 } }),
        await given({ accountId, createdAt: new Date('2026-02-05T00:00:00Z'), status: 'failed', attempts: 2, failureReason: 'It failed.' }),
        await given({ accountId, runId: `${base}-a`, createdAt: sameMs, updatedAt: sameMs, status: 'running', attempts: 1 }),
        await given({ accountId, createdAt: new Date('2026-02-04T00:00:00Z'), request: { kind: 'message', message: 'listed' }, requestId: 'req-list-1' }),
      ];
      const page = await h.store.list(accountId, {}, { limit: 100 });
      assert.equal(page.next, undefined, 'one page holds all five');
      assert.deepEqual(ids(page.items), ids([runs[2], runs[4], runs[3], runs[0], runs[1]] as Run[]));
      for (const listed of page.items) assert.deepEqual(listed, await h.store.get(listed.runId), `${listed.runId} is listed as get answers it`);
      assert.deepEqual(await h.store.list(contractAccountId(), {}, { limit: 100 }), { items: [] }, 'an account without runs: an empty page, no next');
    });

    it('list: pages to the last page without a gap or a repeat, whatever the limit; the last page has no next', async function () {
      const accountId = contractAccountId();
      const runs = await givenList(accountId, Array.from({ length: 7 }, () => ({})));
      const expected = ids(newestFirst(runs));
      for (const limit of [1, 2, 3, 6, 7, 8, 100]) {
        const { runs: listed, pages } = await listAll(accountId, {}, limit);
        assert.deepEqual(ids(listed), expected, `limit ${limit}`);
        assert.ok(pages >= Math.ceil(7 / limit), `limit ${limit}: ${pages} pages`);
      }
      const first = await h.store.list(accountId, {}, { limit: 3 });
      assert.deepEqual(ids(first.items), expected.slice(0, 3), 'a full first page while more follow');
      assert.equal(first.next, runListKey(first.items[2] as Run), 'next is the last run\'s list key');
    });

    it('list: filters by agent, by status, and by both; an agent without runs gives an empty list', async function () {
      const accountId = contractAccountId();
      const runs = await givenList(accountId, [
        { agentId: 'agent_x', status: 'queued' },
        { agentId: 'agent_y', status: 'queued' },
        { agentId: 'agent_x', status: 'succeeded', attempts: 1 },
        { agentId: 'agent_x', status: 'queued' },
        { agentId: 'agent_y', status: 'failed', attempts: 1 },
      ]);
      const expected = (keep: (r: Run) => boolean): string[] => ids(newestFirst(runs.filter(keep)));
      assert.deepEqual(ids((await listAll(accountId, { agentId: 'agent_x' }, 2)).runs), expected((r) => r.agentId === 'agent_x'));
      assert.deepEqual(ids((await listAll(accountId, { status: 'queued' }, 2)).runs), expected((r) => r.status === 'queued'));
      assert.deepEqual(ids((await listAll(accountId, { agentId: 'agent_x', status: 'queued' }, 1)).runs), expected((r) => r.agentId === 'agent_x' && r.status === 'queued'));
      assert.deepEqual(ids((await listAll(accountId, { status: 'cancelled' }, 2)).runs), []);
      assert.deepEqual(await h.store.list(accountId, { agentId: 'agent_none' }, { limit: 20 }), { items: [] });
    });

    it("list: never answers another account's run, whatever the filter or position", async function () {
      const a = contractAccountId();
      const b = contractAccountId();
      // Interleaved in time, same agent and status: only the account tells them apart.
      const runs = await givenList(a, Array.from({ length: 6 }, (_, i) => ({ accountId: i % 2 === 0 ? a : b, agentId: 'agent_shared' })));
      const ofA = ids(newestFirst(runs.filter((r) => r.accountId === a)));
      const ofB = ids(newestFirst(runs.filter((r) => r.accountId === b)));
      for (const filter of [{}, { agentId: 'agent_shared' }, { status: 'queued' as const }]) {
        assert.deepEqual(ids((await listAll(a, filter, 2)).runs), ofA, `A, ${JSON.stringify(filter)}`);
        assert.deepEqual(ids((await listAll(b, filter, 1)).runs), ofB, `B, ${JSON.stringify(filter)}`);
      }
      // A position taken from A's list, used on B's: B's runs after it, never A's.
      const firstOfA = await h.store.list(a, {}, { limit: 1 });
      const fromThere = await h.store.list(b, {}, { limit: 100, after: firstOfA.next ?? '' });
      assert.ok(fromThere.items.every((r) => r.accountId === b));
    });

    it('list: a run whose status changes between pages is answered once, in order; with a status filter as it was when its page was read', async function () {
      const accountId = contractAccountId();
      const runs = newestFirst(await givenList(accountId, Array.from({ length: 6 }, () => ({ status: 'queued' as const }))));
      const [r0, r1, r2, r3, r4] = runs as [Run, Run, Run, Run, Run, Run];
      // Unfiltered: one run of page 1 and one of page 2 change between the pages.
      const first = await h.store.list(accountId, {}, { limit: 3 });
      assert.deepEqual(ids(first.items), ids([r0, r1, r2]));
      await h.store.transition(r1.runId, { to: 'running', at: new Date(), countAttempt: true });
      await h.store.transition(r4.runId, { to: 'running', at: new Date(), countAttempt: true });
      const rest = (await listAll(accountId, {}, 3, first.next)).runs;
      assert.deepEqual(ids([...first.items, ...rest]), ids(runs), 'every run once, in order');
      assert.equal(rest.find((r) => r.runId === r4.runId)?.status, 'running', 'a page shows the status as it is when read');

      // Filtered on queued: r0 (already answered) and r3 (not yet) start running between the pages.
      const queuedFirst = await h.store.list(accountId, { status: 'queued' }, { limit: 2 });
      assert.deepEqual(ids(queuedFirst.items), ids([r0, r2]));
      await h.store.transition(r0.runId, { to: 'running', at: new Date(), countAttempt: true });
      await h.store.transition(r3.runId, { to: 'running', at: new Date(), countAttempt: true });
      assert.notEqual(queuedFirst.next, undefined, 'more queued runs follow');
      const queuedRest = (await listAll(accountId, { status: 'queued' }, 2, queuedFirst.next)).runs;
      assert.deepEqual(ids(queuedRest), ids([runs[5] as Run]), 'r3 no longer matches; r0 is never answered again');
    });

    it('list: a saved-again or changed run stays one entry; any string is a position', async function () {
      const accountId = contractAccountId();
      const [older, newer] = (await givenList(accountId, [{}, {}])) as [Run, Run];
      await h.store.save(newer);
      await h.store.save({ ...newer, status: 'running', attempts: 1 });
      await h.store.transition(newer.runId, { to: 'succeeded', at: new Date() });
      await h.store.reportProgress(older.runId, { percent: 5, updatedAt: new Date() });
      assert.deepEqual(ids((await listAll(accountId, {}, 1)).runs), ids([newer, older]));
      // A position between the two (as a forged cursor may carry) starts after it; one past the end gives nothing.
      const between = runListKey({ createdAt: new Date(older.createdAt.getTime() + 500), runId: 'between' });
      assert.deepEqual(ids((await h.store.list(accountId, {}, { limit: 10, after: between })).items), ids([older]));
      assert.deepEqual((await h.store.list(accountId, {}, { limit: 10, after: '~' })).items, []);
      assert.deepEqual(ids((await h.store.list(accountId, {}, { limit: 10, after: '' })).items), ids([newer, older]), 'the empty position is before the first run');
    });

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

    it('moves a run with a cancel request that is made succeeded or failed to cancelled instead, without output or reason (core statusAfter)', async function () {
      for (const to of ['succeeded', 'failed'] as const) {
        const run = await given({ status: 'running', attempts: 1, cancelRequestedAt: new Date('2026-01-01T00:00:01Z') });
        const outcome = await h.store.transition(run.runId, { to, at: new Date('2026-01-02T00:00:00Z'), output: { done: true }, failureReason: 'The agent gave up.' });
        const stored = await h.store.get(run.runId);
        assert.equal(outcome.applied, true, to);
        for (const seen of [outcome.run, stored]) {
          assert.equal(seen?.status, 'cancelled', `${to}: cancelled`);
          assert.equal(seen?.output, undefined, `${to}: no output`);
          assert.equal(seen?.failureReason, undefined, `${to}: no failure reason`);
          assert.equal(seen?.cancelRequestedAt?.toISOString(), '2026-01-01T00:00:01.000Z', `${to}: the request time kept`);
        }
      }
      const asked = await given({ status: 'running', attempts: 1, cancelRequestedAt: new Date('2026-01-01T00:00:01Z') });
      assert.equal((await h.store.transition(asked.runId, { to: 'cancelled', at: new Date() })).run?.status, 'cancelled');
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
