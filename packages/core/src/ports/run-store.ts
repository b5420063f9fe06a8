import type { Run } from '../domain/run.js';

/**
 * Holds runs and their statuses.
 *
 * Contract: `get` resolves `undefined` for an unknown id; `save` replaces the run with
 * the same `runId` (upsert). It rejects only when the store is unreachable.
 */
export interface RunStore {
  /** @returns the run, or `undefined` when there is none with that id. */
  get(runId: string): Promise<Run | undefined>;
  /** Stores the run, replacing any earlier version with the same `runId`. */
  save(run: Run): Promise<void>;
}
