import { expect } from 'chai';
import { InMemoryWebhookEndpointCatalog } from '@svc/core';
import { aRun, eventually, RecordingLogger, RecordingTelemetry } from '@svc/core/testing';
import type { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { BullMqWebhookQueue, UndiciWebhookSender, WebhookDeliverer, WebhookNotifier } from '../src/index.js';
import { REDIS_URL, deleteKeys, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';
import { newWebhookSecret, startReceiver, type Receiver } from '../../../tools/test-support/webhook-receiver.js';

describe('adapter-webhooks BullMqWebhookQueue (Redis)', function () {
  this.timeout(20_000);
  let client: Redis;
  let prefix: string;
  let receiver: Receiver;
  const secret = newWebhookSecret();
  const opened: { queue: BullMqWebhookQueue; sender: UndiciWebhookSender }[] = [];

  beforeEach(async function () {
    client = await redisOrSkip(this);
    prefix = uniquePrefix('webhooks').replace(/:$/u, '');
  });
  afterEach(async function () {
    for (const { queue, sender } of opened.splice(0)) {
      await queue.close(true, 2000);
      await sender.close();
    }
    await receiver?.close();
    if (client !== undefined) {
      await deleteKeys(client, prefix);
      client.disconnect();
    }
  });

  /** One "process": a queue on the test Redis, and its worker when `deliver`. */
  function open(catalog: InMemoryWebhookEndpointCatalog, deliver: boolean, telemetry = new RecordingTelemetry()) {
    const logger = new RecordingLogger();
    const sender = new UndiciWebhookSender({ allowPrivateAddresses: true });
    const queue = BullMqWebhookQueue.open({ redis: REDIS_URL, prefix, retryScheduleMs: [1500] }, { logger });
    opened.push({ queue, sender });
    if (deliver) queue.startWorker(new WebhookDeliverer(catalog, sender, { retryScheduleMs: [1500], logger, telemetry }), { concurrency: 2 });
    return { queue, notifier: new WebhookNotifier(catalog, queue, { baseUrl: 'https://api.example.test', logger }), telemetry };
  }

  it('a delivery scheduled for its retry in Redis is delivered by a new process after the first stopped (same webhook-id, new signature)', async function () {
    receiver = await startReceiver([500]);
    const catalog = new InMemoryWebhookEndpointCatalog([{ endpointId: 'wh_1', accountId: 'acct_a', url: receiver.url, secret, events: ['run.succeeded'] }]);
    const first = open(catalog, true);
    const run = aRun({ accountId: 'acct_a', status: 'succeeded', updatedAt: new Date() });
    await first.notifier.runFinished(run);
    // Told twice (a retried notification): the same delivery, queued once.
    await first.notifier.runFinished(run);
    await eventually(() => receiver.received.length === 1, 'the first attempt', 5000);
    await eventually(async () => (await first.queue.pending()) === 1 && first.telemetry.webhookAttempts.get('http_error') === 1, 'the retry waiting in Redis', 5000);
    await first.queue.close();
    // A new process (new clients, new worker) on the same Redis takes the delayed job.
    const second = open(catalog, true);
    await eventually(() => receiver.received.length === 2, 'the retry by the new worker', 8000);
    await eventually(() => second.telemetry.webhookDeliveries.get('delivered') === 1, 'delivered', 3000);
    const [a, b] = receiver.received as [Receiver['received'][number], Receiver['received'][number]];
    expect(b.headers['webhook-id']).to.equal(a.headers['webhook-id']);
    expect(b.headers['webhook-signature']).to.not.equal(a.headers['webhook-signature']);
    expect(b.at - a.at).to.be.at.least(1400);
    expect(new Webhook(secret).verify(b.body, b.headers as Record<string, string>)).to.deep.include({ type: 'run.succeeded' });
    expect(receiver.received).to.have.length(2);
  });

  it('enqueue against an unreachable Redis rejects with DependencyUnavailableError within its bound', async function () {
    const queue = BullMqWebhookQueue.open({ redis: 'redis://127.0.0.1:1', prefix, operationTimeoutMs: 300 });
    const sender = new UndiciWebhookSender();
    opened.push({ queue, sender });
    const started = Date.now();
    const error = await queue.enqueue({ deliveryId: 'msg_x', endpointId: 'e', accountId: 'a', runId: 'r', type: 'run.failed', eventAt: new Date().toISOString(), body: '{}' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error | undefined)?.name).to.equal('DependencyUnavailableError');
    expect(Date.now() - started).to.be.below(1500);
  });
});
