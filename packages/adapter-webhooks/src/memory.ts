/**
 * `@svc/adapter-webhooks/memory`: everything of the package but {@link BullMqWebhookQueue}
 * (the in-memory queue, the notifier, the deliverer, the undici sender), without loading
 * BullMQ or ioredis: an API server without Redis starts smaller (bench/BENCHMARKS.md
 * "RSS idle"). The same symbols are exported from the package's main entry.
 * Source: docs/decisions.md "Webhooks".
 */
export { WebhookAddressRefusedError, addressRange, isAllowedAddress, guardedLookup, checkLiteralHost } from './address-guard.js';
export { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_MAX_DELIVERY_AGE_MS, ATTEMPT_TIMEOUT_MS, retryDelayMs } from './retry-schedule.js';
export { UndiciWebhookSender, type WebhookRequest, type WebhookAttemptOutcome, type WebhookSenderOptions } from './sender.js';
export { deliveryOf, deliveryIdOf, type WebhookDelivery } from './delivery.js';
export { WebhookDeliverer, type AttemptVerdict, type WebhookAttemptSender, type WebhookDelivererOptions } from './deliverer.js';
export type { WebhookQueue } from './queue.js';
export { InMemoryWebhookQueue } from './in-memory-webhook-queue.js';
export { WebhookNotifier, type WebhookNotifierOptions } from './webhook-notifier.js';
