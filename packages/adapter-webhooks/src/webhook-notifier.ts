import { errorTypeOf, runEventTypeOf, silentLogger, type Logger, type Notifier, type Run, type RunEvent, type WebhookEndpointCatalog } from '@svc/core';
import { deliveryOf } from './delivery.js';
import type { WebhookQueue } from './queue.js';

/** Options of {@link WebhookNotifier}. */
export interface WebhookNotifierOptions {
  /** The API's base URL, for the run's `status_url` in the body. */
  readonly baseUrl: string;
  /** Gets a line per event that could not be queued; default silent. */
  readonly logger?: Logger;
}

/**
 * Turns run events into webhook deliveries (docs/CONTRACT.md "Runs lifecycle", webhooks):
 * one per endpoint of the run's account that takes the event's type, queued at once.
 * As a core `Notifier` (combine it with others in core `FanOutNotifier`), `runFinished(run)`
 * publishes `run.<status>` at `run.updatedAt`; {@link publish} takes any `RunEvent`, for the
 * non-final events (`run.queued`, `run.running`).
 */
export class WebhookNotifier implements Notifier {
  /**
   * @param catalog - the accounts' endpoints.
   * @param queue - where deliveries wait for their attempts.
   * @param options - see {@link WebhookNotifierOptions}.
   */
  constructor(
    private readonly catalog: WebhookEndpointCatalog,
    private readonly queue: WebhookQueue,
    private readonly options: WebhookNotifierOptions,
  ) {}

  /** Publishes a non-final event (`run.queued`, `run.running`): core `Notifier.runChanged`. */
  runChanged(change: Omit<RunEvent, 'id'>): Promise<void> {
    return this.publish(change);
  }

  /** Publishes the final event of `run` (`run.<status>`, at `run.updatedAt`). */
  runFinished(run: Run): Promise<void> {
    return this.publish({ type: runEventTypeOf(run.status), at: run.updatedAt, run });
  }

  /**
   * Queues one delivery of `event` per endpoint of `event.run.accountId` whose `events`
   * include `event.type`. Call it once per event, from the process that made the change
   * (the same event twice makes the same deliveries, which the queue keeps once).
   * Resolves once every delivery is queued.
   * @throws when the catalog or the queue cannot be reached (then nothing, or only some
   *   deliveries, were queued; a line names the event); the run itself is not affected.
   */
  async publish(event: Omit<RunEvent, 'id'>): Promise<void> {
    const logger = this.options.logger ?? silentLogger;
    try {
      const endpoints = (await this.catalog.listByAccount(event.run.accountId)).filter((e) => e.events.includes(event.type));
      for (const endpoint of endpoints) await this.queue.enqueue(deliveryOf(endpoint.endpointId, event, this.options.baseUrl));
    } catch (error) {
      logger.error({ run_id: event.run.runId, event_type: event.type, error_type: errorTypeOf(error) }, 'webhook deliveries not queued');
      throw error;
    }
  }
}
