/**
 * Alternated rounds: two servers up at once, loaded in turn, a short load each, the order
 * swapped every round (A B, B A, A B, …), the ratio taken per round and its median kept.
 *
 * Why besides the table's one long load per scenario: on this 2-core virtual machine the
 * same build's ratio to bare Koa read 1.15× and 0.43× in two `pnpm bench` runs four
 * minutes apart (2026-11-28, bench/BENCHMARKS.md): the machine's speed drifts over
 * minutes, and scenarios measured a minute apart see different machines. Rounds seconds
 * apart, in both orders, see the same one; the median drops a round a hiccup spoiled.
 * Both servers are started again every {@link ROUNDS_PER_PROCESS_PAIR} rounds: a pair of
 * processes keeps its own ratio, which differs from the next pair's.
 */
import type { LatencySample, LoadResult } from './load.js';
import { median } from './upload.js';

/** The pairs measured in alternated rounds: the project's scenario and what the target compares it with. */
export const ALTERNATED_PAIRS = {
  'index-koa': 'index ÷ bare Koa',
  'run-memory-peer': 'run start in memory ÷ Koa peer',
  'run-redis-peer': 'run start on Redis ÷ Koa Redis peer',
} as const;

/** Name of an alternated pair. */
export type AlternatedPairName = keyof typeof ALTERNATED_PAIRS;

/** One round: both loads, the project's and the other server's. */
export interface AlternatedRound {
  readonly project: LoadResult;
  readonly other: LoadResult;
  /** Whether the project was loaded first in this round. */
  readonly projectFirst: boolean;
}

/** A pair's rounds and their medians. */
export interface AlternatedPair {
  readonly pair: AlternatedPairName;
  readonly rounds: readonly AlternatedRound[];
  /** Median over the rounds of the project's req/s ÷ the other's (above 1: the project serves more). */
  readonly rpsRatio: number;
  /**
   * Median over the rounds of the other's CPU a request ÷ the project's (above 1: the
   * project spends less); absent when a round's CPU was not read.
   */
  readonly cpuRatio?: number;
}

/** The medians of `rounds` ({@link AlternatedPair}). */
export function summarizeRounds(pair: AlternatedPairName, rounds: readonly AlternatedRound[]): AlternatedPair {
  const rps = rounds.map((r) => (r.other.requestsPerSecond > 0 ? r.project.requestsPerSecond / r.other.requestsPerSecond : Number.NaN));
  const cpu = rounds.map((r) =>
    r.project.serverCpuUsPerRequest !== undefined && r.other.serverCpuUsPerRequest !== undefined && r.project.serverCpuUsPerRequest > 0
      ? r.other.serverCpuUsPerRequest / r.project.serverCpuUsPerRequest
      : Number.NaN,
  );
  const cpuRatio = cpu.some((c) => Number.isNaN(c)) ? undefined : median(cpu);
  return { pair, rounds, rpsRatio: median(rps), ...(cpuRatio !== undefined ? { cpuRatio } : {}) };
}

/**
 * Rounds measured on one pair of server processes before both are started again: 2 (one
 * in each order). Each process's speed is its own: two full `pnpm bench` runs of the same
 * code read the run start in memory at 0.90–0.95× and 0.80–0.86× its Koa peer, round after
 * round within each run (2026-11-28, bench/BENCHMARKS.md), so the median must span
 * several pairs of processes, not one.
 */
export const ROUNDS_PER_PROCESS_PAIR = 2;

/** `rounds` split into the rounds of each pair of processes: 6 → [2, 2, 2], 5 → [2, 2, 1]. */
export function roundsPerProcessPair(rounds: number): number[] {
  const out: number[] = [];
  for (let left = rounds; left > 0; left -= ROUNDS_PER_PROCESS_PAIR) out.push(Math.min(ROUNDS_PER_PROCESS_PAIR, left));
  return out;
}

/** Runs `project` and `other` `rounds` times, the project first in even rounds, the other first in odd ones. */
async function inTurn<T>(rounds: number, project: () => Promise<T>, other: () => Promise<T>): Promise<{ project: T; other: T; projectFirst: boolean }[]> {
  const done: { project: T; other: T; projectFirst: boolean }[] = [];
  for (let i = 0; i < rounds; i++) {
    const projectFirst = i % 2 === 0;
    if (projectFirst) {
      const p = await project();
      done.push({ project: p, other: await other(), projectFirst });
    } else {
      const o = await other();
      done.push({ project: await project(), other: o, projectFirst });
    }
  }
  return done;
}

/**
 * Loads `project` and `other` (each a function that runs one load) `rounds` times,
 * alternating which goes first, and returns the rounds' medians.
 */
export async function alternate(pair: AlternatedPairName, rounds: number, project: () => Promise<LoadResult>, other: () => Promise<LoadResult>): Promise<AlternatedPair> {
  return summarizeRounds(pair, await inTurn(rounds, project, other));
}

/** One round of the insert's latency: each server's insert one request at a time, for the same time. */
export interface LatencyRound {
  readonly project: LatencySample;
  readonly other: LatencySample;
  readonly projectFirst: boolean;
}

/**
 * The insert's p50 latency at concurrency 1, API server ÷ Koa insert peer, in alternated
 * rounds: a latency drifts with the machine as a throughput does (the same build read
 * 1.38× and 1.00× in two runs an hour apart, 2026-11-28, bench/BENCHMARKS.md).
 */
export interface LatencyPair {
  readonly rounds: readonly LatencyRound[];
  /** Median over the rounds of the project's p50 ÷ the other's (below 1: the project answers sooner). */
  readonly p50Ratio: number;
  /** Median over the rounds of the project's server CPU a request ÷ the other's (below 1: the project spends less); absent when a round's CPU was not read. */
  readonly cpuRatio?: number;
}

/** The medians of latency `rounds` ({@link LatencyPair}). */
export function summarizeLatencyRounds(rounds: readonly LatencyRound[]): LatencyPair {
  const p50 = rounds.map((r) => (r.other.p50Ms > 0 ? r.project.p50Ms / r.other.p50Ms : Number.NaN));
  const cpu = rounds.map((r) =>
    r.project.serverCpuUsPerCall !== undefined && r.other.serverCpuUsPerCall !== undefined && r.other.serverCpuUsPerCall > 0 ? r.project.serverCpuUsPerCall / r.other.serverCpuUsPerCall : Number.NaN,
  );
  const cpuRatio = cpu.some((c) => Number.isNaN(c)) ? undefined : median(cpu);
  return { rounds, p50Ratio: median(p50), ...(cpuRatio !== undefined ? { cpuRatio } : {}) };
}

/** Measures `project` and `other` (each one sequential measure) `rounds` times in turn, and returns the medians. */
export async function alternateLatency(rounds: number, project: () => Promise<LatencySample>, other: () => Promise<LatencySample>): Promise<LatencyPair> {
  return summarizeLatencyRounds(await inTurn(rounds, project, other));
}
