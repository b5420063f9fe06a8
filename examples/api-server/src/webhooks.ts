import { InMemoryWebhookQueue, UndiciWebhookSender, WebhookDeliverer, WebhookNotifier } from '@svc/adapter-webhooks/memory';
import type { Logger, Telemetry, WebhookEndpointCatalog } from '@svc/core';
import { redisBudget } from './container.js';
import type { ServerSettings } from './settings.js';

/** The webhook deliveries of one process (docs/decisions.md "Webhooks"). */
export interface Webhooks {
  /** Publishes run events as deliveries: give it to the worker's notifier (core `FanOutNotifier`). */
  readonly notifier: WebhookNotifier;
  /**
   * Called when a stop begins: with Redis, this process takes no new delivery (those
   * waiting stay in Redis for another process), so that no attempt is cut mid-POST at the
   * close and sent again after its lock expires. In memory, deliveries go on until
   * {@link close} (they would be lost otherwise). Never rejects; not awaited by the drain.
   */
  stopDelivering(): Promise<void>;
  /**
   * Stops the delivery worker (an attempt in flight may finish within `budgetMs`), then the
   * queue's clients. In memory, deliveries still queued are lost (one log line counts them).
   * Never rejects.
   */
  close(budgetMs: number): Promise<void>;
}

/**
 * Starts the webhook deliveries of a process: with `redis_url`, a BullMQ queue (queue
 * `webhooks` under `redis_prefix`) whose worker runs here when `deliver` is true (the
 * processes that run run workers: the API server with `worker.enabled`, and `pnpm worker`);
 * without Redis, an in-memory queue on timers (its attempts always run here). BullMQ is
 * imported only with `redis_url`.
 * @param catalog - the endpoints (the configuration's accounts, or the PostgreSQL catalog).
 * @param deliver - start the delivery worker in this process.
 */
export async function startWebhooks(settings: ServerSettings, catalog: WebhookEndpointCatalog, options: { logger: Logger; telemetry: Telemetry; deliver: boolean }): Promise<Webhooks> {
  const { logger, telemetry } = options;
  const sender = new UndiciWebhookSender({ allowPrivateAddresses: settings.webhooks.allowPrivateAddresses });
  const deliverer = new WebhookDeliverer(catalog, sender, { retryScheduleMs: settings.webhooks.retryScheduleMs, logger, telemetry });
  if (settings.redisUrl !== undefined) {
    const { BullMqWebhookQueue } = await import('@svc/adapter-webhooks');
    const queue = BullMqWebhookQueue.open(
      {
        redis: settings.redisUrl,
        prefix: settings.redisPrefix,
        // Queued from a worker's notifier, not a request: the runs' request-side share of dependency_timeout_ms is ample.
        operationTimeoutMs: redisBudget(settings.dependencyTimeoutMs).runsMs,
        retryScheduleMs: settings.webhooks.retryScheduleMs,
      },
      { logger },
    );
    if (options.deliver) queue.startWorker(deliverer, { concurrency: settings.worker.concurrency });
    return {
      notifier: new WebhookNotifier(catalog, queue, { baseUrl: settings.baseUrl, logger }),
      stopDelivering: () => queue.stopDelivering(),
      close: async (budgetMs) => {
        await queue.close(false, budgetMs);
        await sender.close().catch(() => undefined);
      },
    };
  }
  const queue = new InMemoryWebhookQueue(deliverer, logger);
  return {
    notifier: new WebhookNotifier(catalog, queue, { baseUrl: settings.baseUrl, logger }),
    stopDelivering: () => Promise.resolve(),
    close: async (budgetMs) => {
      await queue.close(budgetMs);
      await sender.close().catch(() => undefined);
    },
  };
}
