/**
 * `@svc/adapter-webhooks`: signed webhooks (Standard Webhooks, `standardwebhooks`) of the
 * core's run events. {@link WebhookNotifier} turns events into deliveries, a queue
 * ({@link InMemoryWebhookQueue} or {@link BullMqWebhookQueue}) keeps them until their
 * attempts, {@link WebhookDeliverer} signs and sends each attempt through
 * {@link UndiciWebhookSender}, whose SSRF guard checks the address it connects to.
 * `@svc/adapter-webhooks/memory` exports the same without BullMQ.
 * Source: docs/CONTRACT.md "Runs lifecycle" (webhooks); docs/decisions.md "Webhooks".
 */
export * from './memory.js';
export { BullMqWebhookQueue, WEBHOOK_QUEUE_NAME, type BullMqWebhookQueueSettings } from './bullmq-webhook-queue.js';
