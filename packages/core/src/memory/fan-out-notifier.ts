import { errorTypeOf } from '../domain/error-type.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import type { Notifier, RunChange } from '../ports/notifier.js';
import type { Run } from '../domain/run.js';

/**
 * A {@link Notifier} that tells every one of `notifiers` (e.g. the log line, e-mail and
 * webhooks), all at once, and resolves when each has settled: one that rejects is logged
 * (`run notification failed`, with its index and error type, never its message) and
 * never keeps the others from being told. Never rejects, so the core `Notifier` contract
 * holds whatever the parts do.
 */
export class FanOutNotifier implements Notifier {
  /**
   * @param notifiers - told in this order (started together).
   * @param logger - gets a warn line per notifier that rejects; default silent.
   */
  constructor(
    private readonly notifiers: readonly Notifier[],
    private readonly logger: Logger = silentLogger,
  ) {}

  /** Tells every notifier that takes non-final changes; resolves when all have settled. */
  async runChanged(change: RunChange): Promise<void> {
    const settled = await Promise.allSettled(this.notifiers.map(async (notifier) => notifier.runChanged?.(change)));
    settled.forEach((outcome, index) => {
      if (outcome.status === 'rejected') this.logger.warn({ run_id: change.run.runId, event_type: change.type, notifier: index, error_type: errorTypeOf(outcome.reason) }, 'run notification failed');
    });
  }

  /** Tells every notifier; resolves when all have settled. */
  async runFinished(run: Run): Promise<void> {
    const settled = await Promise.allSettled(this.notifiers.map(async (notifier) => notifier.runFinished(run)));
    settled.forEach((outcome, index) => {
      if (outcome.status === 'rejected') this.logger.warn({ run_id: run.runId, notifier: index, error_type: errorTypeOf(outcome.reason) }, 'run notification failed');
    });
  }
}
