import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { eventually } from '@svc/core/testing';
import { AGENT_B, AGENTS, addresses, e2eConfig, SECRETS } from './support/fixture.js';
import { apiKey, call, expectData } from '../../../tools/test-support/http.js';
import { leakScan } from '../../../tools/test-support/leak-scan.js';
import { REDIS_URL, deleteKeys, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';
import { newWebhookSecret, startReceiver, type Receiver } from '../../../tools/test-support/webhook-receiver.js';
import { logLines, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

/** The receiver URL's query holds this: it must appear in no log line (the leak scan checks every line). */
leakScan.register('query-secret-value', 'webhook URL query (fixture)');

interface RunStart {
  readonly run_id: string;
  readonly status_url: string;
}

/**
 * Starts the API server (its worker on) with a webhook endpoint of account A at `receiver`
 * and one of account B at `other`, loopback allowed, retries after 1 s, runs of 50 ms.
 */
async function serverWith(dir: string, receiver: Receiver, other: Receiver, secret: string, extra: Record<string, unknown> = {}): Promise<ServerProcess> {
  const at = await addresses();
  // 50 ms runs (the demo's default is 500 ms): the deliveries are what these tests wait for.
  const config = e2eConfig(at, { worker: { enabled: true, demo_delay_ms: 50 }, webhooks: { allow_private_addresses: true, retry_schedule_ms: [1000] }, ...extra });
  const [a, b] = config['accounts'] as Record<string, unknown>[];
  a!['webhook_endpoints'] = [{ id: 'wh_e2e_a', url: receiver.url, secret }];
  b!['webhook_endpoints'] = [{ id: 'wh_e2e_b', url: other.url, secret: newWebhookSecret(), events: ['run.queued', 'run.running', 'run.succeeded'] }];
  return startServerProcess(await writeConfig(dir, config), at.url, at.egressUrl);
}

async function startRun(server: ServerProcess, message: string): Promise<RunStart> {
  return expectData<RunStart>(await call(server.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: apiKey(SECRETS.keyA), json: { message } }), 202);
}

/** The body of delivery `i`, verified with standardwebhooks (throws when the signature does not verify). */
function verified(receiver: Receiver, secret: string, i: number): { type: string; timestamp: string; data: Record<string, unknown> } {
  const got = receiver.received[i]!;
  return new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> };
}

describe('examples/api-server webhooks (child process, receiver on loopback)', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let receiver: Receiver;
  let other: Receiver;
  let server: ServerProcess | undefined;
  const secret = newWebhookSecret();

  beforeEach(async function () {
    dir = await tempDir();
    receiver = await startReceiver([500]);
    other = await startReceiver();
  });
  afterEach(async function () {
    await server?.kill();
    server = undefined;
    await Promise.all([receiver.close(), other.close(), dir.remove()]);
  });

  it('in memory: one verified delivery per final event, the data of GET run; a 500 is retried with the same webhook-id and a new signature; nothing to another account', async function () {
    server = await serverWith(dir.path, receiver, other, secret);
    const started = await startRun(server, 'hello webhooks');
    await eventually(() => receiver.received.length >= 2, 'the retried delivery', 10_000);
    const [first, second] = [verified(receiver, secret, 0), verified(receiver, secret, 1)];
    expect(first).to.deep.equal(second);
    expect(first.type).to.equal('run.succeeded');
    const run = expectData<Record<string, unknown>>(await call(server.url, 'GET', `/api/v1/runs/${started.run_id}`, { headers: apiKey(SECRETS.keyA) }), 200);
    expect(first.data).to.deep.equal(run);
    expect(first.timestamp).to.equal(run['updated_at']);
    const [h1, h2] = [receiver.received[0]!.headers, receiver.received[1]!.headers];
    expect(h2['webhook-id']).to.equal(h1['webhook-id']);
    expect(h2['webhook-timestamp']).to.not.equal(h1['webhook-timestamp']);
    expect(h2['webhook-signature']).to.not.equal(h1['webhook-signature']);
    // A failed run: its own delivery, first time.
    const failing = await startRun(server, 'please [fail]');
    await eventually(() => receiver.received.length === 3, 'the run.failed delivery', 10_000);
    const third = verified(receiver, secret, 2);
    expect(third.type).to.equal('run.failed');
    expect(third.data['run_id']).to.equal(failing.run_id);
    // Account B's run: its endpoint, subscribed to the non-final events too, gets all three of its run; account A's gets none of them.
    const runB = expectData<RunStart>(await call(server.url, 'POST', `/api/v1/agents/${AGENT_B}/run`, { headers: apiKey(SECRETS.keyB), json: { message: 'b' } }), 202);
    await eventually(() => other.received.length === 3, "account B's three deliveries", 10_000);
    const ofB = other.received.map((r) => JSON.parse(r.body) as { type: string; data: { run_id: string; status: string } });
    expect(ofB.map((e) => e.type).sort()).to.deep.equal(['run.queued', 'run.running', 'run.succeeded']);
    expect(ofB.every((e) => e.data.run_id === runB.run_id && `run.${e.data.status}` === e.type)).to.equal(true, 'each event carries the run as of that event');
    expect(receiver.received).to.have.length(3);
    const attempts = logLines(server).filter((l) => l['msg'] === 'webhook attempt');
    expect(attempts.map((l) => [l['endpoint_id'], l['attempt'], l['status_code']])).to.deep.include.members([
      ['wh_e2e_a', 1, 500],
      ['wh_e2e_a', 2, 200],
    ]);
    expect(attempts.every((l) => typeof l['duration_ms'] === 'number' && l['run_id'] !== undefined)).to.equal(true);
  });

  it('without allow_private_addresses a loopback endpoint is refused: never attempted, the delivery logged as failed', async function () {
    server = await serverWith(dir.path, receiver, other, secret, { webhooks: { retry_schedule_ms: [1000] } });
    const started = await startRun(server, 'refused');
    await eventually(() => logLines(server!).some((l) => l['msg'] === 'webhook delivery failed' && l['run_id'] === started.run_id), 'the failed delivery line', 10_000);
    expect(receiver.received).to.have.length(0);
    const refused = logLines(server).find((l) => String(l['msg']).startsWith('webhook attempt refused'));
    expect(refused).to.include({ run_id: started.run_id, endpoint_id: 'wh_e2e_a', result: 'refused' });
  });

  it('with Redis (BullMQ queue): the same delivery, retried after a 500 with the same webhook-id', async function () {
    const client = await redisOrSkip(this);
    const prefix = uniquePrefix('webhooks-e2e').replace(/:$/u, '');
    try {
      server = await serverWith(dir.path, receiver, other, secret, { redis_url: REDIS_URL, redis_prefix: prefix });
      await startRun(server, 'durable webhooks');
      await eventually(() => receiver.received.length >= 2, 'the retried delivery', 15_000);
      expect(verified(receiver, secret, 1)).to.deep.equal(verified(receiver, secret, 0));
      expect(receiver.received[1]!.headers['webhook-id']).to.equal(receiver.received[0]!.headers['webhook-id']);
      expect(await client.exists(`${prefix}:webhooks:meta`)).to.equal(1);
    } finally {
      await server?.kill();
      server = undefined;
      await deleteKeys(client, prefix);
      client.disconnect();
    }
  });
});
