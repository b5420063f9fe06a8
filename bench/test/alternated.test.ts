/** Alternated rounds: the order of the loads, the medians, and the targets' verdicts read from them. */
import { expect } from 'chai';
import { alternate, alternateLatency, roundsPerProcessPair, summarizeLatencyRounds, summarizeRounds, type AlternatedRound } from '../src/alternated.js';
import type { BenchReport } from '../src/bench.js';
import type { LatencySample, LoadResult } from '../src/load.js';
import { checkTargets, formatLatencyRounds } from '../src/report.js';

function load(requestsPerSecond: number, serverCpuUsPerRequest?: number): LoadResult {
  return { requestsPerSecond, p50Ms: 1, p99Ms: 2, non2xx: 0, errors: 0, served: requestsPerSecond, window: { fromUs: 0, toUs: 1 }, ...(serverCpuUsPerRequest !== undefined ? { serverCpuUsPerRequest } : {}) };
}

const round = (project: LoadResult, other: LoadResult, projectFirst = true): AlternatedRound => ({ project, other, projectFirst });

/** A report whose table reads `tableRatio` for the index (CPU agreeing), with `alternated` rounds. */
function reportWith(tableRatio: number, rounds: readonly AlternatedRound[] | undefined): BenchReport {
  const koa = load(30_000, 30);
  const index = load(30_000 * tableRatio, 30 / tableRatio);
  return {
    shape: { connections: 50, warmupSeconds: 3, durationSeconds: 10 },
    serverOrigin: 'dist',
    machine: 'test',
    loadAverage: { before: 0, after: 0 },
    rows: [
      { scenario: 'koa', label: 'bare Koa', result: koa, ratio: 1 },
      { scenario: 'index', label: 'index', result: index, ratio: tableRatio },
    ],
    servers: [],
    ...(rounds !== undefined ? { alternated: [summarizeRounds('index-koa', rounds)] } : {}),
  };
}

describe('bench alternated rounds', function () {
  it('loads the project first in even rounds and the other first in odd ones', async () => {
    const order: string[] = [];
    const pair = await alternate(
      'index-koa',
      4,
      async () => (order.push('project'), load(10, 10)),
      async () => (order.push('other'), load(20, 5)),
    );
    expect(order).to.deep.equal(['project', 'other', 'other', 'project', 'project', 'other', 'other', 'project']);
    expect(pair.rounds.map((r) => r.projectFirst)).to.deep.equal([true, false, true, false]);
    expect(pair.rpsRatio).to.equal(0.5);
    expect(pair.cpuRatio).to.equal(0.5);
  });

  it('keeps the median of the per-round ratios: one spoiled round does not move it', () => {
    const pair = summarizeRounds('run-memory-peer', [
      round(load(9_000, 100), load(10_000, 90)),
      round(load(9_500, 100), load(10_000, 95)),
      round(load(2_000, 400), load(10_000, 90)),
    ]);
    expect(pair.rpsRatio).to.equal(0.9);
    expect(pair.cpuRatio).to.equal(0.9);
  });

  it('has no CPU ratio when a round did not read the CPU', () => {
    expect(summarizeRounds('index-koa', [round(load(10, 10), load(10)), round(load(10, 10), load(10, 10))]).cpuRatio).to.equal(undefined);
  });

  it('decides the index target by the rounds when they ran, by the table otherwise', () => {
    const met = (report: BenchReport) => checkTargets(report).find((c) => c.target === 'index ≥ 0.9× bare Koa')?.met;
    const steady = [round(load(29_000, 31), load(30_000, 30)), round(load(28_000, 32), load(30_000, 30), false)];
    const slow = [round(load(24_000, 38), load(30_000, 30)), round(load(25_000, 37), load(30_000, 30), false)];
    expect(met(reportWith(0.8, steady))).to.equal(true);
    expect(met(reportWith(1.1, slow))).to.equal(false);
    expect(met(reportWith(0.95, undefined))).to.equal(true);
    expect(met(reportWith(0.85, undefined))).to.equal(false);
    expect(checkTargets(reportWith(0.8, steady))[0]?.measured).to.match(/alternated rounds: median 0\.95× by req\/s, 0\.95× by CPU a request \(2 rounds\)/u);
  });

  const latency = (p50Ms: number, serverCpuUsPerCall?: number): LatencySample => ({ count: 100, p50Ms, p99Ms: p50Ms * 2, meanMs: p50Ms, ...(serverCpuUsPerCall !== undefined ? { serverCpuUsPerCall } : {}) });

  it('measures the insert latency in turn, and keeps the median p50 and CPU ratios (project ÷ peer)', async () => {
    const order: string[] = [];
    const pair = await alternateLatency(
      3,
      async () => (order.push('project'), latency(1.1, 700)),
      async () => (order.push('other'), latency(1.0, 700)),
    );
    expect(order).to.deep.equal(['project', 'other', 'other', 'project', 'project', 'other']);
    expect(pair.p50Ratio).to.be.closeTo(1.1, 1e-9);
    expect(pair.cpuRatio).to.equal(1);
    const spoiled = summarizeLatencyRounds([
      { project: latency(1.0, 600), other: latency(1.0, 600), projectFirst: true },
      { project: latency(3.0, 1800), other: latency(1.0, 600), projectFirst: false },
      { project: latency(1.05, 630), other: latency(1.0, 600), projectFirst: true },
    ]);
    expect(spoiled.p50Ratio).to.be.closeTo(1.05, 1e-9);
    expect(summarizeLatencyRounds([{ project: latency(1), other: latency(1, 5), projectFirst: true }]).cpuRatio).to.equal(undefined);
    expect(formatLatencyRounds(spoiled)).to.match(/\| median \| \| \| \| \*\*1\.05×\*\* \| \| \*\*1\.05×\*\* \|/u);
  });

  it('decides the insert target by the latency rounds when they ran, by the one measure of each otherwise', () => {
    const insertMet = (report: BenchReport) => checkTargets(report).find((c) => c.target.startsWith('insert p50'))?.met;
    const base: BenchReport = {
      ...reportWith(1, undefined),
      rows: [
        { scenario: 'insert-sqlserver', label: 'insert', result: load(1000, 600) },
        { scenario: 'peer-koa-insert', label: 'peer', result: load(1000, 600) },
      ],
      insertLatency: { api: latency(1.4, 900), apiRunStart: latency(0.6), rawTedious: latency(0.5) },
      peerInsertLatency: latency(1.0, 700),
    };
    expect(insertMet(base)).to.equal(false);
    const steady = summarizeLatencyRounds([
      { project: latency(1.02, 650), other: latency(1.0, 640), projectFirst: true },
      { project: latency(1.05, 660), other: latency(1.0, 650), projectFirst: false },
    ]);
    expect(insertMet({ ...base, insertLatencyRounds: steady })).to.equal(true);
    const slow = summarizeLatencyRounds([{ project: latency(1.2), other: latency(1.0), projectFirst: true }]);
    expect(insertMet({ ...base, peerInsertLatency: latency(1.4), insertLatencyRounds: slow })).to.equal(false);
    expect(checkTargets({ ...base, insertLatencyRounds: steady }).find((c) => c.target.startsWith('insert p50'))?.measured).to.match(/alternated rounds: median 1\.04× by p50 \(2 rounds\)/u);
  });

  it('splits the rounds into pairs of processes of 2 rounds each (one in each order)', () => {
    expect(roundsPerProcessPair(6)).to.deep.equal([2, 2, 2]);
    expect(roundsPerProcessPair(5)).to.deep.equal([2, 2, 1]);
    expect(roundsPerProcessPair(1)).to.deep.equal([1]);
    expect(roundsPerProcessPair(0)).to.deep.equal([]);
  });
});
