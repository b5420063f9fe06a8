import { expect } from 'chai';
import { InMemoryWebhookEndpointCatalog, type Run, type RunEventType } from '@svc/core';
import { aRun, eventually, RecordingLogger, RecordingTelemetry } from '@svc/core/testing';
import { Webhook } from 'standardwebhooks';
import { InMemoryWebhookQueue, UndiciWebhookSender, WebhookDeliverer, WebhookNotifier } from '../src/index.js';
import { newWebhookSecret, startReceiver, type Receiver } from '../../../tools/test-support/webhook-receiver.js';

const BASE_URL = 'https://api.example.test';

interface World {
  readonly receiver: Receiver;
  readonly secret: string;
  readonly logger: RecordingLogger;
  readonly telemetry: RecordingTelemetry;
  readonly catalog: InMemoryWebhookEndpointCatalog;
  readonly notifier: WebhookNotifier;
  close(): Promise<void>;
}

async function world(options: { statuses?: number[]; allowPrivate?: boolean; url?: (r: Receiver) => string; events?: RunEventType[]; schedule?: number[] } = {}): Promise<World> {
  const receiver = await startReceiver(options.statuses ?? []);
  const secret = newWebhookSecret();
  const logger = new RecordingLogger();
  const telemetry = new RecordingTelemetry();
  const catalog = new InMemoryWebhookEndpointCatalog([
    { endpointId: 'wh_a', accountId: 'acct_a', url: options.url?.(receiver) ?? receiver.url, secret, events: options.events ?? ['run.succeeded', 'run.failed', 'run.cancelled'] },
    // Another account's endpoint: never gets account A's events.
    { endpointId: 'wh_b', accountId: 'acct_b', url: receiver.url, secret: newWebhookSecret(), events: ['run.succeeded'] },
  ]);
  const sender = new UndiciWebhookSender({ allowPrivateAddresses: options.allowPrivate ?? true });
  const deliverer = new WebhookDeliverer(catalog, sender, { retryScheduleMs: options.schedule ?? [200], logger, telemetry });
  const queue = new InMemoryWebhookQueue(deliverer, logger);
  const notifier = new WebhookNotifier(catalog, queue, { baseUrl: BASE_URL, logger });
  return {
    receiver,
    secret,
    logger,
    telemetry,
    catalog,
    notifier,
    close: async () => {
      await queue.close(1000);
      await sender.close();
      await receiver.close();
    },
  };
}

/** The run's final change: a moment ago (the retry window counts from it). */
const FINISHED_AT = new Date(Date.now() - 2000);
const finished = (status: Run['status'] = 'succeeded'): Run =>
  aRun({ runId: 'run_1', accountId: 'acct_a', status, updatedAt: FINISHED_AT, createdAt: new Date(FINISHED_AT.getTime() - 2000) });

describe('adapter-webhooks delivery (in memory, real HTTP on loopback)', function () {
  let w: World | undefined;
  afterEach(async function () {
    await w?.close();
    w = undefined;
  });

  it('one final event gives one delivery, verified with standardwebhooks; body {type, timestamp, data: run view}', async function () {
    w = await world();
    await w.notifier.runFinished(finished());
    await eventually(() => w!.telemetry.webhookDeliveries.get('delivered') === 1, 'the delivery', 5000);
    expect(w.receiver.received).to.have.length(1);
    const got = w.receiver.received[0]!;
    const verified = new Webhook(w.secret).verify(got.body, got.headers as Record<string, string>) as Record<string, unknown>;
    expect(verified).to.deep.equal(JSON.parse(got.body));
    expect(verified['type']).to.equal('run.succeeded');
    expect(verified['timestamp']).to.equal(FINISHED_AT.toISOString());
    const data = verified['data'] as Record<string, unknown>;
    expect(data['run_id']).to.equal('run_1');
    expect(data['status']).to.equal('succeeded');
    expect(data['status_url']).to.equal(`${BASE_URL}/api/v1/runs/run_1`);
    expect(data).to.not.have.property('account_id');
    expect(got.headers['webhook-id']).to.match(/^msg_[0-9a-f]{32}$/);
    expect(Number(got.headers['webhook-timestamp'])).to.be.within(Math.floor(Date.now() / 1000) - 5, Math.floor(Date.now() / 1000));
    expect(got.headers['content-type']).to.equal('application/json');
    expect(w.telemetry.webhookAttempts.get('success')).to.equal(1);
    const line = w.logger.lines.find((l) => l.message === 'webhook attempt');
    expect(line?.fields).to.include({ run_id: 'run_1', endpoint_id: 'wh_a', attempt: 1, status_code: 200, result: 'success' });
    expect(line?.fields).to.have.property('duration_ms').that.is.a('number');
    // Never the secret, nor the URL (its query holds a credential).
    expect(w.logger.text()).to.not.include(w.secret);
    expect(w.logger.text()).to.not.include('query-secret-value');
    expect(w.logger.text()).to.not.include('127.0.0.1');
  });

  it('a 500 is retried after the schedule with the same webhook-id and a new timestamp and signature', async function () {
    w = await world({ statuses: [500], schedule: [1100] });
    await w.notifier.runFinished(finished('failed'));
    await eventually(() => w!.receiver.received.length === 2, 'the second attempt', 8000);
    const [first, second] = w.receiver.received as [Received, Received];
    expect(second.headers['webhook-id']).to.equal(first.headers['webhook-id']);
    expect(second.headers['webhook-timestamp']).to.not.equal(first.headers['webhook-timestamp']);
    expect(second.headers['webhook-signature']).to.not.equal(first.headers['webhook-signature']);
    expect(second.body).to.equal(first.body);
    expect(second.at - first.at).to.be.at.least(1000);
    for (const got of [first, second]) expect(() => new Webhook(w!.secret).verify(got.body, got.headers as Record<string, string>)).to.not.throw();
    await eventually(() => w!.telemetry.webhookDeliveries.get('delivered') === 1, 'delivered', 2000);
    expect(w.telemetry.webhookAttempts.get('http_error')).to.equal(1);
    expect(w.logger.lines.find((l) => l.fields['status_code'] === 500)?.fields).to.include({ attempt: 1, retry_in_ms: 1100 });
  });

  it('gives up past the retry window: marked failed, logged, counted', async function () {
    w = await world({ statuses: [500, 500, 500] });
    // The event is older than 72 h less the next delay: the first failure is the last attempt.
    const old = aRun({ runId: 'run_old', accountId: 'acct_a', status: 'succeeded', updatedAt: new Date(Date.now() - 72 * 3_600_000 + 100) });
    await w.notifier.runFinished(old);
    await eventually(() => w!.telemetry.webhookDeliveries.get('failed') === 1, 'the failed delivery', 5000);
    expect(w.receiver.received).to.have.length(1);
    expect(w.logger.at('warn').map((l) => l.message)).to.include('webhook delivery failed');
  });

  it('events the endpoint does not take, and other accounts, get nothing', async function () {
    w = await world({ events: ['run.failed'] });
    await w.notifier.runFinished(finished('succeeded'));
    await w.notifier.publish({ type: 'run.running', at: new Date(), run: aRun({ accountId: 'acct_a', status: 'running', updatedAt: new Date() }) });
    await w.notifier.runFinished(aRun({ accountId: 'acct_c', status: 'failed', updatedAt: new Date() }));
    await w.notifier.runFinished(finished('failed'));
    await eventually(() => w!.telemetry.webhookDeliveries.get('delivered') === 1, 'the one delivery', 5000);
    expect(w.receiver.received).to.have.length(1);
    expect(JSON.parse(w.receiver.received[0]!.body).type).to.equal('run.failed');
  });

  it('without allow_private_addresses a loopback target is refused, not attempted: failed, logged, counted', async function () {
    w = await world({ allowPrivate: false });
    await w.notifier.runFinished(finished());
    await eventually(() => w!.telemetry.webhookDeliveries.get('failed') === 1, 'the refused delivery', 5000);
    expect(w.receiver.received).to.have.length(0);
    expect(w.telemetry.webhookAttempts.get('refused')).to.equal(1);
    const line = w.logger.lines.find((l) => l.message.startsWith('webhook attempt refused'));
    expect(line?.fields).to.include({ run_id: 'run_1', endpoint_id: 'wh_a', result: 'refused' });
  });

  it('without allow_private_addresses a hostname that resolves to 127.0.0.1 (localhost) is refused too', async function () {
    w = await world({ allowPrivate: false, url: (r) => `http://localhost:${r.port}/hook` });
    await w.notifier.runFinished(finished());
    await eventually(() => w!.telemetry.webhookDeliveries.get('failed') === 1, 'the refused delivery', 5000);
    expect(w.receiver.received).to.have.length(0);
    expect(w.telemetry.webhookAttempts.get('refused')).to.equal(1);
    expect(w.logger.text()).to.not.include('localhost');
  });

  it('an endpoint removed before its retry drops the delivery', async function () {
    w = await world({ statuses: [503], schedule: [300] });
    await w.notifier.runFinished(finished());
    await eventually(() => w!.receiver.received.length === 1, 'the first attempt', 5000);
    w.catalog.remove('wh_a');
    await eventually(() => w!.telemetry.webhookDeliveries.get('dropped') === 1, 'the dropped delivery', 5000);
    expect(w.receiver.received).to.have.length(1);
  });
});

type Received = Receiver['received'][number];
