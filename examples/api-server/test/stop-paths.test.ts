// Issue 10 part 2, the review of the stop paths: a container closed without stop() closes
// for real; an in-memory run accepted during the drain is run (or named as lost); a
// signal during start stops what has started; the standalone worker takes the run
// retention and the durability check of the API server. Each test prints its figures.
import { Agent, request } from 'node:http';
import { silentLogger } from '@svc/core';
import { aRun, eventually } from '@svc/core/testing';
import { BullMqRuns } from '@svc/adapter-queue';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { buildContainer, closeAdapters, pickAdapters } from '../src/container.js';
import { loadSettings } from '../src/settings.js';
import { REDIS_URL, uniquePrefix } from '../../../tools/test-support/redis.js';
import { startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';
import { addresses, AGENTS, e2eConfig, SECRETS } from './support/fixture.js';
import { exitWithin, logLines, spawnBuilt, startServerProcess, tempDir, writeConfig, type Child } from './support/server-process.js';


describe('examples/api-server: stop paths', function () {
  this.timeout(40_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let redis: RedisServer | undefined;
  const children: Child[] = [];

  beforeEach(async function () {
    dir = await tempDir();
  });
  afterEach(async function () {
    redis?.resume();
    await Promise.all(children.splice(0).map((c) => c.kill(1000)));
    await redis?.stop();
    redis = undefined;
    await dir.remove();
  });

  it('container.unbindAllAsync() without stop() closes the Redis clients for real (a non-finite bound is no bound)', async function () {
    const at = await addresses();
    const path = await writeConfig(dir.path, e2eConfig(at, { redis_url: REDIS_URL, redis_prefix: uniquePrefix('unbind') }));
    const settings = loadSettings(path);
    const adapters = await pickAdapters(settings, silentLogger);
    const container = buildContainer(settings, silentLogger, adapters);
    const started = Date.now();
    await container.unbindAllAsync();
    console.log(`      figures: unbindAllAsync took ${Date.now() - started} ms`);
    // The hook's closing is memoised: a later stop() gets what it did.
    const report = await closeAdapters(adapters, 5_000);
    expect(report.unfinished, 'close steps reported unfinished (they "timed out" after 1 ms before)').to.deep.equal([]);
  });

  it('in memory: a run accepted on an open connection during the drain is run before the exit (exit 0)', async function () {
    const at = await addresses();
    const config = e2eConfig(at, { worker: { enabled: true, concurrency: 1 }, log_level: 'info', shutdown_grace_ms: 5_000, shutdown_close_budget_ms: 1_000 });
    const server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl);
    children.push(server);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body?: string): Promise<{ status: number; connection: string | undefined; text: string }> =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = body === undefined ? {} : { 'x-api-key': SECRETS.keyA, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
        const req = request({ agent, host: '127.0.0.1', port: at.port, method, path, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text }));
        });
        req.once('error', reject);
        req.end(body);
      });
    try {
      expect((await send('GET', '/api/v1')).status, 'the kept-alive connection').to.equal(200);
      server.process.kill('SIGTERM');
      await eventually(() => server.stdout().includes('"msg":"stopping: draining in-flight requests"'), 'the stop to begin', 5_000, 5);
      const body = JSON.stringify({ files: [{ file_key: 'uploads/d.pdf', file_name: 'd.pdf', content_type: 'application/pdf' }], notification_email: 'ops@example.com' });
      const answer = await send('POST', `/api/v1/agents/${AGENTS.main}/run`, body);
      expect(answer.status, answer.text).to.equal(202);
      expect(answer.connection).to.equal('close');
      const runId = (JSON.parse(answer.text) as { data: { run_id: string } }).data.run_id;
      const exit = await exitWithin(server, 10_000);
      const finished = logLines(server).filter((l) => l['msg'] === 'run finished: notification due' && l['run_id'] === runId);
      console.log(`      figures: exit ${exit.code}; run accepted in the drain finished: ${finished.map((l) => l['status']).join(',') || 'no'}`);
      expect(finished.map((l) => l['status']), 'the run accepted in the drain was run (it was never taken before)').to.deep.equal(['succeeded']);
      expect(exit, server.stdout()).to.deep.include({ code: 0 });
      expect(server.stdout()).to.include('"msg":"stopped"');
    } finally {
      agent.destroy();
    }
  });

  it('a signal during start stops what has started, then exits (not at once mid-start)', async function () {
    redis = await startRedisServer({ args: ['--appendonly', 'no'] });
    const r = redis;
    const at = await addresses();
    const config = e2eConfig(at, { redis_url: r.url, redis_prefix: uniquePrefix('early'), worker: { enabled: true }, log_level: 'info', shutdown_grace_ms: 3_000, shutdown_close_budget_ms: 1_000 });
    const path = await writeConfig(dir.path, config);
    // Paused, Redis holds the start in its first step (the durability check).
    r.pause();
    const child = await spawnBuilt('main', ['--config', path]);
    children.push(child);
    await eventually(() => child.hasExited() || child.stdout().includes('"msg":"starting"'), 'the server to begin starting', 20_000, 10);
    child.process.kill('SIGTERM');
    await eventually(() => child.hasExited() || child.stdout().includes('"msg":"stopping: draining in-flight requests"'), 'the stop to be noted', 5_000, 5);
    const exitedAtSignal = child.hasExited();
    r.resume();
    const exit = await exitWithin(child, 15_000);
    const msgs = logLines(child).map((l) => String(l['msg']));
    const stoppingAt = msgs.indexOf('stopping: draining in-flight requests');
    const startedAfter = msgs.findIndex((m, i) => i > stoppingAt && m.startsWith('Redis setting unsafe for durable runs'));
    console.log(`      figures: exit ${exit.code}; lines ${JSON.stringify(msgs)}`);
    expect(exitedAtSignal, 'the process exited mid-start').to.equal(false);
    expect(startedAfter, 'the start went on after the signal').to.be.above(stoppingAt);
    expect(exit, child.stdout() + child.stderr()).to.deep.include({ code: 0 });
    expect(msgs.at(-1)).to.equal('stopped');
    expect(msgs).to.not.include('listening');
  });

  it('the standalone worker keeps finished runs for runs.retention_seconds and refuses a non-durable Redis with require_durable', async function () {
    redis = await startRedisServer({ args: ['--appendonly', 'no'] });
    const r = redis;
    const at = await addresses();
    const prefix = uniquePrefix('worker');
    // `-- --config`: what `pnpm worker -- --config f` hands the script under pnpm 12.
    const worker = await spawnBuilt('worker', ['--', '--config', await writeConfig(dir.path, e2eConfig(at, { redis_url: r.url, redis_prefix: prefix, runs: { retention_seconds: 3_600 }, log_level: 'info' }))]);
    children.push(worker);
    await eventually(() => worker.hasExited() || worker.stdout().includes('worker started'), 'the worker to start', 20_000, 20);
    expect(worker.hasExited(), worker.stderr()).to.equal(false);
    // SIGHUP reloads API servers; a worker says it has nothing to reload, and goes on.
    worker.process.kill('SIGHUP');
    await eventually(() => worker.hasExited() || worker.stdout().includes('nothing to reload in a worker'), 'the worker to answer SIGHUP', 10_000, 20);
    expect(worker.hasExited(), 'SIGHUP ended the worker').to.equal(false);
    expect(logLines(worker).filter((l) => l['component'] === 'redis' && l['setting'] === 'appendonly'), 'the durability warning').to.have.length(1);
    const runs = await BullMqRuns.connect({ redis: r.url, prefix });
    try {
      await runs.queue.enqueue(aRun({ runId: 'worker-ttl-1' }));
      await eventually(async () => (await runs.store.get('worker-ttl-1'))?.status === 'succeeded', 'the worker to run the run', 10_000);
      const client = new Redis(r.url);
      const ttl = await client.ttl(runs.store.keyOf('worker-ttl-1')).finally(() => client.quit());
      console.log(`      figures: TTL of the finished run's record ${ttl} s (runs.retention_seconds 3600; 2592000 before)`);
      expect(ttl).to.be.within(3_595, 3_600);
    } finally {
      await runs.close(true, 0);
    }
    const strict = await spawnBuilt('worker', ['--config', await writeConfig(dir.path, e2eConfig(at, { redis_url: r.url, redis_prefix: prefix, redis: { require_durable: true } }), 'strict.yaml')]);
    children.push(strict);
    const exit = await exitWithin(strict, 15_000);
    expect(exit.code, strict.stderr()).to.equal(2);
    expect(strict.stderr()).to.match(/redis\.require_durable is true, but Redis appendonly is no/u);
  });
});
