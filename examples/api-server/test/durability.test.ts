import { expect } from 'chai';
import { eventually } from '@svc/core/testing';
import { addresses, AGENTS, e2eConfig, SECRETS } from './support/fixture.js';
import { apiKey, call, expectData } from '../../../tools/test-support/http.js';
import { startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';
import { logLines, spawnBuilt, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';


describe('durability of runs: Redis settings checked at start, bounded in-memory run store (child processes)', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess | undefined;
  let redis: RedisServer | undefined;

  beforeEach(async function () {
    dir = await tempDir();
  });
  afterEach(async function () {
    await server?.kill();
    server = undefined;
    await redis?.stop();
    redis = undefined;
    await dir.remove();
  });

  it('redis.require_durable: true refuses to start on a Redis without AOF, naming the setting (exit 2)', async function () {
    redis = await startRedisServer({ args: ['--appendonly', 'no'] });
    const at = await addresses();
    const path = await writeConfig(dir.path, e2eConfig(at, { redis_url: redis.url, redis_prefix: 'durable-test', redis: { require_durable: true } }));
    const child = await spawnBuilt('main', ['--config', path]);
    const exit = await child.exited;
    expect(exit.code, child.stderr()).to.equal(2);
    expect(child.stderr()).to.match(/redis\.require_durable is true, but Redis appendonly is no \(needs yes\)/u);
    expect(child.stderr()).to.not.include(redis.url);
  });

  it('without require_durable it starts and logs one warning per unsafe setting', async function () {
    redis = await startRedisServer({ args: ['--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru'] });
    const at = await addresses();
    const path = await writeConfig(dir.path, e2eConfig(at, { redis_url: redis.url, redis_prefix: 'durable-test' }));
    server = await startServerProcess(path, at.url, at.egressUrl);
    const warnings = logLines(server).filter((l) => l['component'] === 'redis' && typeof l['setting'] === 'string');
    expect(warnings.map((w) => [w['setting'], w['value'], w['level']])).to.deep.equal([
      ['appendonly', 'no', 40],
      ['maxmemory-policy', 'allkeys-lru', 40],
    ]);
  });

  it('with AOF and noeviction it starts without a warning, and with require_durable too', async function () {
    redis = await startRedisServer({ args: ['--appendonly', 'yes'] });
    const at = await addresses();
    const path = await writeConfig(dir.path, e2eConfig(at, { redis_url: redis.url, redis_prefix: 'durable-test', redis: { require_durable: true } }));
    server = await startServerProcess(path, at.url, at.egressUrl);
    expect(logLines(server).filter((l) => l['component'] === 'redis' && l['setting'] !== undefined)).to.deep.equal([]);
  });

  it('the in-memory run store keeps at most runs.max_finished_in_memory finished runs, dropping the first finished', async function () {
    const at = await addresses();
    // 50 ms runs (the demo's default is 500 ms): the test needs them finished in order, not long.
    const path = await writeConfig(dir.path, e2eConfig(at, { worker: { enabled: true, concurrency: 1, demo_delay_ms: 50 }, runs: { max_finished_in_memory: 2 } }));
    server = await startServerProcess(path, at.url, at.egressUrl);
    const base = server.url;
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await call(base, 'POST', `/api/v1/agents/${AGENTS.spare}/run`, { headers: apiKey(SECRETS.keyA), json: { message: `run ${i}` } });
      runIds.push(expectData<{ run_id: string }>(answer, 202).run_id);
    }
    // One worker slot: the runs finish in the order they started, so the first is dropped.
    await eventually(
      async () => {
        const statuses = await Promise.all(runIds.map((id) => call(base, 'GET', `/api/v1/runs/${id}`, { headers: apiKey(SECRETS.keyA) }).then((a) => a.status)));
        return statuses.join() === '404,200,200';
      },
      'the first finished run to be dropped',
      15_000,
      50,
    );
    for (const id of runIds.slice(1)) {
      const run = expectData<{ status: string }>(await call(base, 'GET', `/api/v1/runs/${id}`, { headers: apiKey(SECRETS.keyA) }), 200);
      expect(run.status).to.equal('succeeded');
    }
  });
});
