import type { Run } from '../domain/run.js';

/**
 * Told when a run reaches a final status, e.g. to e-mail `notification_email`.
 * Contract: failures are the notifier's own; they never change the run's status.
 */
export interface Notifier {
  runFinished(run: Run): Promise<void>;
}
