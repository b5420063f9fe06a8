import type { Run } from '../domain/run.js';
import type { RunEvent } from '../domain/run-event.js';

/**
 * A status change of a run that is not final, as a {@link Notifier} is told of it: the
 * run event without its log id (`run.queued` when the run is accepted, `run.running` when
 * an attempt starts).
 */
export type RunChange = Omit<RunEvent, 'id'>;

/**
 * Told when a run reaches a final status, e.g. to e-mail `notification_email`, and
 * optionally of its other status changes (webhook endpoints that subscribe to
 * `run.queued` / `run.running`). Source: docs/CONTRACT.md "Runs lifecycle".
 * Contract: failures are the notifier's own; they never change the run's status.
 */
export interface Notifier {
  /** The run reached a final status: called once per run, by the process that made it final. */
  runFinished(run: Run): Promise<void>;
  /**
   * The run was accepted (`run.queued`, by the process that accepted it, after the run is
   * recorded) or an attempt started (`run.running`, by the worker). Optional; a rejection is
   * logged by the caller and changes nothing.
   */
  runChanged?(change: RunChange): Promise<void>;
}
