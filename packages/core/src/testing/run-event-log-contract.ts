import assert from 'node:assert/strict';
import type { Run } from '../domain/run.js';
import type { RunEventLog } from '../ports/run-event-log.js';
import type { RunStore } from '../ports/run-store.js';
import { aRun } from './builders.js';
import { eventually } from './eventually.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What {@link runEventLogContract} needs: a run store that is also the runs' event log. */
export interface RunEventLogHarness {
  /** A store holding no run with an `events-contract-*` id. */
  readonly store: RunStore & RunEventLog;
  /** Frees keys and clients. */
  close(): Promise<void>;
}

let issued = 0;
function eventsRunId(what: string): string {
  issued += 1;
  return `events-contract-${what}-${Date.now()}-${issued}`;
}

/**
 * The behaviour every run store that records events shares (core `RunStore.requestCancel`,
 * `ports/run-event-log.ts`): cancel queued → cancelled at once, running → a cancel
 * request that keeps the first time, final → nothing; one event per status change with
 * the run as of it (ids distinct, in the order recorded), none for a progress report, a
 * refused change or a cancel request on a running run; `events` after an id, all for an
 * unknown id; `watch` tells of each new event until unwatched.
 * Source: docs/CONTRACT.md "Runs lifecycle"; docs/decisions.md "Cancel and run events".
 * Registers a `describe` block with `runner` (default mocha's globals; see {@link TestRunner}).
 */
export function runEventLogContract(name: string, makeHarness: () => Promise<RunEventLogHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'runEventLogContract');
  describe(`RunEventLog contract: ${name}`, function () {
    let h: RunEventLogHarness;
    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    async function given(overrides: Partial<Run> = {}): Promise<Run> {
      const run = aRun({ runId: eventsRunId('run'), ...overrides });
      await h.store.save(run);
      return run;
    }
    const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

    it('records one event per status change, with the run as of it, in order', async function () {
      const run = await given();
      await h.store.transition(run.runId, { to: 'running', at: at(1), countAttempt: true });
      await h.store.reportProgress(run.runId, { percent: 50, updatedAt: at(2) });
      assert.equal((await h.store.transition(run.runId, { to: 'queued', at: at(2) })).applied, true);
      assert.equal((await h.store.transition(run.runId, { to: 'succeeded', at: at(3) })).applied, false, 'queued → succeeded is refused');
      await h.store.transition(run.runId, { to: 'running', at: at(4), countAttempt: true });
      await h.store.transition(run.runId, { to: 'succeeded', at: at(5), output: { n: 1 } });
      const events = await h.store.events(run.runId);
      assert.deepEqual(
        events.map((e) => [e.type, e.at.toISOString(), e.run.status, e.run.attempts]),
        [
          ['run.queued', run.updatedAt.toISOString(), 'queued', 0],
          ['run.running', at(1).toISOString(), 'running', 1],
          ['run.queued', at(2).toISOString(), 'queued', 1],
          ['run.running', at(4).toISOString(), 'running', 2],
          ['run.succeeded', at(5).toISOString(), 'succeeded', 2],
        ],
      );
      assert.deepEqual(events[4]?.run, await h.store.get(run.runId), 'the last event holds the run as stored');
      assert.equal(new Set(events.map((e) => e.id)).size, events.length, 'ids are distinct');
    });

    it('answers the events after an id; all of them for an unknown id; none for an unknown run', async function () {
      const run = await given();
      await h.store.transition(run.runId, { to: 'running', at: at(1), countAttempt: true });
      await h.store.transition(run.runId, { to: 'failed', at: at(2), failureReason: 'No.' });
      const all = await h.store.events(run.runId);
      assert.equal(all.length, 3);
      assert.deepEqual((await h.store.events(run.runId, all[0]?.id)).map((e) => e.type), ['run.running', 'run.failed']);
      assert.deepEqual(await h.store.events(run.runId, all[2]?.id), []);
      assert.deepEqual((await h.store.events(run.runId, '99999999999999-0')).map((e) => e.type), ['run.queued', 'run.running', 'run.failed']);
      assert.deepEqual((await h.store.events(run.runId, 'not an id')).length, 3);
      assert.deepEqual(await h.store.events(eventsRunId('missing')), []);
    });

    it('requestCancel: queued → cancelled at once, with its event', async function () {
      const run = await given();
      const outcome = await h.store.requestCancel(run.runId, at(7));
      assert.equal(outcome.kind, 'cancelled');
      const stored = await h.store.get(run.runId);
      assert.deepEqual(outcome.kind === 'cancelled' ? outcome.run : undefined, stored);
      assert.equal(stored?.status, 'cancelled');
      assert.deepEqual(stored?.updatedAt, at(7));
      assert.deepEqual(stored?.cancelRequestedAt, at(7));
      assert.deepEqual((await h.store.events(run.runId)).map((e) => e.type), ['run.queued', 'run.cancelled']);
      assert.equal((await h.store.transition(run.runId, { to: 'running', at: at(8), countAttempt: true })).applied, false, 'a worker can no longer start it');
    });

    it('requestCancel: running stays running with the first cancel time, no event; final and missing change nothing', async function () {
      const run = await given({ status: 'running', attempts: 1 });
      const first = await h.store.requestCancel(run.runId, at(7));
      assert.equal(first.kind, 'requested');
      const again = await h.store.requestCancel(run.runId, at(9));
      assert.equal(again.kind, 'requested');
      const stored = await h.store.get(run.runId);
      assert.equal(stored?.status, 'running');
      assert.deepEqual(stored?.cancelRequestedAt, at(7), 'the first request is kept');
      assert.deepEqual(stored?.updatedAt, run.updatedAt, 'not a status change');
      assert.equal((await h.store.events(run.runId)).length, 1);
      await h.store.transition(run.runId, { to: 'cancelled', at: at(10) });
      const final = await h.store.requestCancel(run.runId, at(11));
      assert.equal(final.kind, 'final');
      assert.equal((await h.store.get(run.runId))?.status, 'cancelled');
      assert.deepEqual((await h.store.get(run.runId))?.cancelRequestedAt, at(7), 'kept once cancelled');
      assert.deepEqual(await h.store.requestCancel(eventsRunId('missing'), at(1)), { kind: 'missing' });
    });

    it('watch tells of every new event until unwatched', async function () {
      const run = await given();
      let told = 0;
      const unwatch = h.store.watch(run.runId, (error) => {
        if (error === undefined) told += 1;
      });
      try {
        await h.store.transition(run.runId, { to: 'running', at: at(1), countAttempt: true });
        await eventually(() => told >= 1, 'told of run.running', 5000);
        const before = told;
        await h.store.transition(run.runId, { to: 'succeeded', at: at(2) });
        await eventually(() => told > before, 'told of run.succeeded', 5000);
      } finally {
        unwatch();
      }
      const after = told;
      unwatch();
      const other = await given();
      await h.store.transition(other.runId, { to: 'running', at: at(1), countAttempt: true });
      await h.store.events(other.runId);
      assert.equal(told, after, 'not told once unwatched');
    });
  });
}
