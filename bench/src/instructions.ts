/**
 * What a request costs in work rather than time: instructions a request (valgrind's
 * callgrind), promises a request (async_hooks) and bytes the heap allocated a request (V8's
 * `--trace-gc-nvp`, `children/count-allocation.ts`), for the API server's run start in
 * memory and the same-work Koa and Fastify peers, and for its index (`GET /api/v1`), bare
 * Koa and the index's same-work peer, and for its row insert (`POST .../records` into a
 * scripted TDS server) and the Koa insert peer. `pnpm bench:instructions`, or
 * `node bench/dist/instructions.js [--warmup N] [--requests N] [--connections N]
 * [--only project,koa-peer,fastify-peer,index,koa,koa-index-peer,insert,koa-insert-peer] [--keep DIR]
 * [--cache-sim]`; prints Markdown on stdout, progress on stderr. `--keep DIR` keeps each
 * server's dump and JIT map for `bench/src/callgrind-functions.ts` (instructions by
 * function; with `--cache-sim`, simulated cache misses and mispredicted branches too).
 *
 * Why besides `pnpm bench`: a req/s or CPU µs ratio on a 2-core machine moves by ±8 %
 * between two runs of the same code, more than most single changes to the request path
 * are worth; an instruction count of the same code over the same requests repeats within
 * about ±0.3 % on a quiet machine (bench/BENCHMARKS.md), so an A/B of one change reads
 * here. Not on a busy one: the API server's timers (its metrics' event-loop sampling and
 * the like) work per second, not per request, and a loaded machine slows the instrumented
 * server, so they weigh on more of its requests (312k instead of 297k a run start with a
 * test suite on the other core; the peers, without timers, did not move). Instructions are not time: cache misses, the kernel's share and the batching of
 * many connections per event-loop turn are not in them (bench/BENCHMARKS.md compares
 * both). Each server runs under `valgrind --tool=callgrind --instr-atstart=no`: it starts
 * and warms up uninstrumented (about 30× faster than instrumented), then `callgrind_control
 * -i on` counts exactly the measured requests, every thread included.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { apiConfig, benchAccount, DB_PASSWORD_ENV, insertRequest, peerConfig, runRequest, type BenchAccount } from './api-config.js';
import { freePort, startServerChild, type ServerChild } from './child-process.js';
import { TDS_LOGIN } from './fixtures.js';
import { startTdsServer } from './tds.js';
import { keptAliveClient, type LoadRequest } from './load.js';
import { apiServerMain, benchChild, FROM_SOURCE, REPO_ROOT, type NodeCommand } from './paths.js';

const execFileAsync = promisify(execFile);

/**
 * The servers measured, in two groups, each answering its own request: the run start in
 * memory (`project` and its same-work peers: `POST /api/v1/agents/{id}/run` → 202), and
 * the index (`index`, bare Koa and the index's same-work peer: `GET /api/v1` → 200).
 */
export const INSTRUCTION_SERVERS = {
  project: 'POST /api/v1/agents/{id}/run, in memory, log silent',
  'koa-peer': 'same-work peer: Koa run start, in memory',
  'fastify-peer': 'same-work peer: Fastify run start, in memory',
  index: 'GET /api/v1 (index), log silent',
  koa: 'bare Koa (baseline)',
  'koa-index-peer': "same-work peer: bare Koa answering the index's bytes and headers",
  insert: 'POST /api/v1/connections/{id}/records, scripted TDS server, log silent',
  'koa-insert-peer': 'same-work peer: Koa insert, tedious on a tarn pool',
} as const;

/** Name of a measured server (`--only`). */
export type InstructionServer = keyof typeof INSTRUCTION_SERVERS;

/** The server of each group the others' ratios are taken against. */
type GroupBase = 'project' | 'index' | 'insert';

/** The group of each server: the project's server it is compared with. */
const BASE_OF: Readonly<Record<InstructionServer, GroupBase>> = {
  project: 'project',
  'koa-peer': 'project',
  'fastify-peer': 'project',
  index: 'index',
  koa: 'index',
  'koa-index-peer': 'index',
  insert: 'insert',
  'koa-insert-peer': 'insert',
};

/** Options of {@link measureInstructions}. */
export interface InstructionOptions {
  /** Requests sent before counting (the JIT's tiers settle): default 10 000. */
  readonly warmupRequests?: number;
  /**
   * Requests counted: default 10 000. Fewer let one full garbage collection of the growing
   * heap (the runs are kept: no worker) weigh on too few requests: 2000 counted once gave
   * 590k and 539k instructions a request (project, Koa peer) where 10 000 gave 385k and 323k.
   */
  readonly requests?: number;
  /** Connections sending at once, each one request at a time: default 1. */
  readonly connections?: number;
  /** Default: all of {@link INSTRUCTION_SERVERS}. */
  readonly only?: readonly InstructionServer[];
  /** Progress lines; default none. */
  readonly log?: (line: string) => void;
  /**
   * A folder to keep each server's callgrind dump in, with Node's `--perf-basic-prof` map
   * of its JIT code (`<server>.callgrind.out`, `<server>.perf.map`), for
   * `bench/src/callgrind-functions.ts` to name the JavaScript functions; default none.
   */
  readonly keepDir?: string;
  /**
   * Also simulate the caches and branch predictors (`--cache-sim=yes --branch-sim=yes`,
   * about twice as slow): the kept dumps then count first-level and last-level cache misses
   * and mispredicted branches by function (`callgrind-functions.ts --event I1mr`).
   * Simulated on valgrind's model of this machine's caches, not counted by the CPU.
   */
  readonly cacheSim?: boolean;
}

/** One server's figures. */
export interface InstructionRow {
  readonly server: InstructionServer;
  /** Instructions executed a request (all threads), or why it could not be counted. */
  readonly instructionsPerRequest: number | { readonly skip: string };
  /** Promises created a request (a separate run, without valgrind). */
  readonly promisesPerRequest: number;
  /**
   * Bytes the heap allocated a request (a separate run, neither hooked nor under valgrind:
   * V8's `--trace-gc-nvp`, see {@link allocatedBytes}); `undefined` when fewer than two
   * collections fell among the counted requests (too few requests to tell).
   */
  readonly bytesAllocatedPerRequest: number | undefined;
}

/** What {@link measureInstructions} returns. */
export interface InstructionReport {
  readonly warmupRequests: number;
  readonly requests: number;
  readonly connections: number;
  readonly node: string;
  readonly rows: readonly InstructionRow[];
}

/** The request a server is measured on, and the status it must answer. */
interface Target extends LoadRequest {
  readonly status: number;
}

/** A server's command and its request. */
interface Measured {
  readonly command: NodeCommand;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly target: (port: number, account: BenchAccount) => Target;
}

const indexRequest = (port: number): Target => ({ url: `http://127.0.0.1:${port}/api/v1`, method: 'GET', status: 200 });

/** Where {@link indexAnswerFile} writes the index's answer in the work folder. */
const INDEX_ANSWER = 'index-answer.json';

/**
 * The command of one server and its request. The index's same-work peer serves the file
 * {@link indexAnswerFile} wrote in `work`.
 */
function serverOf(server: InstructionServer, account: BenchAccount, port: number, egressPort: number, work: string, sqlServerPort: number | undefined): Measured {
  const database = sqlServerPort !== undefined ? { sqlServerPort } : {};
  if (server === 'project' || server === 'index' || server === 'insert') {
    const configFile = join(work, `${server}.yaml`);
    writeFileSync(configFile, JSON.stringify(apiConfig({ account, port, egressPort, logLevel: 'silent', ...database })));
    const command = apiServerMain(FROM_SOURCE ? 'source' : 'dist');
    const env = { NODE_ENV: 'production', ...(sqlServerPort !== undefined ? { [DB_PASSWORD_ENV]: TDS_LOGIN.password } : {}) };
    return { command, args: ['--config', configFile], env, target: server === 'project' ? runStart : server === 'insert' ? insertRecord : indexRequest };
  }
  if (server === 'koa-insert-peer') {
    return { command: benchChild('peers/koa-insert'), args: [JSON.stringify(peerConfig({ account, port, egressPort: 0, logLevel: 'silent', ...database }))], env: {}, target: insertRecord };
  }
  if (server === 'koa' || server === 'koa-index-peer') {
    const args = server === 'koa' ? [String(port)] : [String(port), '--answer', join(work, INDEX_ANSWER)];
    return { command: benchChild('koa-server'), args, env: {}, target: indexRequest };
  }
  const child = server === 'koa-peer' ? 'peers/koa-run-memory' : 'peers/fastify-run-memory';
  return { command: benchChild(child), args: [JSON.stringify(peerConfig({ account, port, egressPort: 0, logLevel: 'silent' }))], env: {}, target: runStart };
}

function insertRecord(port: number, account: BenchAccount): Target {
  return { ...insertRequest(port, account), status: 201 };
}

function runStart(port: number, account: BenchAccount): Target {
  return { ...runRequest(port, account), status: 202 };
}

/**
 * Writes the index's answer (its body, and the headers `pnpm bench`'s index peer keeps:
 * `Content-Type`, `ETag`, `Cache-Control`) to `work`, for the index's same-work peer.
 */
async function indexAnswerFile(work: string): Promise<void> {
  await withServer('index', work, {}, async (_child, target) => {
    const client = keptAliveClient(target);
    try {
      const answer = await client.send();
      if (answer.status !== 200) throw new Error(`${target.url} answered ${answer.status}`);
      const headers = Object.fromEntries(['content-type', 'etag', 'cache-control'].flatMap((name) => (typeof answer.headers[name] === 'string' ? [[name, answer.headers[name]]] : [])));
      writeFileSync(join(work, INDEX_ANSWER), JSON.stringify({ body: answer.body, headers }));
    } finally {
      client.close();
    }
  });
}

type Client = ReturnType<typeof keptAliveClient>;

/**
 * `connections` kept-alive connections to `target`, for both the warm-up and the counted
 * requests: counted on connections of their own, the same run starts took 384k
 * instructions a request instead of 308k (and the Koa peer's 323k instead of 246k), a
 * cost of V8 and Node, not of the request path, that a load's long-lived connections do
 * not pay.
 */
function connect(target: LoadRequest, connections: number): Client[] {
  // 300 s: under callgrind a full garbage collection of a large heap takes tens of seconds.
  return Array.from({ length: connections }, () => keptAliveClient(target, 300_000));
}

/**
 * Sends `total` requests over `clients`, each one request at a time.
 * @throws on an answer other than `target.status`.
 */
async function send(target: Target, clients: readonly Client[], total: number): Promise<void> {
  let left = total;
  await Promise.all(
    clients.map(async (client) => {
      while (left > 0) {
        left -= 1;
        const answer = await client.send();
        if (answer.status !== target.status) throw new Error(`${target.url} answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      }
    }),
  );
}

/** Whether `valgrind` and `callgrind_control` can be run here; why not otherwise. */
async function callgrindMissing(): Promise<string | undefined> {
  try {
    await execFileAsync('valgrind', ['--version'], { timeout: 10_000 });
    await execFileAsync('callgrind_control', ['--version'], { timeout: 10_000 });
    return undefined;
  } catch {
    return 'valgrind (with callgrind_control) is not installed: apt-get install valgrind';
  }
}

/** The callgrind dump of `dir` with the largest `totals:` (the one `callgrind_control -d` wrote), if any. */
function largestDump(dir: string): { readonly name: string; readonly total: number } | undefined {
  let largest: { name: string; total: number } | undefined;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('callgrind.out')) continue;
    const match = /^totals: (\d+)/mu.exec(readFileSync(join(dir, name), 'utf8'));
    const total = Number(match?.[1] ?? 0);
    if (largest === undefined || total > largest.total) largest = { name, total };
  }
  return largest;
}

/** The `totals:` of the callgrind dumps in `dir` (the one `callgrind_control -d` wrote); 0 without one. */
export function callgrindTotal(dir: string): number {
  return largestDump(dir)?.total ?? 0;
}

/** Copies the largest callgrind dump of `dir` and the perf map of `pid` to `keepDir` (see {@link InstructionOptions.keepDir}). */
function keepDump(dir: string, keepDir: string, server: InstructionServer, pid: number): void {
  mkdirSync(keepDir, { recursive: true });
  const dump = largestDump(dir);
  if (dump !== undefined) copyFileSync(join(dir, dump.name), join(keepDir, `${server}.callgrind.out`));
  const map = `/tmp/perf-${pid}.map`;
  if (existsSync(map)) {
    copyFileSync(map, join(keepDir, `${server}.perf.map`));
    rmSync(map, { force: true });
  }
}

async function withServer<T>(server: InstructionServer, work: string, extra: { nodeFlags?: string[]; env?: Record<string, string>; wrapper?: string[]; stdoutFile?: string }, body: (child: ServerChild, target: Target) => Promise<T>): Promise<T> {
  const account = benchAccount();
  const port = await freePort();
  // The insert group writes to a scripted TDS server of its own, in its own process (not counted).
  const tds = BASE_OF[server] === 'insert' ? await startTdsServer() : undefined;
  if (tds !== undefined && 'skip' in tds) throw new Error(`${server}: ${tds.skip}`);
  let child: ServerChild | undefined;
  try {
    const { command, args, env, target } = serverOf(server, account, port, await freePort(), work, tds?.port);
    child = await startServerChild({
      command,
      args,
      port,
      env: { ...env, ...extra.env },
      ...(extra.nodeFlags !== undefined ? { nodeFlags: extra.nodeFlags } : {}),
      ...(extra.wrapper !== undefined ? { wrapper: extra.wrapper } : {}),
      ...(extra.stdoutFile !== undefined ? { stdoutFile: extra.stdoutFile } : {}),
      stderrFile: join(work, `${server}.stderr`),
      // Under valgrind the start alone takes 5–10 s here.
      deadlineMs: extra.wrapper !== undefined ? 120_000 : 20_000,
    });
    return await body(child, target(port, account));
  } finally {
    await child?.stop(60_000);
    await tds?.stop();
  }
}

async function countInstructions(server: InstructionServer, work: string, warmup: number, requests: number, connections: number, keepDir: string | undefined, cacheSim: boolean): Promise<number> {
  const dir = mkdtempSync(join(work, `${server}-callgrind-`));
  const simulate = cacheSim ? ['--cache-sim=yes', '--branch-sim=yes'] : [];
  const wrapper = ['valgrind', '--tool=callgrind', '--instr-atstart=no', ...simulate, `--callgrind-out-file=${join(dir, 'callgrind.out')}`];
  // --perf-basic-prof: V8 writes /tmp/perf-<pid>.map, the address range of each JIT-compiled function.
  // It also turns V8's log on: written to the work folder, not as isolate-*.log in the cwd (the repository).
  const extra = keepDir === undefined ? { wrapper } : { wrapper, nodeFlags: ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`] };
  return withServer(server, work, extra, async (child, target) => {
    const clients = connect(target, connections);
    try {
      await send(target, clients, warmup);
      const pid = String(child.pid);
      await execFileAsync('callgrind_control', ['-i', 'on', pid], { timeout: 60_000 });
      await send(target, clients, requests);
      await execFileAsync('callgrind_control', ['-i', 'off', pid], { timeout: 60_000 });
      await execFileAsync('callgrind_control', ['-d', pid], { timeout: 120_000 });
    } finally {
      for (const client of clients) client.close();
    }
    const total = callgrindTotal(dir);
    if (total === 0) throw new Error(`callgrind wrote no count for ${server} (${readdirSync(dir).join(', ')})`);
    if (keepDir !== undefined) keepDump(dir, keepDir, server, child.pid);
    return total / requests;
  });
}

async function countPromises(server: InstructionServer, work: string, warmup: number, requests: number, connections: number): Promise<number> {
  const file = join(work, `${server}-promises.json`);
  const hook = FROM_SOURCE ? join(REPO_ROOT, 'bench', 'src', 'children', 'count-promises.ts') : join(REPO_ROOT, 'bench', 'dist', 'children', 'count-promises.js');
  // The hook counts from request warmup + 2 on: the first request is the start's /livez probe.
  await withServer(server, work, { nodeFlags: ['--import', hook], env: { SVC_BENCH_PROMISE_FILE: file, SVC_BENCH_PROMISE_WARMUP: String(warmup + 1) } }, async (_child, target) => {
    const clients = connect(target, connections);
    try {
      await send(target, clients, warmup + requests);
    } finally {
      for (const client of clients) client.close();
    }
  });
  const counted = JSON.parse(readFileSync(file, 'utf8')) as { requests: number; promises: number };
  if (counted.requests !== requests) throw new Error(`${server}: the promise hook saw ${counted.requests} requests, not ${requests}`);
  return counted.promises / requests;
}

/**
 * The bytes allocated and the number of collections in V8's `--trace-gc-nvp` output
 * `text`: the sum of each collection line's `allocated=` (bytes allocated in every space
 * since the previous collection).
 */
export function allocatedBytes(text: string): { readonly bytes: number; readonly collections: number } {
  let bytes = 0;
  let collections = 0;
  for (const match of text.matchAll(/\ballocated=(\d+)/gu)) {
    bytes += Number(match[1]);
    collections += 1;
  }
  return { bytes, collections };
}

async function countAllocation(server: InstructionServer, work: string, warmup: number, requests: number, connections: number): Promise<number | undefined> {
  const stdoutFile = join(work, `${server}-gc.log`);
  const hook = FROM_SOURCE ? join(REPO_ROOT, 'bench', 'src', 'children', 'count-allocation.ts') : join(REPO_ROOT, 'bench', 'dist', 'children', 'count-allocation.js');
  // Request 1 is the start's /livez probe; the counted run starts are requests warmup + 2 to
  // warmup + requests + 1, and one more run start turns the trace off.
  const env = { SVC_BENCH_ALLOCATION_FROM: String(warmup + 2), SVC_BENCH_ALLOCATION_TO: String(warmup + requests + 2) };
  await withServer(server, work, { nodeFlags: ['--import', hook], env, stdoutFile }, async (_child, target) => {
    const clients = connect(target, connections);
    try {
      await send(target, clients, warmup + requests + 1);
    } finally {
      for (const client of clients) client.close();
    }
  });
  const { bytes, collections } = allocatedBytes(readFileSync(stdoutFile, 'utf8'));
  // The collection that closes the window is always there; one more shows the trace ran.
  return collections < 1 ? undefined : bytes / requests;
}

/** Counts instructions, promises and allocated bytes a run start on each server, one server after another. */
export async function measureInstructions(options: InstructionOptions = {}): Promise<InstructionReport> {
  const warmupRequests = options.warmupRequests ?? 10_000;
  const requests = options.requests ?? 10_000;
  const connections = options.connections ?? 1;
  const log = options.log ?? (() => undefined);
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-instructions-'));
  const missing = await callgrindMissing();
  const rows: InstructionRow[] = [];
  try {
    for (const server of options.only ?? (Object.keys(INSTRUCTION_SERVERS) as InstructionServer[])) {
      if (server === 'koa-index-peer' && !existsSync(join(work, INDEX_ANSWER))) await indexAnswerFile(work);
      log(`${server}: promises a request (${warmupRequests} + ${requests} requests)`);
      const promisesPerRequest = await countPromises(server, work, Math.min(warmupRequests, 2000), requests, connections);
      log(`${server}: bytes allocated a request (${warmupRequests} + ${requests} requests)`);
      const bytesAllocatedPerRequest = await countAllocation(server, work, warmupRequests, requests, connections);
      let instructionsPerRequest: InstructionRow['instructionsPerRequest'];
      if (missing !== undefined) {
        instructionsPerRequest = { skip: missing };
      } else {
        log(`${server}: instructions a request under callgrind (${warmupRequests} warm-up + ${requests} counted)`);
        instructionsPerRequest = await countInstructions(server, work, warmupRequests, requests, connections, options.keepDir, options.cacheSim ?? false);
      }
      rows.push({ server, instructionsPerRequest, promisesPerRequest, bytesAllocatedPerRequest });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { warmupRequests, requests, connections, node: process.version, rows };
}

/** `other ÷ project`, or `–` when either is missing or the project's rounds to 0 (the index makes no promise). */
function ratio(project: number | undefined, other: number | undefined): string {
  return project === undefined || other === undefined || project < 0.05 ? '–' : `${(other / project).toFixed(2)}×`;
}

/**
 * The report as Markdown: one table a group (the run start, the index), each server's
 * figures over its group's project server's. "other ÷ project" reads like `pnpm bench`'s
 * throughput ratios: below 1 the project does more work for the same answer.
 */
export function formatInstructions(report: InstructionReport): string {
  const counted = (row: InstructionRow | undefined) => (row === undefined || typeof row.instructionsPerRequest !== 'number' ? undefined : row.instructionsPerRequest);
  const lines = [
    `${report.requests} requests counted after ${report.warmupRequests} (promises: after ${Math.min(report.warmupRequests, 2000)}), ${report.connections} connection(s), Node ${report.node}.`,
  ];
  for (const base of ['project', 'index', 'insert'] as const) {
    const rows = report.rows.filter((r) => BASE_OF[r.server] === base);
    if (rows.length === 0) continue;
    const project = report.rows.find((r) => r.server === base);
    lines.push(
      '',
      `| server | instructions a request | other ÷ ${base} (instructions) | promises a request | other ÷ ${base} (promises) | KiB allocated a request | other ÷ ${base} (allocated) |`,
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const row of rows) {
      const n = counted(row);
      const other = row.server !== base;
      lines.push(
        `| ${INSTRUCTION_SERVERS[row.server]} | ${n === undefined ? `not counted: ${(row.instructionsPerRequest as { skip: string }).skip}` : Math.round(n).toLocaleString('en-US')} | ${other ? ratio(counted(project), n) : '1.00×'} | ${row.promisesPerRequest.toFixed(1)} | ${other && project !== undefined ? ratio(project.promisesPerRequest, row.promisesPerRequest) : '1.00×'} | ${row.bytesAllocatedPerRequest === undefined ? '– (no collection traced)' : (row.bytesAllocatedPerRequest / 1024).toFixed(1)} | ${other ? ratio(project?.bytesAllocatedPerRequest, row.bytesAllocatedPerRequest) : '1.00×'} |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--') argv.shift();
  const { values } = parseArgs({ args: argv, options: { warmup: { type: 'string' }, requests: { type: 'string' }, connections: { type: 'string' }, only: { type: 'string', multiple: true }, keep: { type: 'string' }, 'cache-sim': { type: 'boolean' } }, strict: true });
  const whole = (name: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1, got ${value}`);
    return n;
  };
  const only = values.only?.flatMap((o) => o.split(',')).map((o) => o.trim());
  for (const name of only ?? []) if (!Object.hasOwn(INSTRUCTION_SERVERS, name)) throw new Error(`unknown server ${name}; servers: ${Object.keys(INSTRUCTION_SERVERS).join(', ')}`);
  const warmupRequests = whole('warmup', values.warmup);
  const requests = whole('requests', values.requests);
  const connections = whole('connections', values.connections);
  const report = await measureInstructions({
    ...(warmupRequests !== undefined ? { warmupRequests } : {}),
    ...(requests !== undefined ? { requests } : {}),
    ...(connections !== undefined ? { connections } : {}),
    ...(only !== undefined ? { only: only as InstructionServer[] } : {}),
    ...(values.keep !== undefined ? { keepDir: values.keep } : {}),
    cacheSim: values['cache-sim'] === true,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${formatInstructions(report)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`bench instructions: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
