/** Alternated rounds: the order of the loads, the medians, and the targets' verdicts read from them. */
import { expect } from 'chai';
import { alternate, summarizeRounds, type AlternatedRound } from '../src/alternated.js';
import type { BenchReport } from '../src/bench.js';
import type { LoadResult } from '../src/load.js';
import { checkTargets } from '../src/report.js';

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
});
