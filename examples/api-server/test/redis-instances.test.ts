import { sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { deleteKeys, REDIS_URL, redisOrSkip } from '../../../tools/test-support/redis.js';
import { startInstance, tempDir, type Child } from './support/server-process.js';

// Several API processes sharing one Redis, as users run them behind a load balancer:
// limits hold across instances and an accepted run survives the API process.
const API_KEY = 'svc-instances-test-key-0123456789';
const AGENT = 'agent_shared';

describe('API instances sharing Redis', function () {
  this.timeout(90_000);
  const prefix = `svc-test-inst-${process.pid}-${Date.now()}`;
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

  /**
   * Starts an instance on `keyPrefix` (default: the suite's prefix; a test whose worker must
   * find only its own runs gives a sub-prefix, which the `after` hook's cleanup covers).
   */
  async function startProcess(script: 'main' | 'worker', options: { worker: boolean; keyPrefix?: string }): Promise<Child & { base: string }> {
    const child = await startInstance(dir.path, script, {
      redis_url: REDIS_URL,
      redis_prefix: options.keyPrefix ?? prefix,
      rate_limits: { credential: { requests: 10_000, window_seconds: 60 }, agent: { requests: 30, window_seconds: 60 }, instance_count: 3 },
      worker: { enabled: options.worker, concurrency: 2 },
      log_level: script === 'worker' ? 'info' : 'warn',
      shutdown_grace_ms: 2000,
      accounts: [{ id: 'acct_shared', api_keys: [{ id: 'key_shared', sha256: sha256Hex(API_KEY) }], agents: [{ id: AGENT }, { id: 'agent_other' }, { id: 'agent_idem' }] }],
    });
    children.push(child);
    return child;
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
    await Promise.all(instances.map((instance) => instance.kill()));
  });

  it('shares Idempotency-Keys through Redis: one key sent 6 times at once over two instances makes one run, the rest replays or 409', async function () {
    const [one, two] = await Promise.all([0, 1].map(() => startProcess('main', { worker: false })));
    const key = `instances-${process.pid}-${Date.now()}`;
    const send = (base: string): Promise<Response> =>
      fetch(`${base}/api/v1/agents/agent_idem/run`, {
        method: 'POST',
        headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ message: 'once' }),
      });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send((i % 2 === 0 ? one : two)!.base)));
    const bodies = await Promise.all(answers.map((r) => r.text()));
    const fresh = answers.filter((r) => r.status === 202 && r.headers.get('idempotent-replayed') === null);
    expect(fresh, answers.map((r) => r.status).join(',')).to.have.length(1);
    const freshBody = bodies[answers.indexOf(fresh[0]!)];
    answers.forEach((r, i) => {
      if (r === fresh[0]) return;
      if (r.status === 202) expect(bodies[i]).to.equal(freshBody);
      else expect([r.status, r.headers.get('retry-after')]).to.deep.equal([409, '1']);
    });
    // Settled: every instance replays the first answer byte for byte.
    for (const instance of [one, two]) {
      const replay = await send(instance!.base);
      expect([replay.status, replay.headers.get('idempotent-replayed'), await replay.text()]).to.deep.equal([202, 'true', freshBody]);
    }
    const listed = await fetch(`${one!.base}/api/v1/runs?agent_id=agent_idem`, { headers: { 'X-API-Key': API_KEY } });
    expect(((await listed.json()) as { data: unknown[] }).data).to.have.length(1);
    await Promise.all([one, two].map((instance) => instance!.kill()));
  });

  it("pages a list across instances without SVC_CURSOR_KEY: a cursor one instance signed, another accepts (the key is shared through Redis)", async function () {
    const [first, second] = await Promise.all([0, 1].map(() => startProcess('main', { worker: false })));
    for (let i = 0; i < 3; i++) expect((await startRun(first!.base, 'agent_other')).status).to.equal(202);
    const headers = { 'X-API-Key': API_KEY };
    const page1 = (await (await fetch(`${first!.base}/api/v1/runs?agent_id=agent_other&limit=2`, { headers })).json()) as { data: { run_id: string }[]; next_cursor: string | null };
    expect(page1.data).to.have.length(2);
    expect(page1.next_cursor).to.be.a('string');
    const onSecond = await fetch(`${second!.base}/api/v1/runs?agent_id=agent_other&limit=2&cursor=${page1.next_cursor}`, { headers });
    expect(onSecond.status, 'the other instance accepts the cursor').to.equal(200);
    const page2 = (await onSecond.json()) as { data: { run_id: string }[] };
    expect(page2.data.length).to.be.at.least(1);
    expect(page2.data.map((r) => r.run_id)).not.to.include.members(page1.data.map((r) => r.run_id));
    expect(await redis.exists(`${prefix}:cursor-key`), 'the shared key is stored under the prefix').to.equal(1);
    await Promise.all([first!.kill(), second!.kill()]);
  });

  it('completes a run answered 202 by an API process killed with SIGKILL before any worker ran', async function () {
    // A queue of its own: the worker below would otherwise first work through the runs the
    // tests above left queued (their instances stopped), or wait for the locks of the runs
    // their workers held.
    const keyPrefix = `${prefix}:sigkill`;
    const api = await startProcess('main', { worker: false, keyPrefix });
    const accepted = await startRun(api.base, 'agent_other');
    expect(accepted.status).to.equal(202);
    const statusUrlPath = new URL(accepted.headers.get('location')!).pathname;
    api.process.kill('SIGKILL');
    await api.exited;

    const reader = await startProcess('main', { worker: false, keyPrefix });
    const read = async () => {
      const r = await fetch(`${reader.base}${statusUrlPath}`, { headers: { 'X-API-Key': API_KEY } });
      return ((await r.json()) as { data: { status: string; attempts: number } }).data;
    };
    expect((await read()).status).to.equal('queued');

    await startProcess('worker', { worker: true, keyPrefix });
    const seen = new Set<string>();
    let final = await read();
    await eventually(async () => {
      final = await read();
      seen.add(final.status);
      return final.status === 'succeeded' || final.status === 'failed';
    }, 'the run to finish', 15_000, 50);
    expect(final.status).to.equal('succeeded');
    expect(final.attempts).to.equal(1);
    expect([...seen].every((s) => ['queued', 'running', 'succeeded'].includes(s))).to.equal(true);
  });
});
