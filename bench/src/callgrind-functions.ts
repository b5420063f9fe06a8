/**
 * Instructions a request by function, from the dumps `pnpm bench:instructions --keep DIR`
 * leaves: `node bench/dist/callgrind-functions.js DIR [--requests N] [--top N]
 * [--servers project,koa-peer] [--event Ir]`. Prints a Markdown table of the functions whose self cost
 * differs most between the first server and the second (or the first's largest alone),
 * instructions a request each (or another callgrind event's count: `--event I1mr` with
 * dumps of `pnpm bench:instructions --cache-sim`).
 *
 * callgrind knows the node binary's and libraries' symbols, but names JIT-compiled
 * JavaScript only by address (`0x000000000d4efc80`); Node's `--perf-basic-prof` map
 * (`<server>.perf.map`: `start size name` per line, hexadecimal) names the function whose
 * range holds that address. Self cost comes from `callgrind_annotate --inclusive=no`,
 * valgrind's own reader of its format.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';

const execFileAsync = promisify(execFile);

interface MapEntry {
  readonly start: bigint;
  readonly end: bigint;
  readonly name: string;
}

/** The perf map's entries, sorted by start address. */
function readPerfMap(file: string): MapEntry[] {
  if (!existsSync(file)) return [];
  const entries: MapEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/u.exec(line);
    if (match === null) continue;
    const start = BigInt(`0x${match[1]}`);
    entries.push({ start, end: start + BigInt(`0x${match[2]}`), name: match[3] as string });
  }
  return entries.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

function nameAt(entries: readonly MapEntry[], address: bigint): string | undefined {
  let lo = 0;
  let hi = entries.length - 1;
  let found: MapEntry | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const entry = entries[mid] as MapEntry;
    if (entry.start <= address) {
      found = entry;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  // A code object moved or freed since may leave a later entry covering the address; the
  // newest entry that starts at or before it and still covers it is taken.
  return found !== undefined && address < found.end ? found.name : undefined;
}

/**
 * Self cost by function name (JIT addresses named through the perf map), for a whole dump:
 * of `event`, instructions (`Ir`) by default; a dump of `--cache-sim=yes --branch-sim=yes`
 * also has `I1mr` (first-level instruction cache misses), `D1mr`, `D1mw`, `Bcm`
 * (mispredicted conditional branches), `Bim` (mispredicted indirect branches) and others.
 */
export async function selfCostByFunction(dir: string, server: string, event = 'Ir'): Promise<Map<string, number>> {
  // `--show`: one event a line, also for a dump of `--cache-sim=yes --branch-sim=yes` (13 events).
  const { stdout } = await execFileAsync('callgrind_annotate', ['--inclusive=no', '--threshold=100', `--show=${event}`, join(dir, `${server}.callgrind.out`)], { maxBuffer: 256 * 1024 * 1024, timeout: 120_000 });
  const map = readPerfMap(join(dir, `${server}.perf.map`));
  const costs = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    const match = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$/u.exec(line);
    if (match === null || (match[2] as string).includes('PROGRAM TOTALS')) continue;
    const cost = Number((match[1] as string).replaceAll(',', ''));
    // Numbered variants of one symbol (a recursion level: `'2`) are one function.
    let name = (match[2] as string).replace(/^\?\?\?:/u, '').replace(/ \[[^\]]*\]$/u, '').replace(/'\d+$/u, '');
    const address = /^0x([0-9a-f]+)$/u.exec(name);
    if (address !== null) name = nameAt(map, BigInt(`0x${address[1]}`)) ?? 'JIT code not in the perf map';
    // V8's tier markers (`*` optimised, `~` interpreted, …) name one function too.
    name = name.replace(/^JS:[*~^+]?/u, 'JS:');
    costs.set(name, (costs.get(name) ?? 0) + cost);
  }
  return costs;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--') argv.shift();
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { requests: { type: 'string' }, top: { type: 'string' }, servers: { type: 'string' }, event: { type: 'string' } }, strict: true });
  const dir = positionals[0];
  if (dir === undefined) throw new Error('usage: callgrind-functions DIR [--requests N] [--top N] [--servers project,koa-peer] [--event Ir]');
  const event = values.event ?? 'Ir';
  const requests = Number(values.requests ?? 10_000);
  const top = Number(values.top ?? 40);
  const servers = (values.servers ?? 'project,koa-peer').split(',').map((s) => s.trim());
  const tables = await Promise.all(servers.map((s) => (existsSync(join(dir, `${s}.callgrind.out`)) ? selfCostByFunction(dir, s, event) : Promise.resolve(undefined))));
  const [first, second] = tables;
  if (first === undefined) throw new Error(`no ${servers[0]}.callgrind.out in ${dir}`);
  const names = new Set([...first.keys(), ...(second?.keys() ?? [])]);
  const rows = [...names].map((name) => {
    const a = (first.get(name) ?? 0) / requests;
    const b = second === undefined ? 0 : (second.get(name) ?? 0) / requests;
    return { name, a, b, diff: a - b };
  });
  rows.sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff));
  const sum = (t: Map<string, number> | undefined) => (t === undefined ? 0 : [...t.values()].reduce((s, v) => s + v, 0) / requests);
  const lines = [`| function | ${servers[0]} | ${second === undefined ? '' : `${servers[1]} | difference `}|`, `|---|---:|${second === undefined ? '' : '---:|---:|'}`];
  lines.push(`| (all) | ${Math.round(sum(first))} | ${second === undefined ? '' : `${Math.round(sum(second))} | ${Math.round(sum(first) - sum(second))} `}|`);
  for (const row of rows.slice(0, top)) {
    lines.push(`| ${row.name.replaceAll('|', '\\|').slice(0, 140)} | ${Math.round(row.a)} | ${second === undefined ? '' : `${Math.round(row.b)} | ${Math.round(row.diff)} `}|`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`callgrind-functions: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
