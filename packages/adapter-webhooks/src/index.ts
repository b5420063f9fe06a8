/**
 * `@svc/adapter-webhooks`: signed webhooks (Standard Webhooks, `standardwebhooks`) of the
 * core's run events. {@link WebhookNotifier} turns events into deliveries, a queue
 * ({@link InMemoryWebhookQueue} or {@link BullMqWebhookQueue}) keeps them until their
 * attempts, {@link WebhookDeliverer} signs and sends each attempt through
 * {@link UndiciWebhookSender}, whose SSRF guard checks the address it connects to.
 * Source: docs/CONTRACT.md "Runs lifecycle" (webhooks); docs/decisions.md "Webhooks".
 */
export { WebhookAddressRefusedError, addressRange, isAllowedAddress, guardedLookup, checkLiteralHost } from './address-guard.js';
export { DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_MAX_DELIVERY_AGE_MS, ATTEMPT_TIMEOUT_MS, retryDelayMs } from './retry-schedule.js';
export { UndiciWebhookSender, type WebhookRequest, type WebhookAttemptOutcome, type WebhookSenderOptions } from './sender.js';
export { deliveryOf, deliveryIdOf, type WebhookDelivery } from './delivery.js';
export { WebhookDeliverer, type AttemptVerdict, type WebhookAttemptSender, type WebhookDelivererOptions } from './deliverer.js';
export type { WebhookQueue } from './queue.js';
export { InMemoryWebhookQueue } from './in-memory-webhook-queue.js';
export { BullMqWebhookQueue, WEBHOOK_QUEUE_NAME, type BullMqWebhookQueueSettings } from './bullmq-webhook-queue.js';
export { WebhookNotifier, type WebhookNotifierOptions } from './webhook-notifier.js';
