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
  /** The index of each notifier that takes non-final changes (`runChanged`), found once. */
  private readonly changeTakers: readonly number[];

  /**
   * @param notifiers - told in this order (started together).
   * @param logger - gets a warn line per notifier that rejects; default silent.
   */
  constructor(
    private readonly notifiers: readonly Notifier[],
    private readonly logger: Logger = silentLogger,
  ) {
    this.changeTakers = notifiers.flatMap((notifier, index) => (notifier.runChanged !== undefined ? [index] : []));
  }

  /** Tells every notifier that takes non-final changes; resolves when all have settled. */
  runChanged(change: RunChange): Promise<void> {
    // On every run start (the `run.queued` event), usually for one notifier (webhooks):
    // that one is told without the `allSettled` round, 4 promises fewer a run start.
    const takers = this.changeTakers;
    if (takers.length === 0) return Promise.resolve();
    if (takers.length === 1) return this.tellOne(takers[0] as number, change);
    return this.tellAll(change);
  }

  private tellOne(index: number, change: RunChange): Promise<void> {
    const warn = (reason: unknown): void => {
      this.logger.warn({ run_id: change.run.runId, event_type: change.type, notifier: index, error_type: errorTypeOf(reason) }, 'run notification failed');
    };
    try {
      const told = (this.notifiers[index] as Notifier).runChanged?.(change);
      // A notifier keeps the Notifier contract (a promise); `Promise.resolve` only for one that does not.
      return (told instanceof Promise ? told : Promise.resolve(told)).then(undefined, warn);
    } catch (error) {
      warn(error);
      return Promise.resolve();
    }
  }

  private async tellAll(change: RunChange): Promise<void> {
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
