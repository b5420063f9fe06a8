import type { Logger, Notifier } from '@svc/core';
import { LogNotifier } from '@svc/adapter-queue/memory';
import type { PrometheusTelemetry } from './observability/metrics.js';
import type { ServerSettings } from './settings.js';

/**
 * The e-mail notifier of the runs a server's or a standalone worker's worker finishes
 * (docs/decisions.md "E-mail notifications"): with `smtp` configured, adapter-email's
 * `SmtpNotifier` (loaded only then), each message counted in
 * `svc_notifications_total{channel="email",outcome}`; without, adapter-queue's
 * `LogNotifier`: one info line `run finished: notification due`, never the address.
 * @param settings - `smtp` and `base_url` (the message names the run's `status_url`).
 * @param logger - where both notifiers' lines go.
 * @param telemetry - counts each message's outcome.
 */
export async function emailNotifier(settings: Pick<ServerSettings, 'smtp' | 'baseUrl'>, logger: Logger, telemetry: Pick<PrometheusTelemetry, 'notificationFinished'>): Promise<Notifier> {
  if (settings.smtp === undefined) return new LogNotifier(logger);
  const { SmtpNotifier } = await import('@svc/adapter-email');
  return new SmtpNotifier({ smtp: settings.smtp, baseUrl: settings.baseUrl, logger, onOutcome: (outcome) => telemetry.notificationFinished('email', outcome) });
}
