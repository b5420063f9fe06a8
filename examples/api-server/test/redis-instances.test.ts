import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '@svc/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { stringify } from 'yaml';

// Several API processes sharing one Redis, as users run them behind a load balancer:
// limits hold across instances and an accepted run survives the API process.
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const API_KEY = 'svc-instances-test-key-0123456789';
const AGENT = 'agent_shared';
const ROOT = new URL('../../../', import.meta.url).pathname;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50)); // poll interval, bounded by the deadline
  }
}

describe('API instances sharing Redis', function () {
  this.timeout(90_000);
  const prefix = `svc-test-inst-${process.pid}-${Date.now()}`;
  const dir = mkdtempSync(join(tmpdir(), 'svc-instances-'));
  const children: ChildProcess[] = [];
  let redis: Redis;

  before(async function () {
    redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      await redis.ping();
    } catch {
      redis.disconnect();
      if (process.env['CI']) throw new Error(`Redis does not answer at ${REDIS_URL}, and CI is set: Redis-backed tests must run`);
      console.log(`      skipped: Redis does not answer at ${REDIS_URL} (start it, or set REDIS_URL)`);
      this.skip();
    }
  });

  after(async function () {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (redis?.status === 'ready') {
      const keys: string[] = [];
      for await (const batch of redis.scanStream({ match: `${prefix}*`, count: 1000 })) keys.push(...(batch as string[]));
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  async function startProcess(script: 'main' | 'worker', options: { worker: boolean }): Promise<{ child: ChildProcess; base: string }> {
    const [port, egressPort] = [await freePort(), await freePort()];
    const base = `http://127.0.0.1:${port}`;
    const config = join(dir, `${script}-${port}.yaml`);
    writeFileSync(
      config,
      stringify({
        base_url: base,
        listen: { host: '127.0.0.1', port },
        egress: { url: `http://127.0.0.1:${egressPort}`, listen: { host: '127.0.0.1', port: egressPort } },
        redis_url: REDIS_URL,
        redis_prefix: prefix,
        rate_limits: { credential: { requests: 10_000, window_seconds: 60 }, agent: { requests: 30, window_seconds: 60 }, instance_count: 3 },
        worker: { enabled: options.worker, concurrency: 2 },
        log_level: script === 'worker' ? 'info' : 'warn',
        shutdown_grace_ms: 2000,
        accounts: [{ id: 'acct_shared', api_keys: [{ id: 'key_shared', sha256: sha256Hex(API_KEY) }], agents: [{ id: AGENT }, { id: 'agent_other' }] }],
      }),
    );
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', `examples/api-server/src/${script}.ts`, '--config', config], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    if (script === 'main') {
      await until(`${base}/readyz (output so far: ${output})`, async () => ((await fetch(`${base}/readyz`)).ok ? true : undefined));
    } else {
      await until('the worker to start', async () => (output.includes('worker started') ? true : undefined));
    }
    return { child, base };
  }

  function startRun(base: string, agent = AGENT): Promise<Response> {
    return fetch(`${base}/api/v1/agents/${agent}/run`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'shared limits' }),
    });
  }

  it('answers exactly 30 of 100 run starts for one agent spread over three processes with 202, the rest 429 with all seven headers', async function () {
    const instances = await Promise.all([0, 1, 2].map(() => startProcess('main', { worker: true })));
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => startRun(instances[i % 3]!.base)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).to.have.length(30);
    expect(statuses.filter((s) => s === 429)).to.have.length(70);
    const refused = answers.find((r) => r.status === 429)!;
    const h = (name: string) => refused.headers.get(name);
    expect(h('RateLimit-Limit')).to.equal('30');
    expect(h('RateLimit-Remaining')).to.equal('0');
    expect(Number(h('RateLimit-Reset'))).to.be.within(1, 60);
    expect(Number(h('Retry-After'))).to.be.within(1, 60);
    expect(h('x-ratelimit-limit')).to.equal('30');
    expect(h('x-ratelimit-remaining')).to.equal('0');
    expect(Number(h('x-ratelimit-reset')) - Date.now() / 1000).to.be.within(-1, 61);
    expect(refused.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(((await refused.json()) as { code: string }).code).to.equal('rate_limited');
    // Another agent of the same credential still passes on any instance.
    expect((await startRun(instances[1]!.base, 'agent_other')).status).to.equal(202);
    for (const { child } of instances) child.kill('SIGTERM');
    await Promise.all(instances.map(({ child }) => (child.exitCode === null ? once(child, 'exit') : undefined)));
  });

  it('completes a run answered 202 by an API process killed with SIGKILL before any worker ran', async function () {
    const api = await startProcess('main', { worker: false });
    const accepted = await startRun(api.base, 'agent_other');
    expect(accepted.status).to.equal(202);
    const statusUrlPath = new URL(accepted.headers.get('location')!).pathname;
    api.child.kill('SIGKILL');
    await once(api.child, 'exit');

    const reader = await startProcess('main', { worker: false });
    const read = async () => {
      const r = await fetch(`${reader.base}${statusUrlPath}`, { headers: { 'X-API-Key': API_KEY } });
      return ((await r.json()) as { data: { status: string; attempts: number } }).data;
    };
    expect((await read()).status).to.equal('queued');

    await startProcess('worker', { worker: true });
    const seen = new Set<string>();
    const final = await until('the run to finish', async () => {
      const run = await read();
      seen.add(run.status);
      return run.status === 'succeeded' || run.status === 'failed' ? run : undefined;
    });
    expect(final.status).to.equal('succeeded');
    expect(final.attempts).to.equal(1);
    expect([...seen].every((s) => ['queued', 'running', 'succeeded'].includes(s))).to.equal(true);
  });
});
