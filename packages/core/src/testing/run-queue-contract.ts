import assert from 'node:assert/strict';
import type { RunQueue } from '../ports/run-queue.js';
import type { RunStore } from '../ports/run-store.js';
import { aRun } from './builders.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What the {@link runQueueContract} needs: a queue and the store it records runs in. */
export interface RunQueueHarness {
  readonly queue: RunQueue;
  readonly store: RunStore;
  /** How many jobs are scheduled for `runId` (0 or 1), if the implementation can tell. */
  scheduledCount?(runId: string): Promise<number>;
  /** Frees keys, clients and workers. */
  close(): Promise<void>;
}

/**
 * The behaviour every {@link RunQueue} + {@link RunStore} pair shares: an enqueued run is
 * readable at once as queued, enqueueing is idempotent by run id, saves replace, unknown
 * ids are absent. Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a fresh harness for each test (closed after it).
 * @param runner - the runner to register with: `{ describe, it, beforeEach, afterEach }`
 *   from `node:test`, mocha or another BDD runner ({@link TestRunner}); default mocha's
 *   globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function runQueueContract(name: string, makeHarness: () => Promise<RunQueueHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'runQueueContract');
  describe(`RunQueue contract: ${name}`, function () {
    let h: RunQueueHarness;
    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    it('records an enqueued run, readable at once with every field', async function () {
      const run = aRun({ runId: `run-${Date.now()}-1`, request: { kind: 'files', files: [{ file_key: 'k', file_name: 'n.pdf', content_type: 'application/pdf' }], processTogether: true, backgroundFiles: [], notificationEmail: 'a@example.com' } });
      await h.queue.enqueue(run);
      const stored = await h.store.get(run.runId);
      assert.ok(stored, 'the run must be readable after enqueue resolves');
      assert.equal(stored.runId, run.runId);
      assert.equal(stored.workflowRunId, run.workflowRunId);
      assert.equal(stored.accountId, run.accountId);
      assert.equal(stored.agentId, run.agentId);
      assert.equal(stored.createdAt.toISOString(), run.createdAt.toISOString());
      assert.deepEqual(stored.request, run.request);
    });

    it('never schedules the same run id twice', async function () {
      const run = aRun({ runId: `run-${Date.now()}-2` });
      await h.queue.enqueue(run);
      await h.queue.enqueue(run);
      if (h.scheduledCount !== undefined) assert.equal(await h.scheduledCount(run.runId), 1);
      assert.equal((await h.store.get(run.runId))?.runId, run.runId);
    });

    it('replaces a run on save, and answers undefined for an unknown id', async function () {
      const run = aRun({ runId: `run-${Date.now()}-3` });
      await h.store.save(run);
      await h.store.save({ ...run, status: 'failed', failureReason: 'boom', attempts: 2, updatedAt: new Date('2026-01-01T00:01:00Z') });
      const stored = await h.store.get(run.runId);
      assert.equal(stored?.status, 'failed');
      assert.equal(stored?.failureReason, 'boom');
      assert.equal(stored?.attempts, 2);
      assert.equal(stored?.updatedAt.toISOString(), '2026-01-01T00:01:00.000Z');
      assert.equal(await h.store.get('no-such-run'), undefined);
    });
  });
}
