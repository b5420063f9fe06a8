import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ALTERNATED_PAIRS, alternate, alternateLatency, roundsPerProcessPair, summarizeLatencyRounds, summarizeRounds, type AlternatedPair, type AlternatedPairName, type AlternatedRound, type LatencyPair, type LatencyRound } from './alternated.js';
import { answerDifferences } from './answer-shape.js';
import { apiConfig, benchAccount, DB_PASSWORD_ENV, insertRequest, jsonRequestHeaders, peerConfig, runRequest, type ApiConfigOptions, type BenchAccount } from './api-config.js';
import { freePort, startServerChild, type ServerChild } from './child-process.js';
import { summarizeFile, type ProfileSummary } from './cpuprofile.js';
import { TDS_LOGIN } from './fixtures.js';
import { keptAliveClient, measureLoad, measureSequential, type HttpAnswer, type LatencySample, type LoadRequest, type LoadResult, type LoadShape } from './load.js';
import { apiServerMain, benchChild, OWN_ORIGIN, type CodeOrigin } from './paths.js';
import { RedisProbe, type RoundTrips } from './redis.js';
import { connectRawTedious, startTdsServer } from './tds.js';
import { filesystemOf, freeBytes, MIB, putFile, syncFilesystem, timedCopy, watchPeakRss, writeRandomFile, type CopyMode, type PeakRss } from './upload.js';

/** The scenarios, in the order they run, with the label printed in the table. */
export const SCENARIOS = {
  'node-http': 'bare node:http (baseline)',
  koa: 'bare Koa (baseline)',
  index: 'GET /api/v1 (index)',
  'koa-index-body': "bare Koa answering a body of the index's size (runs with index)",
  'koa-index-peer': "same-work peer: bare Koa answering the index's bytes and headers (runs with index)",
  'run-memory': 'POST /api/v1/agents/{id}/run, in memory, log silent',
  'peer-koa-run-memory': 'same-work peer: Koa run start, in memory',
  'peer-fastify-run-memory': 'same-work peer: Fastify run start, in memory',
  'run-memory-info': 'POST /api/v1/agents/{id}/run, in memory, log info',
  'run-redis': 'POST /api/v1/agents/{id}/run, Redis limiter + queue',
  'peer-koa-run-redis': 'same-work peer: Koa run start, RateLimiterRedis + BullMQ',
  'insert-sqlserver': 'POST /api/v1/connections/{id}/records, scripted TDS server',
  'peer-koa-insert': 'same-work peer: Koa insert, tedious on a tarn pool',
  'upload-local': 'PUT + complete of one large file, local storage, against cp + sync of it',
} as const;

/** Name of a scenario (`--only`). */
export type ScenarioName = keyof typeof SCENARIOS;

/** The scenario every throughput ratio is taken against. */
export const BASELINE: ScenarioName = 'koa';

/**
 * The upload scenario: not a load (no row in the throughput table, no bare Koa baseline);
 * its baseline is `cp` of the same file in the same run ({@link UploadResult}).
 */
export const UPLOAD_SCENARIO = 'upload-local' satisfies ScenarioName;

/** Size of the upload scenario's file unless {@link BenchOptions.upload} says otherwise: 500 MiB. */
export const DEFAULT_UPLOAD_BYTES = 500 * MIB;

/** Scenarios that run with another one (they need its figures). */
const COMPANIONS: Partial<Record<ScenarioName, ScenarioName>> = { index: 'koa-index-body' };

/** A same-work peer's scenario. */
export type PeerScenario = 'peer-koa-run-memory' | 'peer-fastify-run-memory' | 'peer-koa-run-redis' | 'peer-koa-insert';

/**
 * The same-work peers: hand-written servers doing the project's wire work without its
 * architecture (`children/peers/`), each compared with the project scenario it mirrors,
 * whose answer it must match before it is measured. Asking for a peer runs its project
 * scenario too (first: the peer is checked against its answer).
 */
export const PEERS: Readonly<Record<PeerScenario, { readonly project: ScenarioName; readonly child: string; readonly name: string }>> = {
  'peer-koa-run-memory': { project: 'run-memory', child: 'peers/koa-run-memory', name: 'Koa peer' },
  'peer-fastify-run-memory': { project: 'run-memory', child: 'peers/fastify-run-memory', name: 'Fastify peer' },
  'peer-koa-run-redis': { project: 'run-redis', child: 'peers/koa-run-redis', name: 'Koa Redis peer' },
  'peer-koa-insert': { project: 'insert-sqlserver', child: 'peers/koa-insert', name: 'Koa insert peer' },
};

/** Whether `name` is a same-work peer's scenario. */
export function isPeer(name: ScenarioName): name is PeerScenario {
  return Object.hasOwn(PEERS, name);
}

/** Whether `name` is a scenario. */
export function isScenario(name: string): name is ScenarioName {
  return Object.hasOwn(SCENARIOS, name);
}

/** Options of {@link runBench}. */
export interface BenchOptions extends LoadShape {
  /** Scenarios to run; the baseline ({@link BASELINE}) always runs. Absent: all. */
  readonly only?: readonly ScenarioName[];
  /** Where the API server's code comes from. Default: the bench's own origin. */
  readonly serverOrigin?: CodeOrigin;
  /** Default `redis://127.0.0.1:6379`. */
  readonly redisUrl?: string;
  /** Pause between "listening" and the idle RSS reading, ms. Default 1000. */
  readonly idleSettleMs?: number;
  /**
   * Also profile servers with `--cpu-prof` in an extra pass (not in the table: the
   * profiler slows the server): bare Koa, and `only` (default: the index, run start in
   * memory with log silent, run start on Redis, insert). `dir` receives the
   * `.cpuprofile` files.
   */
  readonly profile?: { readonly dir: string; readonly only?: readonly ProfiledScenario[] };
  /**
   * The upload scenario: `sizeBytes` (default {@link DEFAULT_UPLOAD_BYTES}, at most 5 GiB,
   * the server's largest `files.max_bytes`), `rounds` (default 3; the report gives their
   * medians), `dir` (default the OS's temporary directory: it holds the file, the server's
   * storage and the copies, so it must be on the disk being measured, not a tmpfs).
   */
  readonly upload?: { readonly sizeBytes?: number; readonly rounds?: number; readonly dir?: string };
  /**
   * Alternated rounds (`alternated.ts`) of the pairs whose scenarios ran in the table
   * (the index and bare Koa; the run start in memory, and on Redis, and its Koa peer, once
   * the peer answered alike; the insert one request at a time and the Koa insert peer):
   * `rounds` (default 6; 0: none), each load `roundSeconds` long (default 3) after a
   * warm-up of 1 s (or `roundSeconds`, if shorter), both servers started again every
   * 2 rounds (`ROUNDS_PER_PROCESS_PAIR`, alternated.ts). The throughput and insert latency targets read
   * their medians.
   */
  readonly alternated?: { readonly rounds?: number; readonly roundSeconds?: number };
  /** Progress lines (to stderr in the command). */
  readonly log?: (line: string) => void;
}

/** One row of the throughput table: a result, or why the scenario was skipped. */
export interface ScenarioRow {
  readonly scenario: ScenarioName;
  readonly label: string;
  readonly result?: LoadResult;
  /** `result.requestsPerSecond` over the baseline's. */
  readonly ratio?: number;
  readonly skip?: string;
}

/** The API server process of one scenario. */
export interface ServerStats {
  readonly scenario: ScenarioName;
  /** Milliseconds from spawn to the first 200 of `/livez`. */
  readonly startMs: number;
  /** RSS after start and a pause ({@link BenchOptions.idleSettleMs}), bytes. */
  readonly rssIdleBytes: number;
  /** RSS right after the measured load, bytes. */
  readonly rssAfterBytes: number;
}

/** Latencies at concurrency 1 on the insert scenario's server and TDS server. */
export interface InsertLatency {
  /** The insert through the API. */
  readonly api: LatencySample;
  /** A run start on the same API server: the HTTP path without a database. */
  readonly apiRunStart: LatencySample;
  /** The same insert with raw tedious on one open connection. */
  readonly rawTedious: LatencySample;
}

/** The API servers {@link BenchOptions.profile} can profile. */
export type ProfiledScenario = 'index' | 'run-start' | 'run-redis' | 'insert';

/** The CPU profile of one server process under load. */
export interface ProfiledServer {
  readonly file: string;
  readonly summary: ProfileSummary;
  /** Throughput while profiled (slower than the table's). */
  readonly requestsPerSecond: number;
  /** 2xx answers during the profiled window (warm-up and measure), to share the time out per request. */
  readonly served: number;
}

/** Profiles under the table's load: bare Koa, and the API servers asked for. */
export interface ProfileReport {
  readonly koa: ProfiledServer;
  readonly index?: ProfiledServer;
  readonly runStart?: ProfiledServer;
  /** The Koa same-work peer of the run start in memory, profiled when `runStart` is and the table's pass ran the project's run start. */
  readonly peerRunStart?: ProfiledServer;
  /** Absent when not asked for, or when the scenario cannot run. */
  readonly runRedis?: ProfiledServer;
  /** Absent when not asked for, or when the insert scenario cannot run. */
  readonly insert?: ProfiledServer;
}

/** One round of the upload scenario, each step on the same file into the same directory, with fsync. Milliseconds and bytes. */
export interface UploadRound {
  /** The order of the round's steps (rotated from round to round: none always meets another's writeback), e.g. `cp, upload, peer`. */
  readonly order: string;
  /** `PUT upload_url` with the bytes, streamed from disk, until its 200. */
  readonly putMs: number;
  /** `POST /api/v1/files/{file_key}/complete` until its 200 `ready`. */
  readonly completeMs: number;
  /** The same-work peer (`children/peers/node-upload.ts`): its one PUT, streamed the same way, until its 200. */
  readonly peerMs: number;
  /** `cp --reflink=never` + `sync` of the copy and its directory (read and write through a process: the baseline). */
  readonly cpMs: number;
  /** Plain `cp` (`copy_file_range`: in the kernel, no bytes through a process) + `sync`: for scale, not the baseline. */
  readonly cpKernelMs: number;
  /** The API server child's RSS right before the PUT, and its peak during PUT + complete ({@link PeakRss}). */
  readonly server: ProcessMemory;
  /** The same for the peer child during its PUT. */
  readonly peer: ProcessMemory;
}

/** RSS of a child right before a step and its peak during it, bytes; its CPU time (all threads) during the step, ms (absent off Linux). */
export interface ProcessMemory {
  readonly rssBeforeBytes: number;
  readonly rssPeakBytes: number;
  readonly cpuMs?: number;
}

/** What the upload scenario measured. */
export interface UploadResult {
  readonly sizeBytes: number;
  /** The directory that held the file, the server's storage, the peer's and the copies. */
  readonly directory: string;
  /** e.g. `ext4 on /dev/vda`. */
  readonly filesystem: string;
  /** How the peak RSS was read (the last round's). */
  readonly peakSource: PeakRss['source'];
  readonly rounds: readonly UploadRound[];
}

/** The upload scenario's result, or why it was skipped. */
export interface UploadRow {
  readonly label: string;
  readonly result?: UploadResult;
  readonly skip?: string;
}

/** A peer's answer, checked against the project's before the peer was measured. */
export interface PeerCheck {
  readonly scenario: PeerScenario;
  /** What was compared and found alike, e.g. `202, 12 header names, body {data: 5 members}`. */
  readonly alike: string;
}

/** Everything one run measured. */
export interface BenchReport {
  readonly shape: LoadShape;
  readonly serverOrigin: CodeOrigin;
  readonly machine: string;
  /** 1-minute load average of the machine before and after the run (other processes skew the figures). */
  readonly loadAverage: { readonly before: number; readonly after: number };
  readonly rows: readonly ScenarioRow[];
  readonly servers: readonly ServerStats[];
  readonly insertLatency?: InsertLatency;
  /** The insert peer's insert, one request at a time, measured as {@link InsertLatency.api}. */
  readonly peerInsertLatency?: LatencySample;
  /** The peers that answered like the project (those that did not are skipped rows). */
  readonly peerChecks?: readonly PeerCheck[];
  /** Size of the index's body in bytes (the `koa-index-body` baseline answers as much). */
  readonly indexBodyBytes?: number;
  readonly redisRoundTrips?: RoundTrips;
  readonly profile?: ProfileReport;
  /** Present when the upload scenario was asked for. */
  readonly upload?: UploadRow;
  /** The pairs measured in alternated rounds ({@link BenchOptions.alternated}). */
  readonly alternated?: readonly AlternatedPair[];
  /** The insert one request at a time, API server and Koa insert peer, in alternated rounds ({@link BenchOptions.alternated}). */
  readonly insertLatencyRounds?: LatencyPair;
}

/** A scenario that cannot run yet; its row says why. */
class Skip extends Error {
  override readonly name = 'Skip';
}

/** `status code`, plus the problem's `code` when the body is problem details. */
function describeAnswer(status: number, body: string): string {
  let code: unknown;
  try {
    code = (JSON.parse(body) as { code?: unknown }).code;
  } catch {
    code = undefined;
  }
  return typeof code === 'string' ? `${status} ${code}` : String(status);
}

/** Sends `target` once and throws {@link Skip} unless it answers `expected`; returns the answer. */
async function probe(target: LoadRequest, expected: number, why: (answer: string, status: number) => string): Promise<HttpAnswer> {
  const client = keptAliveClient(target);
  try {
    const answer = await client.send();
    if (answer.status !== expected) throw new Skip(why(describeAnswer(answer.status, answer.body), answer.status));
    return answer;
  } finally {
    client.close();
  }
}

/** `202, 12 header names, body {data: 5 members}`: what a peer check compared. */
function describeCompared(answer: HttpAnswer): string {
  let body = 'a body that is not JSON';
  try {
    const data = (JSON.parse(answer.body) as { data?: unknown }).data;
    if (data !== null && typeof data === 'object') {
      const n = Object.keys(data).length;
      body = `body {data: ${n} member${n === 1 ? '' : 's'}}`;
    }
  } catch {
    // the description says so
  }
  return `${answer.status}, ${Object.keys(answer.headers).length} header names, ${body}`;
}

/** Runs every scenario asked for, one server child at a time, and returns the figures. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const log = options.log ?? (() => undefined);
  const origin = options.serverOrigin ?? OWN_ORIGIN;
  const shape: LoadShape = { connections: options.connections, warmupSeconds: options.warmupSeconds, durationSeconds: options.durationSeconds };
  const wanted = new Set<ScenarioName>(options.only ?? (Object.keys(SCENARIOS) as ScenarioName[]));
  // The bare Koa baseline is the denominator of the loads; the upload alone has its own (cp).
  if ([...wanted].some((s) => s !== UPLOAD_SCENARIO)) wanted.add(BASELINE);
  for (const [scenario, companion] of Object.entries(COMPANIONS) as [ScenarioName, ScenarioName][]) {
    if (wanted.has(scenario) || wanted.has(companion)) wanted.add(scenario).add(companion);
  }
  for (const [peer, { project }] of Object.entries(PEERS) as [PeerScenario, (typeof PEERS)[PeerScenario]][]) {
    if (wanted.has(peer)) wanted.add(project);
  }
  const loadBefore = loadavg()[0] ?? 0;
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const rows: ScenarioRow[] = [];
  const servers: ServerStats[] = [];
  const extraRows: ScenarioRow[] = [];
  let insertLatency: InsertLatency | undefined;
  let peerInsertLatency: LatencySample | undefined;
  const peerChecks: PeerCheck[] = [];
  /** The project's answer to the request each peer must answer alike, by project scenario. */
  const projectAnswers = new Map<ScenarioName, HttpAnswer>();
  let indexBodyBytes: number | undefined;
  let indexAnswer: HttpAnswer | undefined;
  let redisRoundTrips: RoundTrips | undefined;
  let profile: ProfileReport | undefined;
  let upload: UploadRow | undefined;
  const alternated: AlternatedPair[] = [];
  let insertLatencyRounds: LatencyPair | undefined;

  /**
   * The upload scenario: writes a file of random bytes in a directory of its own (under
   * {@link BenchOptions.upload}'s `dir`), starts the API server with local storage in that
   * directory and the same-work peer (`peers/node-upload`) writing beside it, then for each
   * round, in rotating order: (1) prepares a file, PUTs the bytes streamed from disk and
   * completes it, timing PUT + complete and watching the server's RSS
   * ({@link watchPeakRss}), checks it `ready` with the source's size and SHA-256, deletes it
   * through the API; (2) the same PUT to the peer, checked and deleted the same way;
   * (3) `cp` of the file into the storage directory with `sync` ({@link timedCopy}),
   * deleted after; then plain `cp` the same way. The filesystem is written back
   * (`sync -f`, untimed) before each step. Deletes its directory at the end.
   */
  async function uploadScenario(): Promise<UploadResult> {
    const sizeBytes = options.upload?.sizeBytes ?? DEFAULT_UPLOAD_BYTES;
    const roundCount = options.upload?.rounds ?? 3;
    const parent = options.upload?.dir ?? tmpdir();
    // The file, and one copy at a time (each is deleted before the next), with room to spare.
    const needed = 2 * sizeBytes + 256 * MIB;
    const free = await freeBytes(parent);
    if (free < needed) throw new Skip(`${parent} has ${Math.floor(free / MIB)} MiB free, the upload scenario needs ${Math.ceil(needed / MIB)} MiB`);
    const dir = await mkdtemp(join(parent, 'svc-bench-upload-'));
    try {
      const source = join(dir, 'source.bin');
      const storage = join(dir, 'storage');
      const peerDir = join(dir, 'peer');
      await mkdir(storage);
      await mkdir(peerDir);
      log(`  writing ${(sizeBytes / MIB).toFixed(1)} MiB of random bytes to ${source}`);
      const sha256 = await writeRandomFile(source, sizeBytes);
      const filesystem = await filesystemOf(dir);
      const files = { maxBytes: Math.max(sizeBytes, DEFAULT_UPLOAD_BYTES), directory: storage };
      return await withApiServer(UPLOAD_SCENARIO, { logLevel: 'silent', files }, async (server, account) => {
        const peerPort = await freePort();
        const peer = await startServerChild({ command: benchChild('peers/node-upload'), args: [String(peerPort), peerDir], port: peerPort, stderrFile: join(work, 'peer-node-upload.stderr') });
        try {
          return await uploadRounds(server, peer, account, { sizeBytes, roundCount, dir, source, storage, sha256, filesystem });
        } finally {
          await peer.stop();
        }
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The rounds of {@link uploadScenario} on its started server and peer. */
  async function uploadRounds(
    server: ServerChild,
    peer: ServerChild,
    account: BenchAccount,
    at: { sizeBytes: number; roundCount: number; dir: string; source: string; storage: string; sha256: string; filesystem: string },
  ): Promise<UploadResult> {
    const { sizeBytes, source, storage, sha256 } = at;
    const filesUrl = `http://127.0.0.1:${server.port}/api/v1/files`;
    const headers = jsonRequestHeaders(account);
    const send = (url: string, method: 'POST' | 'DELETE', body?: unknown): Promise<HttpAnswer> => {
      const client = keptAliveClient({ url, method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      return client.send().finally(() => client.close());
    };
    let peakSource: PeakRss['source'] = 'VmRSS samples';
    /** Runs `step` while watching `child`'s RSS and CPU time. */
    const watched = async <T>(child: ServerChild, step: () => Promise<T>): Promise<{ value: T; memory: ProcessMemory }> => {
      const rssBeforeBytes = await child.rssBytes();
      const cpuBefore = await child.cpuMs();
      const watch = await watchPeakRss(child.pid);
      let value: T;
      let peak: PeakRss;
      try {
        value = await step();
      } finally {
        peak = await watch.stop();
        peakSource = peak.source;
      }
      const cpuAfter = await child.cpuMs();
      return { value, memory: { rssBeforeBytes, rssPeakBytes: peak.peakBytes, ...(cpuBefore !== undefined && cpuAfter !== undefined ? { cpuMs: cpuAfter - cpuBefore } : {}) } };
    };
    const upload = async () => {
      const prepared = await send(filesUrl, 'POST', { file_name: 'bench-upload.bin', content_type: 'application/octet-stream', size_bytes: sizeBytes });
      if (prepared.status !== 201) throw new Skip(`the server answered ${describeAnswer(prepared.status, prepared.body)} to POST /api/v1/files (size_bytes ${sizeBytes})`);
      const file = (JSON.parse(prepared.body) as { data: { file_key: string; upload_url: string; upload_headers?: Record<string, string> } }).data;
      const { value, memory } = await watched(server, async () => {
        const t0 = performance.now();
        const put = await putFile(file.upload_url, file.upload_headers ?? {}, source, sizeBytes);
        if (put.status !== 200) throw new Skip(`the server answered ${describeAnswer(put.status, put.body)} to the PUT of ${sizeBytes} bytes`);
        const t1 = performance.now();
        const completed = await send(`${filesUrl}/${file.file_key}/complete`, 'POST', {});
        return { completed, putMs: t1 - t0, completeMs: performance.now() - t1 };
      });
      const data = value.completed.status === 200 ? (JSON.parse(value.completed.body) as { data: { status?: string; size_bytes?: number; sha256?: string; reason?: string } }).data : undefined;
      if (data?.status !== 'ready' || data.size_bytes !== sizeBytes || data.sha256 !== sha256) {
        throw new Skip(`the server answered ${describeAnswer(value.completed.status, value.completed.body)} to complete, not ready with the source's size and SHA-256`);
      }
      const deleted = await send(`${filesUrl}/${file.file_key}`, 'DELETE');
      if (deleted.status !== 204) throw new Error(`DELETE of the uploaded file answered ${describeAnswer(deleted.status, deleted.body)}`);
      return { putMs: value.putMs, completeMs: value.completeMs, server: memory };
    };
    const toPeer = async () => {
      const { value, memory } = await watched(peer, async () => {
        const t0 = performance.now();
        const put = await putFile(`http://127.0.0.1:${peer.port}/upload/bench-upload`, {}, source, sizeBytes);
        return { put, ms: performance.now() - t0 };
      });
      const data = value.put.status === 200 ? (JSON.parse(value.put.body) as { data: { size_bytes?: number; sha256?: string } }).data : undefined;
      await rm(join(at.dir, 'peer', 'bench-upload'), { force: true });
      if (data?.size_bytes !== sizeBytes || data.sha256 !== sha256) throw new Error(`the upload peer answered ${value.put.status} ${value.put.body}`);
      return { peerMs: value.ms, peer: memory };
    };
    const copy = async (mode: CopyMode): Promise<number> => {
      const destination = join(storage, `cp-${mode}.bin`);
      try {
        return await timedCopy(source, destination, storage, mode);
      } catch (error) {
        throw new Skip(`cp + sync failed: ${(error as Error).message.split('\n')[0] ?? ''}`);
      } finally {
        await rm(destination, { force: true });
      }
    };
    const steps = ['cp', 'upload', 'peer'] as const;
    const rounds: UploadRound[] = [];
    for (let i = 0; i < at.roundCount; i++) {
      const order = steps.map((_, k) => steps[(k + i) % steps.length] ?? 'cp');
      let uploaded: Awaited<ReturnType<typeof upload>> | undefined;
      let peered: Awaited<ReturnType<typeof toPeer>> | undefined;
      let cpMs = Number.NaN;
      for (const step of order) {
        await syncFilesystem(at.dir);
        if (step === 'cp') cpMs = await copy('userspace');
        else if (step === 'upload') uploaded = await upload();
        else peered = await toPeer();
      }
      await syncFilesystem(at.dir);
      const cpKernelMs = await copy('kernel');
      if (uploaded === undefined || peered === undefined) throw new Error('unreachable: a step of the round did not run');
      const round: UploadRound = { order: order.join(', '), ...uploaded, ...peered, cpMs, cpKernelMs };
      log(
        `  round ${i + 1} (${round.order}): PUT + complete ${(round.putMs + round.completeMs).toFixed(0)} ms, peer ${round.peerMs.toFixed(0)} ms, cp + sync ${cpMs.toFixed(0)} ms, ` +
          `plain cp + sync ${cpKernelMs.toFixed(0)} ms; server RSS ${(round.server.rssBeforeBytes / MIB).toFixed(1)} → peak ${(round.server.rssPeakBytes / MIB).toFixed(1)} MiB`,
      );
      rounds.push(round);
    }
    return { sizeBytes, directory: at.dir, filesystem: at.filesystem, peakSource, rounds };
  }

  /** Starts a baseline child, loads `GET /`, stops it. */
  async function baseline(name: 'node-http-server' | 'koa-server', nodeFlags: readonly string[] = [], bodyBytes?: number, answerFile?: string): Promise<LoadResult> {
    const port = await freePort();
    const args = answerFile !== undefined ? [String(port), '--answer', answerFile] : bodyBytes === undefined ? [String(port)] : [String(port), String(bodyBytes)];
    const child = await startServerChild({ command: benchChild(name), nodeFlags, args, port, stderrFile: join(work, `${name}.stderr`) });
    try {
      return await measureLoad({ url: `http://127.0.0.1:${port}/`, method: 'GET' }, shape, child.cpuMs);
    } finally {
      await child.stop();
    }
  }

  /**
   * Starts the API server (`NODE_ENV=production`) with a configuration of the bench written
   * to `<name>.yaml` in the work folder, a fresh account and free ports; its output goes to
   * `<name>.log` and `<name>.stderr` there.
   */
  async function startApiServer(
    name: string,
    config: Omit<ApiConfigOptions, 'account' | 'port' | 'egressPort'>,
    nodeFlags: readonly string[] = [],
  ): Promise<{ server: ServerChild; account: BenchAccount }> {
    const account = benchAccount();
    const port = await freePort();
    const egressPort = await freePort();
    const configFile = join(work, `${name}.yaml`);
    writeFileSync(configFile, JSON.stringify(apiConfig({ ...config, account, port, egressPort }), null, 2));
    const server = await startServerChild({
      command: apiServerMain(origin),
      nodeFlags,
      args: ['--config', configFile],
      port,
      env: { [DB_PASSWORD_ENV]: TDS_LOGIN.password, NODE_ENV: 'production' },
      stdoutFile: join(work, `${name}.log`),
      stderrFile: join(work, `${name}.stderr`),
    });
    return { server, account };
  }

  /**
   * Starts the API server with a configuration of the bench, runs `body` against it,
   * records its start time and RSS, stops it.
   */
  async function withApiServer<T>(
    scenario: ScenarioName,
    config: Omit<ApiConfigOptions, 'account' | 'port' | 'egressPort'>,
    body: (server: ServerChild, account: BenchAccount) => Promise<T>,
    nodeFlags: readonly string[] = [],
  ): Promise<T> {
    const { server, account } = await startApiServer(scenario, config, nodeFlags);
    try {
      await sleep(options.idleSettleMs ?? 1000);
      const rssIdleBytes = await server.rssBytes();
      const value = await body(server, account);
      const rssAfterBytes = await server.rssBytes();
      if (nodeFlags.length === 0) servers.push({ scenario, startMs: server.startMs, rssIdleBytes, rssAfterBytes });
      return value;
    } finally {
      await server.stop();
    }
  }

  /**
   * The index, then (its companion) bare Koa answering a JSON body of the index's size:
   * the index answers about ten times the baseline's bytes.
   */
  async function indexScenario(nodeFlags: readonly string[] = []): Promise<LoadResult> {
    const result = await withApiServer(
      'index',
      { logLevel: 'silent' },
      async (server) => {
        const target: LoadRequest = { url: `http://127.0.0.1:${server.port}/api/v1`, method: 'GET' };
        const client = keptAliveClient(target);
        try {
          const answer = await client.send();
          if (answer.status !== 200) throw new Skip(`the server answered ${describeAnswer(answer.status, answer.body)} to GET /api/v1`);
          indexBodyBytes = Buffer.byteLength(answer.body);
          indexAnswer = answer;
        } finally {
          client.close();
        }
        return measureLoad(target, shape, server.cpuMs);
      },
      nodeFlags,
    );
    if (nodeFlags.length === 0 && indexBodyBytes !== undefined) {
      log(`koa-index-body: ${SCENARIOS['koa-index-body']}`);
      extraRows.push({
        scenario: 'koa-index-body',
        label: `bare Koa answering ${indexBodyBytes} bytes (the index's size)`,
        result: await baseline('koa-server', [], indexBodyBytes),
      });
      if (indexAnswer !== undefined) {
        // The same-work peer of the index: its bytes and the headers the contract asks
        // for (ETag, Cache-Control, Content-Type, a fresh X-Request-Id), nothing else.
        const stable = ['content-type', 'etag', 'cache-control'];
        const headers = Object.fromEntries(stable.flatMap((name) => (typeof indexAnswer?.headers[name] === 'string' ? [[name, indexAnswer.headers[name]]] : [])));
        const file = join(work, 'index-answer.json');
        writeFileSync(file, JSON.stringify({ body: indexAnswer.body, headers }));
        log(`koa-index-peer: ${SCENARIOS['koa-index-peer']}`);
        extraRows.push({ scenario: 'koa-index-peer', label: SCENARIOS['koa-index-peer'], result: await baseline('koa-server', [], undefined, file) });
      }
    }
    return result;
  }

  /** The run-start scenario on the in-memory limiter and queue. */
  function runInMemory(scenario: ScenarioName, logLevel: 'silent' | 'info'): Promise<LoadResult> {
    return withApiServer(scenario, { logLevel }, async (server, account) => {
      const target = runRequest(server.port, account);
      const answer = await probe(target, 202, (a) => `the server answered ${a} to a run start`);
      if (!projectAnswers.has(scenario)) projectAnswers.set(scenario, answer);
      return measureLoad(target, shape, server.cpuMs);
    });
  }

  /**
   * Run start on the Redis limiter and BullMQ queue: checks that the server really uses
   * Redis, counts its round trips per request, then loads it; deletes every key under
   * its prefix afterwards. `profileFlags`: only the load, on a profiled server.
   */
  async function runOnRedis(profileFlags?: readonly string[]): Promise<LoadResult> {
    const url = options.redisUrl ?? 'redis://127.0.0.1:6379';
    const redis = await RedisProbe.connect(url);
    if (redis === undefined) throw new Skip(`Redis does not answer at ${url}`);
    const prefix = `svc-bench-${randomBytes(4).toString('hex')}`;
    try {
      return await withApiServer('run-redis', { logLevel: 'silent', redis: { url, prefix } }, async (server, account) => {
        const target = runRequest(server.port, account);
        if (profileFlags !== undefined) return measureLoad(target, shape);
        const answer = await probe(target, 202, (a, status) =>
          status >= 500 ? `the server cannot use Redis yet (it answered ${a} to a run start)` : `the server answered ${a} to a run start`,
        );
        const client = keptAliveClient(target);
        try {
          // A few requests first: the limiter loads its script (NOSCRIPT, then EVAL) once.
          for (let i = 0; i < 5; i++) await client.send();
          if ((await redis.keysContaining(prefix)).length === 0) {
            throw new Skip(`the server does not use Redis yet: no key under redis_prefix ${prefix} after 6 run starts (in-memory limiter and queue)`);
          }
          projectAnswers.set('run-redis', answer);
          const requests = 20;
          redisRoundTrips = await redis.countRoundTrips(prefix, requests, async () => {
            for (let i = 0; i < requests; i++) {
              const answer = await client.send();
              if (answer.status !== 202) throw new Error(`run start answered ${describeAnswer(answer.status, answer.body)} while counting round trips`);
            }
          });
        } finally {
          client.close();
        }
        return measureLoad(target, shape, server.cpuMs);
      }, profileFlags);
    } finally {
      const deleted = await redis.deleteContaining(prefix);
      log(`  deleted ${deleted} Redis keys under ${prefix}`);
      await redis.close();
    }
  }

  /**
   * Inserts through the API into the scripted TDS server: first the latencies at
   * concurrency 1 (insert through the API, a run start on the same server, raw tedious),
   * then the load. `profileFlags`: only the load, on a profiled server.
   */
  async function insertOnSqlServer(profileFlags?: readonly string[]): Promise<LoadResult> {
    const tds = await startTdsServer();
    if ('skip' in tds) throw new Skip(tds.skip);
    try {
      return await withApiServer(
        'insert-sqlserver',
        { logLevel: 'silent', sqlServerPort: tds.port },
        async (server, account) => {
          const target = insertRequest(server.port, account);
          const answer = await probe(target, 201, (a) =>
            a.endsWith('unknown_entity')
              ? `the API server does not write sqlserver connections to SQL Server yet (${a}: its in-memory demo tables answered)`
              : `the server answered ${a} to an insert through the scripted TDS server`,
          );
          if (profileFlags !== undefined) return measureLoad(target, shape);
          projectAnswers.set('insert-sqlserver', answer);
          insertLatency = await sequentialLatencies(server, account, tds.port);
          return measureLoad(target, shape, server.cpuMs);
        },
        profileFlags,
      );
    } finally {
      await tds.stop();
    }
  }

  /** `target` one request at a time over one kept-alive socket, warmed up (`measureShape`: the run's own by default); with `serverCpuMs`, the server's CPU per request too. */
  async function overHttp(target: LoadRequest, expected: number, serverCpuMs?: () => Promise<number | undefined>, measureShape: Omit<LoadShape, 'connections'> = shape): Promise<LatencySample> {
    const client = keptAliveClient(target);
    try {
      return await measureSequential(
        async () => {
          const answer = await client.send();
          if (answer.status !== expected) throw new Error(`${target.url} answered ${describeAnswer(answer.status, answer.body)}`);
        },
        measureShape,
        serverCpuMs,
      );
    } finally {
      client.close();
    }
  }

  /**
   * A same-work peer: starts its child (with Redis or a scripted TDS server of its own
   * when it needs one), sends it the request its project scenario answered, and throws
   * {@link Skip} unless it answers alike (status, header names, stable header values,
   * body but ids and ports); then, for the insert peer, its latency at concurrency 1;
   * then the load, with the child's CPU time.
   */
  async function peerScenario(scenario: PeerScenario, nodeFlags: readonly string[] = []): Promise<LoadResult> {
    const peer = PEERS[scenario];
    const reference = projectAnswers.get(peer.project);
    if (reference === undefined) {
      const skipped = rows.find((r) => r.scenario === peer.project)?.skip;
      throw new Skip(`the project's ${peer.project} did not answer in this run${skipped !== undefined ? ` (${skipped})` : ''}: nothing to check the peer against`);
    }
    const isInsert = scenario === 'peer-koa-insert';
    const cleanups: (() => Promise<void>)[] = [];
    try {
      let redis: { url: string; prefix: string } | undefined;
      if (scenario === 'peer-koa-run-redis') {
        const url = options.redisUrl ?? 'redis://127.0.0.1:6379';
        const probeClient = await RedisProbe.connect(url);
        if (probeClient === undefined) throw new Skip(`Redis does not answer at ${url}`);
        redis = { url, prefix: `svc-bench-peer-${randomBytes(4).toString('hex')}` };
        const prefix = redis.prefix;
        cleanups.push(async () => {
          const deleted = await probeClient.deleteContaining(prefix);
          log(`  deleted ${deleted} Redis keys under ${prefix}`);
          await probeClient.close();
        });
      }
      let sqlServerPort: number | undefined;
      if (isInsert) {
        const tds = await startTdsServer();
        if ('skip' in tds) throw new Skip(tds.skip);
        cleanups.push(() => tds.stop());
        sqlServerPort = tds.port;
      }
      const account = benchAccount();
      const port = await freePort();
      const config = peerConfig(
        { account, port, egressPort: 0, logLevel: 'silent', ...(sqlServerPort !== undefined ? { sqlServerPort } : {}) },
        redis !== undefined ? { redis } : {},
      );
      const child = await startServerChild({ command: benchChild(peer.child), args: [JSON.stringify(config)], port, stderrFile: join(work, `${scenario}.stderr`), nodeFlags });
      cleanups.push(() => child.stop());
      const target = isInsert ? insertRequest(port, account) : runRequest(port, account);
      const client = keptAliveClient(target);
      const answer = await client.send().finally(() => client.close());
      const differences = answerDifferences(reference, answer);
      if (differences.length > 0) {
        throw new Skip(`the ${peer.name} does not answer like the project (${peer.project}), not measured: ${differences.join('; ')}`);
      }
      // The profiled pass checks the answer again, and reports it once, from the table's pass.
      if (nodeFlags.length === 0) peerChecks.push({ scenario, alike: describeCompared(answer) });
      if (isInsert) peerInsertLatency = await overHttp(target, 201, child.cpuMs);
      return await measureLoad(target, shape, child.cpuMs);
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup();
    }
  }

  /** One request at a time, each warmed up, same duration: API insert, API run start, raw tedious. */
  async function sequentialLatencies(server: ServerChild, account: BenchAccount, tdsPort: number): Promise<InsertLatency> {
    const api = await overHttp(insertRequest(server.port, account), 201, server.cpuMs);
    const apiRunStart = await overHttp(runRequest(server.port, account), 202, server.cpuMs);
    const raw = await connectRawTedious(tdsPort);
    try {
      const rawTedious = await measureSequential(async () => {
        if ((await raw.insert()) !== 1) throw new Error('raw tedious insert reported no row');
      }, shape);
      return { api, apiRunStart, rawTedious };
    } finally {
      await raw.close();
    }
  }

  /**
   * Runs `load` on a child started with `--cpu-prof` and reads the profile it leaves.
   * Every thread writes its own profile (under tsx, the loader's hooks thread too): the
   * main thread's is the one busiest during the load.
   */
  async function profiled(dir: string, name: string, load: (flags: readonly string[]) => Promise<LoadResult>): Promise<ProfiledServer> {
    const own = join(dir, `${name}-${Date.now()}`);
    mkdirSync(own, { recursive: true });
    const result = await load(['--cpu-prof', `--cpu-prof-dir=${own}`]);
    // Only the load's window: start-up (module loading, schema compiling) is not the path.
    const candidates = readdirSync(own)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => ({ file: join(own, f), summary: summarizeFile(join(own, f), result.window) }))
      .sort((a, b) => b.summary.busyMs - a.summary.busyMs);
    const main = candidates[0];
    if (main === undefined) throw new Error(`no profile was written in ${own}`);
    return { file: main.file, summary: main.summary, requestsPerSecond: result.requestsPerSecond, served: result.served };
  }

  async function profileScenarios(dir: string, only: readonly ProfiledScenario[]): Promise<ProfileReport> {
    mkdirSync(dir, { recursive: true });
    const koa = await profiled(dir, 'koa', (flags) => baseline('koa-server', flags));
    const index = only.includes('index') ? await profiled(dir, 'index', (flags) => indexScenario(flags)) : undefined;
    const runStart = only.includes('run-start')
      ? await profiled(dir, 'run-start', (flags) =>
          withApiServer('run-memory', { logLevel: 'silent' }, async (server, account) => measureLoad(runRequest(server.port, account), shape), flags),
        )
      : undefined;
    const skippable = async (name: ProfiledScenario, run: (flags: readonly string[]) => Promise<LoadResult>): Promise<ProfiledServer | undefined> => {
      if (!only.includes(name)) return undefined;
      try {
        return await profiled(dir, name, run);
      } catch (error) {
        if (error instanceof Skip) return undefined;
        throw error;
      }
    };
    // The same-work peer under the same load, so that a cost in the project's profile can be
    // told apart from one the peer pays too (Node's HTTP, the socket writes, hashing).
    const peerRunStart =
      runStart !== undefined && projectAnswers.has('run-memory')
        ? await profiled(dir, 'peer-run-start', (flags) => peerScenario('peer-koa-run-memory', flags))
        : undefined;
    const runRedis = await skippable('run-redis', (flags) => runOnRedis(flags));
    const insert = await skippable('insert', (flags) => insertOnSqlServer(flags));
    return {
      koa,
      ...(index !== undefined ? { index } : {}),
      ...(runStart !== undefined ? { runStart } : {}),
      ...(peerRunStart !== undefined ? { peerRunStart } : {}),
      ...(runRedis !== undefined ? { runRedis } : {}),
      ...(insert !== undefined ? { insert } : {}),
    };
  }

  /**
   * A server up for alternated rounds, log silent, with the request it is loaded with: the
   * API server (on Redis with `redis`, else in memory) or a bench child (bare Koa, a Koa peer).
   */
  async function upForRounds(
    which: 'api' | 'koa-server' | 'peers/koa-run-memory' | 'peers/koa-run-redis',
    request: 'index' | 'run-start',
    redis?: { url: string; prefix: string },
  ): Promise<{ child: ServerChild; target: LoadRequest }> {
    const name = `rounds-${which.replace('/', '-')}-${request}`;
    const targetOf = (port: number, account: BenchAccount): LoadRequest =>
      request === 'index' ? { url: `http://127.0.0.1:${port}/api/v1`, method: 'GET' } : runRequest(port, account);
    if (which === 'api') {
      const { server, account } = await startApiServer(name, { logLevel: 'silent', ...(redis !== undefined ? { redis } : {}) });
      return { child: server, target: targetOf(server.port, account) };
    }
    const account = benchAccount();
    const port = await freePort();
    const args = which === 'koa-server' ? [String(port)] : [JSON.stringify(peerConfig({ account, port, egressPort: 0, logLevel: 'silent' }, redis !== undefined ? { redis } : {}))];
    const child = await startServerChild({ command: benchChild(which), args, port, stderrFile: join(work, `${name}.stderr`) });
    return { child, target: targetOf(port, account) };
  }

  /**
   * The alternated rounds of `pair` ({@link BenchOptions.alternated}), both servers up
   * throughout; for the Redis pair each on a prefix of its own, whose keys are deleted after.
   */
  async function alternatedRounds(pair: AlternatedPairName, rounds: number, roundShape: LoadShape): Promise<AlternatedPair> {
    const request = pair === 'index-koa' ? 'index' : 'run-start';
    const url = options.redisUrl ?? 'redis://127.0.0.1:6379';
    const prefixes = pair === 'run-redis-peer' ? [`svc-bench-rounds-${randomBytes(4).toString('hex')}`, `svc-bench-rounds-peer-${randomBytes(4).toString('hex')}`] : [];
    const cleanups: (() => Promise<void>)[] = [];
    try {
      if (prefixes.length > 0) {
        const probeClient = await RedisProbe.connect(url);
        if (probeClient === undefined) throw new Skip(`Redis does not answer at ${url}`);
        cleanups.push(async () => {
          let deleted = 0;
          for (const prefix of prefixes) deleted += await probeClient.deleteContaining(prefix);
          log(`  deleted ${deleted} Redis keys under ${prefixes.join(', ')}`);
          await probeClient.close();
        });
      }
      const redisOf = (i: number) => (prefixes[i] !== undefined ? { url, prefix: prefixes[i] } : undefined);
      const otherServer = pair === 'index-koa' ? 'koa-server' : pair === 'run-memory-peer' ? 'peers/koa-run-memory' : 'peers/koa-run-redis';
      const done: AlternatedRound[] = [];
      for (const n of roundsPerProcessPair(rounds)) {
        const project = await upForRounds('api', request, redisOf(0));
        try {
          const other = await upForRounds(otherServer, request, redisOf(1));
          try {
            // Fresh processes: each is warmed up as long as a table scenario first (its JIT's
            // tiers: without it a run start's first round read 282 µs a request, later ones 79–118 µs).
            const warm: LoadShape = { connections: roundShape.connections, warmupSeconds: 0, durationSeconds: Math.max(shape.warmupSeconds, roundShape.warmupSeconds) };
            await measureLoad(project.target, warm);
            await measureLoad(other.target, warm);
            const measured = await alternate(
              pair,
              n,
              () => measureLoad(project.target, roundShape, project.child.cpuMs),
              () => measureLoad(other.target, roundShape, other.child.cpuMs),
            );
            done.push(...measured.rounds);
          } finally {
            await other.child.stop();
          }
        } finally {
          await project.child.stop();
        }
      }
      return summarizeRounds(pair, done);
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup();
    }
  }

  /**
   * The insert one request at a time in alternated rounds: the API server and the Koa
   * insert peer up at once, each on a scripted TDS server of its own (as in the table),
   * each warmed up as long as the table's warm-up, then `rounds` measures of
   * `roundShape` each, in turn ({@link alternateLatency}). The peer's answer was checked
   * in the table's pass.
   */
  async function insertRounds(rounds: number, roundShape: LoadShape): Promise<LatencyPair> {
    const done: LatencyRound[] = [];
    for (const n of roundsPerProcessPair(rounds)) {
      const cleanups: (() => Promise<void>)[] = [];
      try {
        const tdsPort = async (): Promise<number> => {
          const tds = await startTdsServer();
          if ('skip' in tds) throw new Skip(tds.skip);
          cleanups.push(() => tds.stop());
          return tds.port;
        };
        const { server, account } = await startApiServer('rounds-api-insert', { logLevel: 'silent', sqlServerPort: await tdsPort() });
        cleanups.push(() => server.stop());
        const peerAccount = benchAccount();
        const peerPort = await freePort();
        const peerArgs = [JSON.stringify(peerConfig({ account: peerAccount, port: peerPort, egressPort: 0, logLevel: 'silent', sqlServerPort: await tdsPort() }))];
        const peer = await startServerChild({ command: benchChild(PEERS['peer-koa-insert'].child), args: peerArgs, port: peerPort, stderrFile: join(work, 'rounds-peer-insert.stderr') });
        cleanups.push(() => peer.stop());
        const projectTarget = insertRequest(server.port, account);
        const peerTarget = insertRequest(peerPort, peerAccount);
        const warm = { warmupSeconds: 0, durationSeconds: Math.max(shape.warmupSeconds, roundShape.warmupSeconds) };
        await overHttp(projectTarget, 201, undefined, warm);
        await overHttp(peerTarget, 201, undefined, warm);
        const measured = await alternateLatency(
          n,
          () => overHttp(projectTarget, 201, server.cpuMs, roundShape),
          () => overHttp(peerTarget, 201, peer.cpuMs, roundShape),
        );
        done.push(...measured.rounds);
      } finally {
        for (const cleanup of cleanups.reverse()) await cleanup();
      }
    }
    return summarizeLatencyRounds(done);
  }

  const plan: [ScenarioName, () => Promise<LoadResult>][] = [
    ['node-http', () => baseline('node-http-server')],
    ['koa', () => baseline('koa-server')],
    ['index', () => indexScenario()],
    ['run-memory', () => runInMemory('run-memory', 'silent')],
    ['peer-koa-run-memory', () => peerScenario('peer-koa-run-memory')],
    ['peer-fastify-run-memory', () => peerScenario('peer-fastify-run-memory')],
    ['run-memory-info', () => runInMemory('run-memory-info', 'info')],
    ['run-redis', () => runOnRedis()],
    ['peer-koa-run-redis', () => peerScenario('peer-koa-run-redis')],
    ['insert-sqlserver', () => insertOnSqlServer()],
    ['peer-koa-insert', () => peerScenario('peer-koa-insert')],
  ];
  try {
    for (const [scenario, measure] of plan) {
      if (!wanted.has(scenario)) continue;
      log(`${scenario}: ${SCENARIOS[scenario]}`);
      try {
        rows.push({ scenario, label: SCENARIOS[scenario], result: await measure() });
        rows.push(...extraRows.splice(0));
      } catch (error) {
        if (!(error instanceof Skip)) throw error;
        log(`  skipped: ${error.message}`);
        rows.push({ scenario, label: SCENARIOS[scenario], skip: error.message });
      }
    }
    if (wanted.has(UPLOAD_SCENARIO)) {
      log(`${UPLOAD_SCENARIO}: ${SCENARIOS[UPLOAD_SCENARIO]}`);
      try {
        upload = { label: SCENARIOS[UPLOAD_SCENARIO], result: await uploadScenario() };
      } catch (error) {
        if (!(error instanceof Skip)) throw error;
        log(`  skipped: ${error.message}`);
        upload = { label: SCENARIOS[UPLOAD_SCENARIO], skip: error.message };
      }
    }
    const rounds = options.alternated?.rounds ?? 6;
    if (rounds > 0) {
      const roundSeconds = options.alternated?.roundSeconds ?? 3;
      const roundShape: LoadShape = { connections: shape.connections, warmupSeconds: Math.min(1, roundSeconds), durationSeconds: roundSeconds };
      const ran = (scenario: ScenarioName) => rows.some((r) => r.scenario === scenario && r.result !== undefined);
      const pairs: AlternatedPairName[] = [];
      if (ran('index') && ran(BASELINE)) pairs.push('index-koa');
      if (peerChecks.some((c) => c.scenario === 'peer-koa-run-memory')) pairs.push('run-memory-peer');
      if (peerChecks.some((c) => c.scenario === 'peer-koa-run-redis')) pairs.push('run-redis-peer');
      for (const pair of pairs) {
        log(`alternated rounds: ${ALTERNATED_PAIRS[pair]}, ${rounds} × 2 loads of ${roundShape.durationSeconds} s`);
        try {
          alternated.push(await alternatedRounds(pair, rounds, roundShape));
        } catch (error) {
          // Redis gone since the table's pass: the target reads the table, as without rounds.
          if (!(error instanceof Skip)) throw error;
          log(`  skipped: ${error.message}`);
        }
      }
      if (peerChecks.some((c) => c.scenario === 'peer-koa-insert')) {
        log(`alternated rounds: insert one request at a time ÷ Koa insert peer, ${rounds} × 2 measures of ${roundShape.durationSeconds} s`);
        try {
          insertLatencyRounds = await insertRounds(rounds, roundShape);
        } catch (error) {
          // No scripted TDS server since the table's pass: the target reads the table.
          if (!(error instanceof Skip)) throw error;
          log(`  skipped: ${error.message}`);
        }
      }
    }
    if (options.profile !== undefined) {
      const only = options.profile.only ?? ['index', 'run-start', 'run-redis', 'insert'];
      log(`profile: bare Koa, ${only.join(', ')} with --cpu-prof into ${options.profile.dir}`);
      profile = await profileScenarios(options.profile.dir, only);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const base = rows.find((r) => r.scenario === BASELINE)?.result?.requestsPerSecond;
  const withRatios = rows.map((r) =>
    r.result !== undefined && base !== undefined && base > 0 ? { ...r, ratio: r.result.requestsPerSecond / base } : r,
  );
  const cpu = cpus();
  return {
    shape,
    serverOrigin: origin,
    machine: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${process.platform}`,
    loadAverage: { before: loadBefore, after: loadavg()[0] ?? 0 },
    rows: withRatios,
    servers,
    ...(insertLatency !== undefined ? { insertLatency } : {}),
    ...(peerInsertLatency !== undefined ? { peerInsertLatency } : {}),
    ...(peerChecks.length > 0 ? { peerChecks } : {}),
    ...(indexBodyBytes !== undefined ? { indexBodyBytes } : {}),
    ...(redisRoundTrips !== undefined ? { redisRoundTrips } : {}),
    ...(profile !== undefined ? { profile } : {}),
    ...(upload !== undefined ? { upload } : {}),
    ...(alternated.length > 0 ? { alternated } : {}),
    ...(insertLatencyRounds !== undefined ? { insertLatencyRounds } : {}),
  };
}
