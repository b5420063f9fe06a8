/**
 * The benchmark: `pnpm bench` (built), or from source
 * `node --conditions=source --import tsx bench/src/run.ts [flags]`.
 *
 * Flags: `--duration S` (measured seconds per scenario, default 10), `--warmup S`
 * (default 3), `--connections N` (default 50), `--only NAME` (repeatable or
 * comma-separated; the bare Koa baseline always runs), `--server dist|source` (where
 * the API server's code comes from; default: the bench's own), `--profile DIR` (also
 * profile bare Koa, the index, run start in memory and on Redis, and insert with
 * `--cpu-prof`, in an extra pass), `--json FILE` (the raw figures); for the upload
 * scenario (`--only upload-local` runs it alone, without the Koa baseline): `--upload-mib N`
 * (the file's size, default 500), `--upload-rounds N` (default 3), `--upload-dir DIR`
 * (where the file, the server's storage and the copies go; default the OS's temporary
 * directory, which must then be on a disk); `--rounds N` (alternated rounds of the index
 * and bare Koa, of the run start in memory and on Redis and their Koa peers, and of the
 * insert one request at a time and its Koa peer, both servers up at once and started
 * again every 2 rounds; default 6, 0 for none) and `--round-seconds S` (each round's load, default 3).
 * Prints a Markdown report on stdout, progress on stderr.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_UPLOAD_BYTES, isScenario, runBench, SCENARIOS, type ScenarioName } from './bench.js';
import type { CodeOrigin } from './paths.js';
import { formatReport } from './report.js';
import { MIB } from './upload.js';

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${value}`);
  return n;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // `pnpm bench -- --flag` hands the `--` on.
  if (argv[0] === '--') argv.shift();
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string', multiple: true },
      server: { type: 'string' },
      profile: { type: 'string' },
      json: { type: 'string' },
      'upload-mib': { type: 'string' },
      'upload-rounds': { type: 'string' },
      'upload-dir': { type: 'string' },
      rounds: { type: 'string' },
      'round-seconds': { type: 'string' },
    },
    strict: true,
  });
  const only = values.only?.flatMap((o) => o.split(',')).map((o) => o.trim());
  for (const name of only ?? []) {
    if (!isScenario(name)) throw new Error(`unknown scenario ${name}; scenarios: ${Object.keys(SCENARIOS).join(', ')}`);
  }
  if (values.server !== undefined && values.server !== 'dist' && values.server !== 'source') throw new Error('--server must be dist or source');
  const warmup = values.warmup === '0' ? 0 : positive('warmup', values.warmup, 3);
  const uploadBytes = Math.round(positive('upload-mib', values['upload-mib'], DEFAULT_UPLOAD_BYTES / MIB) * MIB);
  // 5 GiB: the largest files.max_bytes the server takes.
  if (uploadBytes > 5 * 1024 * MIB) throw new Error('--upload-mib must be at most 5120');
  const report = await runBench({
    durationSeconds: positive('duration', values.duration, 10),
    warmupSeconds: warmup,
    connections: Math.round(positive('connections', values.connections, 50)),
    ...(only !== undefined ? { only: only as ScenarioName[] } : {}),
    ...(values.server !== undefined ? { serverOrigin: values.server as CodeOrigin } : {}),
    ...(values.profile !== undefined ? { profile: { dir: values.profile } } : {}),
    upload: {
      sizeBytes: uploadBytes,
      rounds: Math.round(positive('upload-rounds', values['upload-rounds'], 3)),
      ...(values['upload-dir'] !== undefined ? { dir: values['upload-dir'] } : {}),
    },
    alternated: {
      rounds: values.rounds === '0' ? 0 : Math.round(positive('rounds', values.rounds, 6)),
      roundSeconds: positive('round-seconds', values['round-seconds'], 3),
    },
    log: (line) => process.stderr.write(`${line}\n`),
  });
  if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(report, null, 2));
  process.stdout.write(`${formatReport(report)}\n`);
}

main().then(
  // autocannon and the clients leave nothing open, but a stray handle must not keep a
  // finished benchmark alive.
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
