// Keeps the benchmark from rotting: every scenario runs for about a second (0.1 s warm-up,
// 0.5 s measured, plus its server's start) and must give
// a row with a throughput, or a printed reason why it cannot run yet; the upload scenario
// runs one round with a 1 MiB file (not 500). No figure is
// asserted: the benchmark itself (bench/src/run.ts) is never part of the test suite.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { answerDifferences } from '../src/answer-shape.js';
import { isPeer, isScenario, PEERS, runBench, SCENARIOS, UPLOAD_SCENARIO, type BenchReport, type ScenarioName } from '../src/bench.js';
import { summarize, type CpuProfile } from '../src/cpuprofile.js';
import { REPO_ROOT } from '../src/paths.js';
import type { HttpAnswer } from '../src/load.js';
import { checkTargets, formatReport, peerComparisons, uploadSummary } from '../src/report.js';
import { median, MIB } from '../src/upload.js';

/**
 * `tsc -b examples/api-server`: the smoke runs the API server built, as `pnpm bench` does
 * (a no-op after `pnpm test`'s own build); rejects with the compiler's output on failure.
 */
function buildApiServer(): Promise<void> {
  return new Promise((resolve, reject) => {
    // 120 s: a cold build of every referenced package on a busy 2-core machine takes about 40 s.
    execFile(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'examples/api-server'], { cwd: REPO_ROOT, timeout: 120_000 }, (error, stdout, stderr) =>
      error === null ? resolve() : reject(new Error(`tsc -b examples/api-server failed: ${error.message}\n${stdout}\n${stderr}`)),
    );
  });
}

describe('bench smoke: each scenario for about a second', function () {
  this.timeout(180_000);
  let report: BenchReport;
  let printed: string;
  let profileDir: string;

  before(async () => {
    profileDir = mkdtempSync(join(tmpdir(), 'svc-bench-smoke-'));
    // The API servers built (serverOrigin 'dist'), not through tsx: each of its starts is then
    // 0.5-1.2 s shorter, and what it measures is what `pnpm bench` measures.
    await buildApiServer();
    report = await runBench({
      durationSeconds: 0.5,
      warmupSeconds: 0.1,
      connections: 10,
      idleSettleMs: 100,
      serverOrigin: 'dist',
      profile: { dir: profileDir, only: [] },
      upload: { sizeBytes: MIB, rounds: 1 },
      // 3 rounds: two pairs of processes (2 + 1 rounds), so a restart between rounds runs too.
      alternated: { rounds: 3, roundSeconds: 0.2 },
    });
    printed = formatReport(report);
  });

  after(() => rmSync(profileDir, { recursive: true, force: true }));

  for (const scenario of Object.keys(SCENARIOS).filter((s) => s !== UPLOAD_SCENARIO)) {
    it(`${scenario}: a row with req/s > 0, or a printed skip reason`, () => {
      const row = report.rows.find((r) => r.scenario === scenario);
      expect(row, `no row for ${scenario}`).to.not.equal(undefined);
      if (row?.skip !== undefined) {
        expect(row.skip).to.match(/\S/u);
        // A peer may be skipped for want of Redis or a TDS server, never for answering unlike the project.
        expect(row.skip).to.not.match(/does not answer like the project/u);
        expect(printed).to.include(`skipped: ${row.skip}`);
      } else {
        expect(row?.result?.requestsPerSecond).to.be.greaterThan(0);
        expect(row?.result?.non2xx).to.equal(0);
        expect(printed).to.include(`| ${row?.label ?? ''} |`);
      }
    });
  }

  it('prints every measured row with its ratio to bare Koa', () => {
    expect(printed).to.match(/\| scenario \| req\/s \| p50 ms \| p99 ms \| × bare Koa \|/u);
    expect(printed).to.include('| 1.00× |');
    for (const row of report.rows) if (row.result !== undefined) expect(row.ratio).to.be.greaterThan(0);
  });

  it('checks every measured peer against the project before measuring it, and prints project ÷ peer', () => {
    for (const peer of Object.keys(PEERS) as ScenarioName[]) {
      expect(isPeer(peer)).to.equal(true);
      const row = report.rows.find((r) => r.scenario === peer);
      if (row?.result === undefined) continue;
      expect(report.peerChecks?.map((c) => c.scenario), peer).to.include(peer);
      expect(row.result.serverCpuUsPerRequest, `${peer} CPU µs per request`).to.be.greaterThan(0);
    }
    const comparisons = peerComparisons(report);
    expect(comparisons.map((c) => c.what)).to.have.length(5);
    for (const c of comparisons) expect(printed).to.include(`- ${c.what}: `);
    expect(printed).to.match(/\| run start in memory \| Koa peer \| \d+ \| \d+ \| \d+\.\d\d× \| \d+ \| \d+ \|/u);
  });

  it(`${UPLOAD_SCENARIO}: one round, PUT + complete, the peer's PUT and cp + sync timed, the children's RSS watched (or skipped for want of disk space)`, () => {
    const upload = report.upload;
    expect(upload, 'no upload result').to.not.equal(undefined);
    if (upload?.skip !== undefined) {
      expect(upload.skip).to.match(/MiB free, the upload scenario needs/u);
      expect(printed).to.include(`skipped: ${upload.skip}`);
      return;
    }
    expect(upload?.result?.sizeBytes).to.equal(MIB);
    const round = upload?.result?.rounds[0];
    expect(upload?.result?.rounds).to.have.length(1);
    for (const ms of [round?.putMs, round?.completeMs, round?.peerMs, round?.cpMs, round?.cpKernelMs]) expect(ms).to.be.greaterThan(0);
    for (const child of [round?.server, round?.peer]) {
      expect(child?.rssBeforeBytes).to.be.greaterThan(10 * MIB);
      expect(child?.rssPeakBytes).to.be.at.least(child?.rssBeforeBytes ?? Infinity);
    }
    expect(uploadSummary(upload)?.ratioToCp).to.be.greaterThan(0);
    expect(uploadSummary(upload)?.ratioToPeer).to.be.greaterThan(0);
    expect(printed).to.match(/\| upload \(PUT \+ complete\) ≤ 1\.5× cp \+ sync of the same file, median of the rounds \| \d+\.\d\d× /u);
    expect(report.servers.map((s) => s.scenario)).to.include(UPLOAD_SCENARIO);
  });

  it('measures the API server process: spawn to listening and RSS', () => {
    const server = report.servers.find((s) => s.scenario === 'run-memory');
    expect(server?.startMs).to.be.greaterThan(0);
    expect(server?.rssIdleBytes).to.be.greaterThan(10 * 1024 * 1024);
    expect(server?.rssAfterBytes).to.be.greaterThan(0);
  });

  it('measures the index and bare Koa, and each run start and its Koa peer, in alternated rounds; the targets read their medians', () => {
    // The Redis pair when its peer answered alike in the table (Redis is there).
    const redisPeer = report.peerChecks?.some((c) => c.scenario === 'peer-koa-run-redis') === true;
    expect(report.alternated?.map((p) => p.pair)).to.deep.equal(['index-koa', 'run-memory-peer', ...(redisPeer ? ['run-redis-peer'] : [])]);
    for (const pair of report.alternated ?? []) {
      expect(pair.rounds.map((r) => r.projectFirst), pair.pair).to.deep.equal([true, false, true]);
      for (const r of pair.rounds) {
        expect(r.project.requestsPerSecond, pair.pair).to.be.greaterThan(0);
        expect(r.other.requestsPerSecond, pair.pair).to.be.greaterThan(0);
        expect([r.project.non2xx, r.other.non2xx], pair.pair).to.deep.equal([0, 0]);
      }
      expect(pair.rpsRatio, pair.pair).to.be.greaterThan(0);
      expect(pair.cpuRatio, pair.pair).to.be.greaterThan(0);
    }
    expect(printed).to.match(/\| index ÷ bare Koa: round \| first \|/u);
    expect(printed).to.match(/\| median \| \| \| \| \*\*\d+\.\d\d×\*\* \| \| \*\*\d+\.\d\d×\*\* \|/u);
    expect(printed).to.match(/\| index ≥ 0\.9× bare Koa \| .*alternated rounds: median \d+\.\d\d× by req\/s/u);
    expect(printed).to.match(/\| run start in memory ≥ 0\.9× the Koa peer \(req\/s\) \| .*alternated rounds: median \d+\.\d\d× by req\/s/u);
  });

  it('measures the insert one request at a time and its Koa peer in alternated rounds; the insert target reads their median', () => {
    const rounds = report.insertLatencyRounds?.rounds ?? [];
    expect(rounds.map((r) => r.projectFirst)).to.deep.equal([true, false, true]);
    for (const r of rounds) {
      expect(r.project.count).to.be.greaterThan(0);
      expect(r.other.count).to.be.greaterThan(0);
    }
    expect(report.insertLatencyRounds?.p50Ratio).to.be.greaterThan(0);
    expect(printed).to.match(/\| insert p50 ÷ Koa insert peer: round \| first \|/u);
    expect(printed).to.match(/\| insert p50 at concurrency 1 ≤ 1\.1× the Koa insert peer's \| .*alternated rounds: median \d+\.\d\d× by p50 \(3 rounds\)/u);
  });

  it('checks every target, each met, missed or said not measured', () => {
    const checks = checkTargets(report);
    expect(checks).to.have.length(6);
    for (const c of checks) expect(printed).to.include(`| ${c.target} |`);
  });

  it('profiles a server child (bare Koa: the API servers cost a start each) and ranks self time', () => {
    const koa = report.profile?.koa;
    expect(koa?.served).to.be.greaterThan(0);
    expect(koa?.summary.busyMs).to.be.greaterThan(0);
    expect(koa?.summary.functions.length).to.be.greaterThan(0);
    expect(printed).to.match(/\| server \| req\/s while profiled \| busy µs\/request \| profile \|\n\|---\|---:\|---:\|---\|\n\| bare Koa \| \d+/u);
  });

  it('knows its scenarios by name', () => {
    expect(isScenario('run-redis')).to.equal(true);
    expect(isScenario(UPLOAD_SCENARIO)).to.equal(true);
    expect(isScenario('toString')).to.equal(false);
  });

});

describe('bench smoke: a scenario that cannot run', function () {
  this.timeout(30_000);

  it('prints "skipped: <reason>" in its row instead of failing', async () => {
    const report = await runBench({ durationSeconds: 0.3, warmupSeconds: 0, connections: 2, idleSettleMs: 0, only: ['run-redis'], redisUrl: 'redis://127.0.0.1:1' });
    const row = report.rows.find((r) => r.scenario === 'run-redis');
    expect(row?.skip).to.equal('Redis does not answer at redis://127.0.0.1:1');
    expect(formatReport(report)).to.include('| skipped: Redis does not answer at redis://127.0.0.1:1 |');
  });
});

describe('bench smoke: a peer whose project scenario cannot run', function () {
  this.timeout(30_000);

  it('is skipped with the reason, not measured unchecked', async () => {
    const report = await runBench({ durationSeconds: 0.3, warmupSeconds: 0, connections: 2, idleSettleMs: 0, only: ['peer-koa-run-redis'], redisUrl: 'redis://127.0.0.1:1' });
    const row = report.rows.find((r) => r.scenario === 'peer-koa-run-redis');
    expect(row?.skip).to.equal("the project's run-redis did not answer in this run (Redis does not answer at redis://127.0.0.1:1): nothing to check the peer against");
    expect(report.peerChecks).to.equal(undefined);
  });
});

describe('upload medians', () => {
  it('is the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(Number.isNaN(median([]))).to.equal(true);
  });
});

describe('peer answer check', () => {
  const answer = (over: Partial<HttpAnswer> = {}, headers: Record<string, string> = {}): HttpAnswer => ({
    status: 202,
    headers: {
      'x-request-id': '823a4f2d-54bf-49a0-9889-324a070f8266',
      location: 'http://127.0.0.1:42117/api/v1/runs/9894df0d-0a6a-48ba-adb4-d7a8eda58395',
      'ratelimit-limit': '1000',
      'content-type': 'application/json; charset=utf-8',
      date: 'Mon, 23 Nov 2026 23:18:35 GMT',
      ...headers,
    },
    body: JSON.stringify({ data: { run_id: '9894df0d-0a6a-48ba-adb4-d7a8eda58395', status: 'queued', status_url: 'http://127.0.0.1:42117/api/v1/runs/9894df0d-0a6a-48ba-adb4-d7a8eda58395' } }),
    ...over,
  });
  const other = answer(
    { body: JSON.stringify({ data: { status_url: 'http://127.0.0.1:39001/api/v1/runs/0f8fad5b-d9cb-469f-a165-70867728950e', status: 'queued', run_id: '0f8fad5b-d9cb-469f-a165-70867728950e' } }) },
    { 'x-request-id': '7c9e6679-7425-40de-944b-e07fc1f90ae7', date: 'Mon, 23 Nov 2026 23:18:36 GMT' },
  );

  it('finds two answers alike when only ids, ports, dates and key order differ', () => {
    expect(answerDifferences(answer(), other)).to.deep.equal([]);
  });

  it('names a different status, a missing or extra header, a different stable header value, a different body', () => {
    const { location: _l, ...withoutLocation } = answer().headers;
    expect(answerDifferences(answer(), { ...other, headers: withoutLocation })).to.deep.equal(['lacks header location']);
    expect(answerDifferences(answer(), answer({}, { 'cache-control': 'no-store' }))).to.deep.equal(['sends header the project does not: cache-control']);
    expect(answerDifferences(answer(), answer({}, { 'content-type': 'application/json' }))).to.deep.equal([
      'content-type: "application/json", the project\'s "application/json; charset=utf-8"',
    ]);
    expect(answerDifferences(answer(), answer({ status: 200 }))).to.deep.equal(['status 200, the project\'s 202']);
    const numeric = answer({ body: JSON.stringify({ data: { run_id: 1, status: 'queued', status_url: 'x' } }) });
    expect(answerDifferences(answer(), numeric)).to.have.length(1);
    expect(answerDifferences(answer(), numeric)[0]).to.match(/^body /u);
  });
});

describe('cpuprofile analyser', () => {
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9, columnNumber: 0 });
  // root → handler (koa) → parse (ajv); idle beside. Deltas in µs; sample i is charged
  // the delta of sample i + 1.
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 4] },
      { id: 2, callFrame: frame('handler', 'file:///x/node_modules/koa/lib/application.js'), children: [3] },
      { id: 3, callFrame: frame('parse', 'file:///x/node_modules/.pnpm/ajv@8/node_modules/ajv/dist/core.js') },
      { id: 4, callFrame: frame('(idle)', '') },
    ],
    startTime: 1_000,
    endTime: 1_600,
    samples: [2, 3, 3, 4, 2],
    timeDeltas: [0, 100, 200, 100, 100],
  };

  it('sums self time per function and per package, idle apart', () => {
    const summary = summarize(profile);
    expect(summary.idleMs).to.be.closeTo(0.1, 1e-9);
    expect(summary.functions[0]).to.include({ key: 'parse ajv/dist/core.js:10' });
    expect(summary.functions[0]?.selfMs).to.be.closeTo(0.3, 1e-9);
    expect(summary.packages.map((p) => p.key)).to.deep.equal(['ajv', 'koa']);
    expect(summary.busyMs).to.be.closeTo(0.3 + 0.1 + 0.12, 1e-9);
  });

  it('keeps only the samples inside a window', () => {
    const summary = summarize(profile, { fromUs: 1_250, toUs: 1_450 });
    expect(summary.functions.map((f) => f.key)).to.deep.equal(['parse ajv/dist/core.js:10']);
    expect(summary.idleMs).to.be.closeTo(0.1, 1e-9);
  });
});
