// Keeps the benchmark from rotting: every scenario runs for about a second (0.1 s warm-up,
// 0.5 s measured, plus its server's start) and must give
// a row with a throughput, or a printed reason why it cannot run yet. No figure is
// asserted: the benchmark itself (bench/src/run.ts) is never part of the test suite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { isScenario, runBench, SCENARIOS, type BenchReport } from '../src/bench.js';
import { summarize, type CpuProfile } from '../src/cpuprofile.js';
import { checkTargets, formatReport } from '../src/report.js';

describe('bench smoke: each scenario for about a second', function () {
  this.timeout(90_000);
  let report: BenchReport;
  let printed: string;
  let profileDir: string;

  before(async () => {
    profileDir = mkdtempSync(join(tmpdir(), 'svc-bench-smoke-'));
    report = await runBench({ durationSeconds: 0.5, warmupSeconds: 0.1, connections: 10, idleSettleMs: 100, profile: { dir: profileDir, only: [] } });
    printed = formatReport(report);
  });

  after(() => rmSync(profileDir, { recursive: true, force: true }));

  for (const scenario of Object.keys(SCENARIOS)) {
    it(`${scenario}: a row with req/s > 0, or a printed skip reason`, () => {
      const row = report.rows.find((r) => r.scenario === scenario);
      expect(row, `no row for ${scenario}`).to.not.equal(undefined);
      if (row?.skip !== undefined) {
        expect(row.skip).to.match(/\S/u);
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

  it('measures the API server process: spawn to listening and RSS', () => {
    const server = report.servers.find((s) => s.scenario === 'run-memory');
    expect(server?.startMs).to.be.greaterThan(0);
    expect(server?.rssIdleBytes).to.be.greaterThan(10 * 1024 * 1024);
    expect(server?.rssAfterBytes).to.be.greaterThan(0);
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
