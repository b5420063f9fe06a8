import type { Logger, Notifier, Run } from '@svc/core';

/**
 * A {@link Notifier} that stands in for e-mail: for a run with a `notification_email`
 * (Option 1 requests only), it writes one info line with the run id, its final status
 * and the address, and nothing else of the run. Runs without an address have nobody to
 * notify and write nothing. The address is not a secret, but it is personal data: the
 * line carries it because it is the notification; nothing else does.
 * Source: docs/CONTRACT.md "Runs" (`notification_email`).
 */
export class LogNotifier implements Notifier {
  /** @param logger - where the line goes (info level). */
  constructor(private readonly logger: Logger) {}

  /** Logs the notification line when the run has an address; never rejects. */
  runFinished(run: Run): Promise<void> {
    const email = run.request.kind === 'files' ? run.request.notificationEmail : undefined;
    if (email !== undefined) {
      this.logger.info({ run_id: run.runId, status: run.status, notification_email: email }, 'run finished: notification due');
    }
    return Promise.resolve();
  }
}
