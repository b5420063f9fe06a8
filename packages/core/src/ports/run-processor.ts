import type { Run } from '../domain/run.js';

/** How processing a run ended. `reason` is safe, human-readable text. */
export type RunProcessingResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * The agent runtime: does the work of one run. Supplied by the embedder; the API server
 * ships a demo processor.
 *
 * Contract: resolves how the run ended; rejects (or is interrupted with the process) for
 * a failure that deserves another attempt. Must tolerate being called again for the same
 * run after a crash (at-least-once).
 */
export interface RunProcessor {
  process(run: Run): Promise<RunProcessingResult>;
}
