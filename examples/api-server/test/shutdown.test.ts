// Issue 10 part 2 (docs/CONTRACT.md "Dependencies and faults"): SIGTERM under keep-alive load
// resets nothing; SIGTERM with Redis lost or paused exits within the bound; the delay
// keeps serving while /readyz says draining. Each test prints its figures.
import { Agent, request } from 'node:http';
import { expect } from 'chai';
import { eventually } from '@svc/core/testing';
import { addresses, AGENTS, e2eConfig, SECRETS, type Addresses } from './support/fixture.js';
import { startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';
import { exitWithin, logLines, spawnBuilt, startServerProcess, tempDir, writeConfig, type Child, type ServerProcess } from './support/server-process.js';

/** The lines at level error (50) or above. */
function errorLines(child: Child): Record<string, unknown>[] {
  return logLines(child).filter((l) => (l['level'] as number) >= 50 && l['component'] === undefined);
}

describe('examples/api-server: SIGTERM under 50-connection keep-alive load (child process)', function () {
  this.timeout(40_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess | undefined;
  // One kept-alive connection per loop: with one shared pool a loop could take a socket
  // another loop had just freed, so "its last answer" would not be its connection's last.
  const agents = Array.from({ length: 50 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));

  before(async function () {
    dir = await tempDir();
  });
  after(async function () {
    for (const agent of agents) agent.destroy();
    await server?.kill(1000);
    await dir?.remove();
  });

  it('answers every request or refuses it at connect: 0 connection resets; exit within grace + budget, naming the in-memory runs it could not run', async function () {
    const at = await addresses();
    const grace = 5_000;
    const budget = 2_000;
    const config = e2eConfig(at, {
      rate_limits: { credential: { requests: 1_000_000, window_seconds: 60 }, agent: { requests: 1_000_000, window_seconds: 60 } },
      worker: { enabled: true, concurrency: 4 },
      log_level: 'info',
      shutdown_grace_ms: grace,
      shutdown_close_budget_ms: budget,
    });
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl);
    const s = server;

    type Outcome = { kind: 'answered'; status: number; close: boolean; afterSignal: boolean } | { kind: 'refused' } | { kind: 'error'; code: string; afterSignal: boolean };
    const outcomes: Outcome[] = [];
    let signalledAt = 0;
    // Half the connections start runs, half read the index: both on kept-alive sockets.
    const send = (i: number): Promise<Outcome> =>
      new Promise((resolve) => {
        const run = i % 2 === 1;
        const body = run ? JSON.stringify({ message: 'under load' }) : undefined;
        const req = request(
          {
            agent: agents[i],
            host: '127.0.0.1',
            port: at.port,
            method: run ? 'POST' : 'GET',
            path: run ? `/api/v1/agents/${AGENTS.main}/run` : '/api/v1',
            headers: run ? { 'x-api-key': SECRETS.keyA, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body!)) } : {},
          },
          (res) => {
            res.resume();
            res.once('end', () =>
              resolve({ kind: 'answered', status: res.statusCode ?? 0, close: res.headers.connection === 'close', afterSignal: signalledAt > 0 }),
            );
            res.once('error', (e: NodeJS.ErrnoException) => resolve({ kind: 'error', code: e.code ?? e.message, afterSignal: signalledAt > 0 }));
          },
        );
        req.once('error', (e: NodeJS.ErrnoException) =>
          resolve(e.code === 'ECONNREFUSED' ? { kind: 'refused' } : { kind: 'error', code: e.code ?? e.message, afterSignal: signalledAt > 0 }),
        );
        req.end(body);
      });
    // Each of the 50 loops sends back to back until the server refuses its connection.
    // Per loop, the answer just before the refusal: it must have told the client to close.
    const lastAnswers: Outcome[] = [];
    const loops = Array.from({ length: 50 }, async (_, i) => {
      let last: Outcome | undefined;
      for (;;) {
        const outcome = await send(i);
        outcomes.push(outcome);
        if (outcome.kind !== 'answered') {
          if (last !== undefined) lastAnswers.push(last);
          return;
        }
        last = outcome;
      }
    });
    await eventually(() => outcomes.length >= 1_000, '1000 answers under load', 20_000, 5);
    signalledAt = Date.now();
    s.process.kill('SIGTERM');
    await Promise.all(loops);
    const exit = await exitWithin(s, grace + budget + 5_000, signalledAt);

    const answered = outcomes.filter((o): o is Extract<Outcome, { kind: 'answered' }> => o.kind === 'answered');
    const byStatus: Record<number, number> = {};
    for (const o of answered) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
    const afterSignal = answered.filter((o) => o.afterSignal);
    const errors = outcomes.filter((o): o is Extract<Outcome, { kind: 'error' }> => o.kind === 'error');
    const refused = outcomes.filter((o) => o.kind === 'refused').length;
    console.log(
      `      figures: ${outcomes.length} requests, answered ${answered.length} ${JSON.stringify(byStatus)}, ` +
        `${afterSignal.length} answered after SIGTERM was sent (${afterSignal.filter((o) => o.close).length} with Connection: close), ` +
        `refused at connect ${refused}, resets/errors ${errors.length}${errors.length > 0 ? ` ${JSON.stringify(errors.slice(0, 5))}` : ''}, exit ${exit.code} after ${exit.ms} ms (bound ${grace + budget} ms)`,
    );
    expect(errors, 'connection resets and other errors').to.deep.equal([]);
    expect(Object.keys(byStatus).sort(), 'every answer is 200 (index) or 202 (run)').to.deep.equal(['200', '202']);
    expect(refused, 'every loop ends refused at connect once the listener is closed').to.equal(50);
    expect(lastAnswers.filter((o) => o.kind === 'answered' && o.close), 'each connection ends with an answer carrying Connection: close').to.have.length(50);
    expect(answered.filter((o) => o.close), 'and no other answer carries it').to.have.length(50);
    // Hundreds of runs were accepted in memory; at 500 ms each and 4 at a time, the grace
    // runs a few dozen: the rest are lost with the process, and the line says so.
    const lines = errorLines(s);
    const runsLost = lines[0]?.['runs_lost'] as number | undefined;
    console.log(`      figures: ${runsLost} of ${byStatus[202]} accepted runs lost with the process`);
    expect(exit, s.stdout()).to.deep.include({ code: 1, signal: null });
    expect(exit.ms).to.be.below(grace + budget + 2_000);
    expect(lines, 'one line naming what was abandoned').to.have.length(1);
    expect(lines[0]).to.include({ requests_cut: 0 });
    expect(lines[0]!['msg']).to.match(/^stopped, abandoning: \d+ in-memory run\(s\) not finished, lost with the process$/);
    expect(runsLost).to.be.above(0).and.at.most(byStatus[202] ?? 0);
    expect(lines[0]!['lost_run_ids']).to.have.length(Math.min(runsLost ?? 0, 1_000));
  });
});

describe('examples/api-server: SIGTERM with Redis lost or paused (child processes)', function () {
  this.timeout(40_000);
  const grace = 1_500;
  const budget = 2_500;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let redis: RedisServer | undefined;
  const children: Child[] = [];

  beforeEach(async function () {
    dir = await tempDir();
    redis = await startRedisServer();
  });
  afterEach(async function () {
    await Promise.all(children.splice(0).map((c) => c.kill(1000)));
    await redis?.stop();
    await dir.remove();
  });

  function redisConfig(at: Addresses, r: RedisServer): Record<string, unknown> {
    return e2eConfig(at, {
      redis_url: r.url,
      redis_prefix: `svc-stop-${process.pid}`,
      worker: { enabled: true, concurrency: 4 },
      log_level: 'info',
      shutdown_grace_ms: grace,
      shutdown_close_budget_ms: budget,
    });
  }

  it('API with worker, Redis SIGKILLed with a run in progress: exits 1 within grace + budget, one line naming the abandoned run', async function () {
    const at = await addresses();
    const r = redis!;
    const server = await startServerProcess(await writeConfig(dir.path, redisConfig(at, r)), at.url, at.egressUrl);
    children.push(server);
    const headers = { 'x-api-key': SECRETS.keyA, 'content-type': 'application/json' };
    const started = await fetch(`${at.url}/api/v1/agents/${AGENTS.main}/run`, { method: 'POST', headers, body: JSON.stringify({ message: 'abandoned' }) });
    expect(started.status).to.equal(202);
    const runId = ((await started.json()) as { data: { run_id: string } }).data.run_id;
    // The demo processor takes 500 ms: catch the run while it is running.
    await eventually(
      async () => {
        const res = await fetch(`${at.url}/api/v1/runs/${runId}`, { headers });
        return ((await res.json()) as { data?: { status?: string } }).data?.status === 'running';
      },
      'the run to be running',
      5_000,
      10,
    );
    await r.kill();
    const signalledAt = Date.now();
    server.process.kill('SIGTERM');
    const exit = await exitWithin(server, grace + budget + 5_000, signalledAt);
    const lines = errorLines(server);
    console.log(`      figures: exit ${exit.code} after ${exit.ms} ms (bound ${grace + budget} ms); line: ${JSON.stringify(lines.map((l) => l['msg']))}`);
    expect(exit.code, server.stdout()).to.equal(1);
    expect(exit.ms).to.be.below(grace + budget + 2_000);
    expect(lines, 'one line naming what was abandoned').to.have.length(1);
    expect(lines[0]!['msg']).to.match(/^stopped, abandoning: .*1 run\(s\) in progress abandoned \(they stay queued/);
    expect(lines[0]!['run_ids']).to.deep.equal([runId]);
    expect(server.stdout()).to.not.include('"msg":"stopped"');
  });

  it('standalone worker, Redis SIGKILLed, no run in progress: exits 0 within grace + budget', async function () {
    const at = await addresses();
    const r = redis!;
    const worker = await spawnBuilt('worker', ['--config', await writeConfig(dir.path, redisConfig(at, r))]);
    children.push(worker);
    await eventually(() => worker.hasExited() || worker.stdout().includes('worker started'), 'the worker to start', 20_000, 20);
    await r.kill();
    const signalledAt = Date.now();
    worker.process.kill('SIGTERM');
    const exit = await exitWithin(worker, grace + budget + 5_000, signalledAt);
    console.log(`      figures: exit ${exit.code} after ${exit.ms} ms (bound ${grace + budget} ms)`);
    expect(exit.code, worker.stdout() + worker.stderr()).to.equal(0);
    expect(exit.ms).to.be.below(grace + budget + 2_000);
    expect(worker.stdout()).to.include('"msg":"stopped"');
  });

  it('standalone worker, Redis SIGSTOPped: exits 1 within grace + budget, one line naming the dropped clients', async function () {
    const at = await addresses();
    const r = redis!;
    const worker = await spawnBuilt('worker', ['--config', await writeConfig(dir.path, redisConfig(at, r))]);
    children.push(worker);
    await eventually(() => worker.hasExited() || worker.stdout().includes('worker started'), 'the worker to start', 20_000, 20);
    r.pause();
    const signalledAt = Date.now();
    worker.process.kill('SIGTERM');
    const exit = await exitWithin(worker, grace + budget + 5_000, signalledAt);
    const lines = errorLines(worker);
    console.log(`      figures: exit ${exit.code} after ${exit.ms} ms (bound ${grace + budget} ms); line: ${JSON.stringify(lines.map((l) => l['msg']))}`);
    expect(exit.code, worker.stdout() + worker.stderr()).to.equal(1);
    expect(exit.ms).to.be.below(grace + budget + 2_000);
    expect(lines).to.have.length(1);
    expect(lines[0]!['msg']).to.match(/^stopped, abandoning: close did not finish: .*Redis client run-worker dropped/);
  });
});

describe('examples/api-server: shutdown_delay_ms (child process)', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess | undefined;

  before(async function () {
    dir = await tempDir();
  });
  after(async function () {
    await server?.kill(1000);
    await dir?.remove();
  });

  it('keeps serving while /readyz answers 503 draining, then stops accepting and exits 0', async function () {
    const at = await addresses();
    const delay = 1_500;
    const config = e2eConfig(at, { shutdown_delay_ms: delay, shutdown_grace_ms: 2_000, shutdown_close_budget_ms: 1_000 });
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl);
    const s = server;
    expect((await fetch(`${at.url}/readyz`)).status).to.equal(200);
    const signalledAt = Date.now();
    s.process.kill('SIGTERM');
    await eventually(async () => (await fetch(`${at.url}/readyz`)).status === 503, '/readyz to answer 503', 1_000, 10);
    const readyz = await fetch(`${at.url}/readyz`);
    const readyzBody = (await readyz.json()) as { status: string };
    const index = await fetch(`${at.url}/api/v1`);
    await index.arrayBuffer();
    const servedAfterMs = Date.now() - signalledAt;
    // Still serving: count the answers until the listener closes.
    let served = 0;
    let refusedAfterMs = 0;
    for (;;) {
      try {
        const res = await fetch(`${at.url}/api/v1`);
        await res.arrayBuffer();
        if (res.status === 200) served++;
      } catch {
        refusedAfterMs = Date.now() - signalledAt;
        break;
      }
      if (Date.now() - signalledAt > delay + 5_000) break;
    }
    const exit = await exitWithin(s, delay + 3_000 + 5_000, signalledAt);
    console.log(
      `      figures: /readyz ${readyz.status} ${readyzBody.status}; ${served + 1} index answers during the delay, the last one refused ${refusedAfterMs} ms after SIGTERM (delay ${delay} ms); exit ${exit.code} after ${exit.ms} ms`,
    );
    expect(readyz.status).to.equal(503);
    expect(readyzBody.status).to.equal('draining');
    expect(index.status, `index answered ${servedAfterMs} ms after the signal`).to.equal(200);
    expect(index.headers.get('connection')).to.equal('close');
    expect(served).to.be.above(0);
    expect(refusedAfterMs, 'the listener closes after the delay, not before').to.be.at.least(delay - 100);
    expect(exit, s.stdout()).to.deep.include({ code: 0, signal: null });
    expect(exit.ms).to.be.below(delay + 3_000 + 2_000);
  });
});
