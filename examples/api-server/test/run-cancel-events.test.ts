import { sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { deleteKeys, REDIS_URL, redisOrSkip } from '../../../tools/test-support/redis.js';
import { startRedisServer } from '../../../tools/test-support/redis-server.js';
import { openStream, type SseEvent } from '../../../tools/test-support/sse.js';
import { exitWithin, logLines, startInstance, tempDir, type Child } from './support/server-process.js';

// Cancel and the events stream across processes sharing Redis, as users run them: an API
// process without a worker, and the runs processed by a worker in another process (the
// standalone `pnpm worker`, or another API instance's own worker). docs/CONTRACT.md "Runs lifecycle".
const API_KEY = 'svc-cancel-events-test-key-0123456789';
const AGENT = 'agent_demo';
const headers = { 'X-API-Key': API_KEY };

interface RunData {
  readonly run_id: string;
  readonly status: string;
  readonly attempts: number;
  readonly cancel_requested_at?: string;
}

describe('cancel and events of runs across processes (Redis)', function () {
  this.timeout(60_000);
  const prefix = `svc-test-cancel-${process.pid}-${Date.now()}`;
  const children: Child[] = [];
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let redis: Redis;

  before(async function () {
    redis = await redisOrSkip(this);
    dir = await tempDir();
  });

  after(async function () {
    await Promise.all(children.map((child) => child.kill(1000)));
    await dir?.remove();
    if (redis !== undefined) {
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
  });

  async function start(script: 'main' | 'worker', keyPrefix: string, worker: Record<string, unknown>, redisUrl = REDIS_URL): Promise<Child & { base: string }> {
    const child = await startInstance(dir.path, script, {
      redis_url: redisUrl,
      redis_prefix: keyPrefix,
      worker,
      log_level: 'info',
      shutdown_grace_ms: 1000,
      accounts: [{ id: 'acct_ce', api_keys: [{ id: 'key_ce', sha256: sha256Hex(API_KEY) }], agents: [{ id: AGENT }] }],
    });
    children.push(child);
    return child;
  }

  async function startRun(base: string, message: string): Promise<string> {
    const res = await fetch(`${base}/api/v1/agents/${AGENT}/run`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ message }) });
    expect(res.status).to.equal(202);
    return ((await res.json()) as { data: { run_id: string } }).data.run_id;
  }

  async function getRun(base: string, runId: string): Promise<RunData> {
    const res = await fetch(`${base}/api/v1/runs/${runId}`, { headers });
    return ((await res.json()) as { data: RunData }).data;
  }

  async function cancel(base: string, runId: string): Promise<{ status: number; body: { data?: RunData; code?: string } }> {
    const res = await fetch(`${base}/api/v1/runs/${runId}/cancel`, { method: 'POST', headers });
    return { status: res.status, body: (await res.json()) as { data?: RunData; code?: string } };
  }

  it('an API process cancels runs a standalone worker process holds: queued → never processed; running → cancelled within 1 s', async function () {
    const keyPrefix = `${prefix}-w`;
    // The API process and, at the same time, the worker: one run at a time, each 5 s, so the
    // second run waits queued behind the first.
    const [api, worker] = await Promise.all([start('main', keyPrefix, { enabled: false }), start('worker', keyPrefix, { concurrency: 1, demo_delay_ms: 5000 })]);
    const running = await startRun(api.base, 'cancel me while running');
    await eventually(async () => (await getRun(api.base, running)).status === 'running', 'the first run running', 10_000, 20);
    const queued = await startRun(api.base, 'cancel me while queued');

    const queuedCancel = await cancel(api.base, queued);
    expect(queuedCancel.status).to.equal(200);
    expect(queuedCancel.body.data).to.include({ status: 'cancelled', attempts: 0 });

    const asked = Date.now();
    const runningCancel = await cancel(api.base, running);
    expect(runningCancel.status).to.equal(200);
    expect(runningCancel.body.data?.status).to.equal('running');
    expect(runningCancel.body.data?.cancel_requested_at).to.be.a('string');
    expect((await cancel(api.base, running)).status, 'asked again while it stops').to.be.oneOf([200, 409]);
    await eventually(async () => (await getRun(api.base, running)).status === 'cancelled', 'the running run cancelled', 1000, 10);
    const ms = Date.now() - asked;
    console.log(`      figures: a running run held by another process was cancelled ${ms} ms after the request`);
    expect(ms).to.be.below(1000);

    const final = await cancel(api.base, running);
    expect(final.status).to.equal(409);
    expect(final.body.code).to.equal('run_final');
    // The worker took the cancelled queued run's job after the first run and skipped it.
    await eventually(() => logLines(worker).some((l) => l['run_id'] === queued && l['msg'] === 'run not started: missing or already final'), 'the queued run skipped by the worker', 10_000, 20);
    const after = await getRun(api.base, queued);
    expect(after).to.include({ status: 'cancelled', attempts: 0 });
    const finished = logLines(worker).filter((l) => l['msg'] === 'run finished' && l['run_id'] === running);
    expect(finished.map((l) => l['status'])).to.deep.equal(['cancelled']);
    await Promise.all([api.kill(2000), worker.kill(3000)]);
  });

  it("an SSE client on instance A sees every event of a run that instance B's worker processes, and resumes with Last-Event-ID after a forced disconnect", async function () {
    const keyPrefix = `${prefix}-i`;
    const [a, b] = await Promise.all([start('main', keyPrefix, { enabled: false }), start('main', keyPrefix, { enabled: true, concurrency: 1, demo_delay_ms: 1500 })]);
    const runId = await startRun(b.base, 'follow me');
    const first = await openStream(a.base, `/api/v1/runs/${runId}/events`, headers);
    expect(first.status).to.equal(200);
    const ids = (events: SseEvent[]): SseEvent[] => events.filter((e) => e.id !== undefined);
    await eventually(() => ids(first.events).some((e) => e.event === 'run.running'), 'run.running seen on A', 10_000, 10);
    // A forced disconnect mid-run, then a resume from the last id received.
    first.abort();
    await first.finished;
    const seen = ids(first.events);
    const last = seen[seen.length - 1]?.id as string;
    const resumed = await openStream(a.base, `/api/v1/runs/${runId}/events`, { ...headers, 'Last-Event-ID': last });
    await resumed.finished;
    expect(resumed.ended(), 'closed after the final event').to.equal(true);
    const all = [...seen, ...ids(resumed.events)];
    expect(all.map((e) => e.event)).to.deep.equal(['run.queued', 'run.running', 'run.succeeded']);
    const ordered = all.map((e) => e.id as string);
    expect(new Set(ordered).size).to.equal(3);
    // The whole history, read afresh, is the same events with the same ids and data.
    const again = await fetch(`${a.base}/api/v1/runs/${runId}/events`, { headers });
    const text = await again.text();
    expect(text.match(/^id: .*$/gmu)?.map((line) => line.slice(4))).to.deep.equal(ordered);
    expect((all[2]?.data as RunData).status).to.equal('succeeded');
    expect((all[2]?.data as RunData)).to.deep.equal(await getRun(a.base, runId));
    await Promise.all([a.kill(2000), b.kill(3000)]);
  });

  it('SIGTERM ends open event streams when the drain begins (the client resumes elsewhere): the stop does not wait for them, exit 0', async function () {
    const keyPrefix = `${prefix}-s`;
    // No worker: the run stays queued in Redis (durable), so the stop abandons nothing.
    const api = await start('main', keyPrefix, { enabled: false });
    const runId = await startRun(api.base, 'stay queued');
    const streams = await Promise.all([1, 2, 3].map(() => openStream(api.base, `/api/v1/runs/${runId}/events`, headers)));
    await eventually(() => streams.every((s) => s.events.some((e) => e.event === 'run.queued')), 'the history on every stream', 5000, 10);
    const signalledAt = Date.now();
    api.process.kill('SIGTERM');
    await Promise.all(streams.map((s) => s.finished));
    const endedMs = Date.now() - signalledAt;
    const exit = await exitWithin(api, 5000, signalledAt);
    console.log(`      figures: 3 open streams ended ${endedMs} ms after SIGTERM (grace 1000 ms); exit ${exit.code} after ${exit.ms} ms`);
    expect(streams.every((s) => s.ended()), 'each stream ended cleanly by the server').to.equal(true);
    expect(endedMs).to.be.below(1000);
    expect(exit, api.stdout()).to.deep.include({ code: 0, signal: null });
  });

  it('Redis lost while streaming: open streams end (the client resumes later); lost at open: 503 with Retry-After', async function () {
    const server = await startRedisServer();
    try {
      const api = await start('main', `${prefix}-f`, { enabled: false }, server.url);
      const runId = await startRun(api.base, 'lose redis');
      const streams = await Promise.all([1, 2].map(() => openStream(api.base, `/api/v1/runs/${runId}/events`, headers)));
      await eventually(() => streams.every((s) => s.events.some((e) => e.event === 'run.queued')), 'the history on every stream', 5000, 10);
      const killedAt = Date.now();
      await server.kill();
      await Promise.all(streams.map((s) => s.finished));
      const endedMs = Date.now() - killedAt;
      expect(streams.every((s) => s.ended()), 'ended by the server').to.equal(true);
      const atOpen = await fetch(`${api.base}/api/v1/runs/${runId}/events`, { headers });
      const body = (await atOpen.json()) as { code: string };
      console.log(`      figures: 2 streams ended ${endedMs} ms after Redis was killed; a new one answered ${atOpen.status}`);
      expect(endedMs).to.be.below(3000);
      expect(atOpen.status).to.equal(503);
      expect(body.code).to.equal('service_unavailable');
      expect(atOpen.headers.get('retry-after')).to.match(/^\d+$/u);
      await api.kill(3000);
    } finally {
      await server.stop();
    }
  });
});
