import { errorTypeOf, runEventTypeOf, silentLogger, type Logger, type Notifier, type Run, type RunEvent, type WebhookEndpoint, type WebhookEndpointCatalog } from '@svc/core';
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
  publish(event: Omit<RunEvent, 'id'>): Promise<void> {
    // A `then` and a loop, not an async frame, for what most run starts find: no endpoint
    // takes the event (a run start allocated ~0.9 KiB more heap through the async frame,
    // the copies and the closures; `pnpm bench:instructions`, bytes allocated a request).
    let listed: Promise<readonly WebhookEndpoint[]>;
    try {
      listed = this.catalog.listByAccount(event.run.accountId);
    } catch (error) {
      return Promise.reject(this.notQueued(event, error));
    }
    return listed.then(
      (endpoints) => {
        try {
          for (let i = 0; i < endpoints.length; i++) if ((endpoints[i] as WebhookEndpoint).events.includes(event.type)) return this.queueEach(endpoints, event);
        } catch (error) {
          // A malformed endpoint list: logged like any failure to queue (the reject handler below does not see it).
          throw this.notQueued(event, error);
        }
        return undefined;
      },
      (error: unknown) => {
        throw this.notQueued(event, error);
      },
    );
  }

  /** Queues a delivery of `event` to each of `endpoints` that takes its type, in order. */
  private async queueEach(endpoints: readonly WebhookEndpoint[], event: Omit<RunEvent, 'id'>): Promise<void> {
    try {
      for (const endpoint of endpoints) if (endpoint.events.includes(event.type)) await this.queue.enqueue(deliveryOf(endpoint.endpointId, event, this.options.baseUrl));
    } catch (error) {
      throw this.notQueued(event, error);
    }
  }

  /** Logs that `event`'s deliveries were not (all) queued; returns `error` to be thrown on. */
  private notQueued(event: Omit<RunEvent, 'id'>, error: unknown): unknown {
    (this.options.logger ?? silentLogger).error({ run_id: event.run.runId, event_type: event.type, error_type: errorTypeOf(error) }, 'webhook deliveries not queued');
    return error;
  }
}
