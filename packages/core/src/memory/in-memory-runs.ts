import type { Run } from '../domain/run.js';
import type { RunQueue } from '../ports/run-queue.js';
import type { RunStore } from '../ports/run-store.js';

/** Runs held in one process's memory. Embedded default and fake. */
export class InMemoryRunStore implements RunStore {
  private readonly byId = new Map<string, Run>();

  get(runId: string): Promise<Run | undefined> {
    return Promise.resolve(this.byId.get(runId));
  }

  save(run: Run): Promise<void> {
    this.byId.set(run.runId, run);
    return Promise.resolve();
  }

  /** Every stored run, oldest first (for tests and diagnostics). */
  all(): readonly Run[] {
    return [...this.byId.values()];
  }
}

/**
 * A queue in one process's memory: `enqueue` saves the run in the store and appends its
 * id to a FIFO that a worker drains with {@link InMemoryRunQueue.take}. Idempotent by
 * `runId`. Runs are lost with the process: use the BullMQ queue where that matters.
 */
export class InMemoryRunQueue implements RunQueue {
  private readonly pending: string[] = [];
  private readonly known = new Set<string>();
  private readonly waiters: (() => void)[] = [];

  /** @param store - the store the queued runs are recorded in. */
  constructor(readonly store: InMemoryRunStore) {}

  async enqueue(run: Run): Promise<void> {
    if (this.known.has(run.runId)) return;
    await this.store.save(run);
    // Marked only once saved, so that a failed save can be retried with the same id.
    if (this.known.has(run.runId)) return;
    this.known.add(run.runId);
    this.pending.push(run.runId);
    this.waiters.splice(0).forEach((wake) => wake());
  }

  /** Removes and returns the oldest pending run id, or `undefined` when none waits. */
  take(): string | undefined {
    return this.pending.shift();
  }

  /** Resolves when a run is pending (at once if one already is). */
  whenPending(): Promise<void> {
    if (this.pending.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** How many runs wait to be taken. */
  get size(): number {
    return this.pending.length;
  }
}
