import type { Logger, Notifier, Run } from '@svc/core';

/**
 * A {@link Notifier} that stands in for e-mail: for a run with a `notification_email`
 * (Option 1 requests only), it writes one info line saying that a notification is due,
 * with the run id, the id of the request that started the run and its final status.
 * The address itself is personal data and never goes to a log (docs/decisions.md
 * "Observability"): a real notifier reads it from the run. Runs without an address
 * have nobody to notify and write nothing.
 * Source: docs/CONTRACT.md "Runs" (`notification_email`).
 */
export class LogNotifier implements Notifier {
  /** @param logger - where the line goes (info level). */
  constructor(private readonly logger: Logger) {}

  /** Logs the notification line when the run has an address; never rejects. */
  runFinished(run: Run): Promise<void> {
    const email = run.request.kind === 'files' ? run.request.notificationEmail : undefined;
    if (email !== undefined) {
      this.logger.info(
        { run_id: run.runId, ...(run.requestId !== undefined ? { request_id: run.requestId } : {}), status: run.status, channel: 'email' },
        'run finished: notification due',
      );
    }
    return Promise.resolve();
  }
}
