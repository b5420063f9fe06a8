import { silentLogger, type Logger } from '@svc/core';
import type { WebhookDeliverer } from './deliverer.js';
import type { WebhookDelivery } from './delivery.js';
import type { WebhookQueue } from './queue.js';

/**
 * Deliveries on timers in this process (docs/decisions.md "Webhooks"): the queue without
 * Redis. Attempts follow the deliverer's verdicts; a retry waits on an unref'd timer (it
 * keeps no process alive). Everything queued is lost with the process: {@link close}
 * names what it drops in one log line; with Redis configured use {@link BullMqWebhookQueue}.
 */
export class InMemoryWebhookQueue implements WebhookQueue {
  /** Pending deliveries by id → their timer. */
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  /**
   * @param deliverer - makes each attempt.
   * @param logger - gets the line naming deliveries dropped at close or after it.
   */
  constructor(
    private readonly deliverer: WebhookDeliverer,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** See {@link WebhookQueue.enqueue}; after {@link close}, logs the delivery as lost. */
  enqueue(delivery: WebhookDelivery): Promise<void> {
    if (this.closed) {
      this.logger.warn({ webhook_id: delivery.deliveryId, run_id: delivery.runId, endpoint_id: delivery.endpointId }, 'webhook delivery lost: the queue is closed');
    } else if (!this.pending.has(delivery.deliveryId)) {
      this.schedule(delivery, 1, 0);
    }
    return Promise.resolve();
  }

  private schedule(delivery: WebhookDelivery, attempt: number, delayMs: number): void {
    const timer = setTimeout(() => {
      const done = this.deliverer.attempt(delivery, attempt).then((verdict) => {
        if (verdict.kind === 'retry' && !this.closed) this.schedule(delivery, attempt + 1, verdict.delayMs);
        else this.pending.delete(delivery.deliveryId);
      });
      this.inFlight.add(done);
      void done.finally(() => this.inFlight.delete(done));
    }, delayMs);
    timer.unref();
    this.pending.set(delivery.deliveryId, timer);
  }

  /**
   * Stops: no new attempt starts; attempts in flight get at most `graceMs` (each is bounded
   * by the sender's timeout anyway). Deliveries left are lost, named by count in one line.
   * @param graceMs - ms to wait for attempts in flight; default 15000 (one attempt's timeout).
   */
  async close(graceMs = 15_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.pending.values()) clearTimeout(timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    const lost = this.pending.size - this.inFlight.size;
    if (lost > 0) this.logger.warn({ deliveries_lost: lost }, 'webhook deliveries lost at stop: the in-memory queue does not survive the process (configure redis_url)');
  }
}
