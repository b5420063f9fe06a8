import { errorTypeOf, noopTelemetry, silentLogger, type Logger, type Telemetry, type WebhookEndpointCatalog } from '@svc/core';
import { Webhook } from 'standardwebhooks';
import type { WebhookDelivery } from './delivery.js';
import { DEFAULT_MAX_DELIVERY_AGE_MS, DEFAULT_RETRY_SCHEDULE_MS, retryDelayMs } from './retry-schedule.js';
import type { WebhookAttemptOutcome, WebhookRequest } from './sender.js';

/** What a queue does after an attempt. */
export type AttemptVerdict =
  | { readonly kind: 'delivered' }
  /** Attempt again after `delayMs` milliseconds, with the same delivery. */
  | { readonly kind: 'retry'; readonly delayMs: number }
  /** Given up: marked failed, logged and counted. */
  | { readonly kind: 'failed' }
  /** The endpoint is gone or no longer takes this event: nothing more to do. */
  | { readonly kind: 'dropped' };

/** Sends one attempt; {@link UndiciWebhookSender} in production, never rejects. */
export interface WebhookAttemptSender {
  send(request: WebhookRequest): Promise<WebhookAttemptOutcome>;
}

/** Options of {@link WebhookDeliverer}. */
export interface WebhookDelivererOptions {
  /** Config `webhooks.retry_schedule_ms`: delays in ms before attempts 2, 3, …; the last repeats. Default {@link DEFAULT_RETRY_SCHEDULE_MS}. */
  readonly retryScheduleMs?: readonly number[];
  /** Ms after the event after which no attempt is made; default {@link DEFAULT_MAX_DELIVERY_AGE_MS} (72 h). */
  readonly maxAgeMs?: number;
  /** One line per attempt and per ended delivery; default silent. */
  readonly logger?: Logger;
  /** Counts attempts and ended deliveries; default none. */
  readonly telemetry?: Telemetry;
  /** Current time in ms since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Makes one attempt of a delivery and says what follows (docs/CONTRACT.md "Runs lifecycle",
 * webhooks; docs/decisions.md "Webhooks"): reads the endpoint from the catalog (a removed
 * endpoint, or one that no longer takes the event type, drops the delivery), signs the
 * delivery's body with the endpoint's secret (`standardwebhooks`: `webhook-id` the
 * delivery's, `webhook-timestamp` this attempt's Unix seconds, `webhook-signature`
 * `v1,<base64 HMAC-SHA256>`), sends it, logs the attempt and counts it.
 * A 2xx is delivered; a refused address (SSRF rule) fails at once; anything else is
 * retried after the schedule's next delay unless that attempt would fall past `maxAgeMs`
 * after the event, then the delivery fails. A catalog that cannot be read defers the
 * attempt by the schedule's next delay (not counted as an attempt).
 *
 * Log lines carry `webhook_id`, `run_id`, `endpoint_id`, `event_type`, `attempt`,
 * `status_code` or `error_type`, `duration_ms`; never the URL (its userinfo or query may
 * hold a credential) nor the secret.
 */
export class WebhookDeliverer {
  private readonly schedule: readonly number[];
  private readonly maxAgeMs: number;
  private readonly logger: Logger;
  private readonly telemetry: Telemetry;
  private readonly now: () => number;

  /**
   * @param catalog - where endpoints are read at each attempt.
   * @param sender - sends an attempt.
   * @param options - see {@link WebhookDelivererOptions}.
   */
  constructor(
    private readonly catalog: WebhookEndpointCatalog,
    private readonly sender: WebhookAttemptSender,
    options: WebhookDelivererOptions = {},
  ) {
    this.schedule = options.retryScheduleMs !== undefined && options.retryScheduleMs.length > 0 ? options.retryScheduleMs : DEFAULT_RETRY_SCHEDULE_MS;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_DELIVERY_AGE_MS;
    this.logger = options.logger ?? silentLogger;
    this.telemetry = options.telemetry ?? noopTelemetry;
    this.now = options.now ?? Date.now;
  }

  /**
   * The delay in ms before attempt `attemptsMade + 1`, or `undefined` when that attempt
   * would fall past the retry window.
   */
  nextDelayMs(delivery: WebhookDelivery, attemptsMade: number): number | undefined {
    const delayMs = retryDelayMs(this.schedule, attemptsMade);
    return this.now() + delayMs > Date.parse(delivery.eventAt) + this.maxAgeMs ? undefined : delayMs;
  }

  /**
   * Makes attempt number `attempt` (1 for the first) of `delivery`. Never rejects.
   * @returns what the queue does next.
   */
  async attempt(delivery: WebhookDelivery, attempt: number): Promise<AttemptVerdict> {
    const fields = { webhook_id: delivery.deliveryId, run_id: delivery.runId, endpoint_id: delivery.endpointId, event_type: delivery.type, attempt };
    if (this.now() > Date.parse(delivery.eventAt) + this.maxAgeMs) return this.end(fields, 'failed');
    let endpoint;
    try {
      endpoint = await this.catalog.findById(delivery.endpointId);
    } catch (error) {
      const delayMs = this.nextDelayMs(delivery, attempt) ?? 0;
      this.logger.warn({ ...fields, error_type: errorTypeOf(error), retry_in_ms: delayMs }, 'webhook attempt deferred: endpoint catalog unavailable');
      return delayMs > 0 ? { kind: 'retry', delayMs } : this.end(fields, 'failed');
    }
    if (endpoint === undefined || endpoint.accountId !== delivery.accountId || !endpoint.events.includes(delivery.type)) return this.end(fields, 'dropped');
    let request: WebhookRequest;
    const at = new Date(Math.floor(this.now() / 1000) * 1000);
    try {
      const signature = new Webhook(endpoint.secret).sign(delivery.deliveryId, at, delivery.body);
      request = {
        url: endpoint.url,
        body: delivery.body,
        headers: { 'webhook-id': delivery.deliveryId, 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': signature },
      };
    } catch (error) {
      // A secret the catalog should have refused: nothing to retry.
      this.logger.error({ ...fields, error_type: errorTypeOf(error) }, 'webhook attempt not made: the endpoint secret is not usable');
      return this.end(fields, 'failed');
    }
    const outcome = await this.sender.send(request);
    this.telemetry.webhookAttempt(outcome.result, outcome.result === 'refused' ? 0 : outcome.durationSeconds);
    const attemptFields = {
      ...fields,
      result: outcome.result,
      ...(outcome.statusCode !== undefined ? { status_code: outcome.statusCode } : {}),
      ...(outcome.errorType !== undefined ? { error_type: outcome.errorType } : {}),
      duration_ms: Math.round(outcome.durationSeconds * 1000),
    };
    if (outcome.result === 'success') {
      this.logger.info(attemptFields, 'webhook attempt');
      return this.end(fields, 'delivered');
    }
    if (outcome.result === 'refused') {
      this.logger.warn(attemptFields, 'webhook attempt refused: the target address is not allowed (webhooks.allow_private_addresses)');
      return this.end(fields, 'failed');
    }
    const delayMs = this.nextDelayMs(delivery, attempt);
    this.logger.warn({ ...attemptFields, retry_in_ms: delayMs ?? null }, 'webhook attempt');
    return delayMs === undefined ? this.end(fields, 'failed') : { kind: 'retry', delayMs };
  }

  private end(fields: Record<string, unknown>, kind: 'delivered' | 'failed' | 'dropped'): AttemptVerdict {
    this.telemetry.webhookDelivery(kind);
    if (kind === 'failed') this.logger.warn(fields, 'webhook delivery failed');
    else if (kind === 'dropped') this.logger.info(fields, 'webhook delivery dropped: endpoint removed or no longer subscribed');
    else this.logger.info(fields, 'webhook delivered');
    return { kind };
  }
}
