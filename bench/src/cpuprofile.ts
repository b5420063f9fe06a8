/**
 * Sums the self time of a V8 `.cpuprofile` (written by `node --cpu-prof`) per function
 * and per package. As a command: `node bench/dist/cpuprofile.js FILE [--top N]`.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './paths.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number };
  readonly children?: readonly number[];
}

/** The parts of a `.cpuprofile` the analyser reads (Chrome DevTools protocol `Profile`). */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  /** Node id of each sample. */
  readonly samples: readonly number[];
  /** Microseconds between a sample and the one before it. */
  readonly timeDeltas: readonly number[];
}

/** Self time summed over one key (a function or a package). */
export interface SelfTime {
  readonly key: string;
  /** Milliseconds. */
  readonly selfMs: number;
  /** Share of the busy time (everything but `(idle)`), 0..1. */
  readonly share: number;
}

/** The analysis of one profile. */
export interface ProfileSummary {
  /** Milliseconds the thread was not idle. */
  readonly busyMs: number;
  /** Milliseconds idle (`(idle)`). */
  readonly idleMs: number;
  /** Per function (`name file:line`), largest first. */
  readonly functions: readonly SelfTime[];
  /** Per package or area (`koa`, `@svc/core`, `node:internal`, `(gc)`, ...), largest first. */
  readonly packages: readonly SelfTime[];
}

function pathOf(url: string): string {
  return url.startsWith('file://') ? fileURLToPath(url) : url;
}

/**
 * The package or area a script belongs to: the package under the last `node_modules`,
 * `@svc/<dir>` for workspace sources, `node:internal` for Node's own scripts, and V8's
 * pseudo-frames (`(garbage collector)`, `(program)`) as themselves.
 */
export function packageOf(functionName: string, url: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const path = pathOf(url);
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = path.slice(nm + '/node_modules/'.length).split('/');
    const [first, second] = parts;
    return first?.startsWith('@') ? `${first}/${second ?? ''}` : (first ?? path);
  }
  const rel = relative(REPO_ROOT, path);
  const match = /^(packages|examples|bench)\/([^/]+)\//u.exec(rel);
  if (match !== null) return match[1] === 'bench' ? '@svc/bench' : `@svc/${match[2] ?? ''}`;
  return rel.startsWith('..') ? path : rel;
}

function locationOf(url: string, line: number): string {
  if (url === '') return '';
  const path = pathOf(url);
  const nm = path.lastIndexOf('/node_modules/');
  const shown = nm >= 0 ? path.slice(nm + '/node_modules/'.length) : path.startsWith('/') ? relative(REPO_ROOT, path) : path;
  return `${shown}:${line + 1}`;
}

function ranked(totals: Map<string, number>, busyUs: number): SelfTime[] {
  return [...totals.entries()]
    .map(([key, us]) => ({ key, selfMs: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }))
    .sort((a, b) => b.selfMs - a.selfMs);
}

/** A time window in the profile's clock (microseconds, like `startTime`). */
export interface ProfileWindow {
  readonly fromUs: number;
  readonly toUs: number;
}

/**
 * Self time per function and per package, of the samples inside `window` (absent: all,
 * start-up included). Each sample's node is charged the time until the next sample (the
 * last sample: the mean interval), as DevTools does.
 */
export function summarize(profile: CpuProfile, window?: ProfileWindow): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const n = profile.samples.length;
  const mean = n > 0 ? (profile.endTime - profile.startTime) / n : 0;
  let at = profile.startTime;
  for (let i = 0; i < n; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (window !== undefined && (at < window.fromUs || at > window.toUs)) continue;
    const id = profile.samples[i] ?? -1;
    const dt = i + 1 < n ? (profile.timeDeltas[i + 1] ?? 0) : mean;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt));
  }
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) continue;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    const key = [name, locationOf(frame.url, frame.lineNumber)].filter((s) => s !== '').join(' ');
    functions.set(key, (functions.get(key) ?? 0) + us);
    const pkg = packageOf(frame.functionName, frame.url);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  return { busyMs: busyUs / 1000, idleMs: idleUs / 1000, functions: ranked(functions, busyUs), packages: ranked(packages, busyUs) };
}

/** Reads and summarizes a `.cpuprofile` file (see {@link summarize}). */
export function summarizeFile(file: string, window?: ProfileWindow): ProfileSummary {
  return summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, window);
}

/** Markdown tables of the `top` largest self times per function and per package. */
export function formatSummary(summary: ProfileSummary, top = 15): string {
  const pct = (s: number) => `${(s * 100).toFixed(1)} %`;
  const lines = [
    `Busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms.`,
    '',
    '| self ms | share of busy | function |',
    '|---:|---:|---|',
    ...summary.functions.slice(0, top).map((f) => `| ${f.selfMs.toFixed(0)} | ${pct(f.share)} | \`${f.key}\` |`),
    '',
    '| self ms | share of busy | package |',
    '|---:|---:|---|',
    ...summary.packages.slice(0, top).map((p) => `| ${p.selfMs.toFixed(0)} | ${pct(p.share)} | ${p.key} |`),
  ];
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '15' } }, allowPositionals: true });
  if (positionals.length === 0) {
    process.stderr.write('usage: cpuprofile FILE.cpuprofile [--top N]\n');
    process.exit(2);
  }
  for (const file of positionals) process.stdout.write(`## ${file}\n\n${formatSummary(summarizeFile(file), Number(values.top))}\n\n`);
}
