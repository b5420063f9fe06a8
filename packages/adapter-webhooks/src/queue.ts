import type { WebhookDelivery } from './delivery.js';

/**
 * Where deliveries wait for their attempts: {@link InMemoryWebhookQueue} (timers, lost with
 * the process) or {@link BullMqWebhookQueue} (Redis, survives restarts).
 */
export interface WebhookQueue {
  /**
   * Queues the first attempt of `delivery`, due now. A delivery whose `deliveryId` is
   * already queued is kept once.
   * @throws the core's `DependencyUnavailableError` when the queue's store cannot be reached in time.
   */
  enqueue(delivery: WebhookDelivery): Promise<void>;
}
