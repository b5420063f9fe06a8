import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { closeConnections, ownConnections } from '../../../../tools/test-support/http-connections.js';
import { leakScan } from '../../../../tools/test-support/leak-scan.js';
import { freePort } from '../../../../tools/test-support/ports.js';

/** The repository root: tsx and the `source` condition resolve from there. */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/**
 * The built scripts {@link startServerProcess} and {@link startInstance} run, as `pnpm start`
 * and `pnpm worker` do, after {@link buildOnce}. Not the sources through tsx: tsx's loader
 * cost each start 0.5-1.2 s more to `/livez` (1.1-1.6 s against 0.6-0.9 s on 2 busy cores),
 * over about 35 starts a run of the suite.
 */
const BUILT = { main: 'examples/api-server/dist/main.js', worker: 'examples/api-server/dist/worker.js' } as const;
/** Node options that run the TypeScript sources (no build needed). */
export const FROM_SOURCE = ['--conditions=source', '--import', 'tsx'];

export { freePort };

/** A temporary directory, removed by `remove()`. */
export async function tempDir(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'svc-e2e-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** `text` parsed as YAML, or undefined when it is none (a test's deliberately broken file). */
function yamlOrUndefined(text: string): unknown {
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Writes `config` as YAML into `dir` and returns the file's path. An object without
 * `admin_listen` gets `admin_listen: {port: 0, worker_port: 0}`: servers and workers started
 * at the same time (and other suites on this machine) must not all bind the default
 * admin ports 9464 and 9465. Its secrets, digests, connection hosts, users and passwords
 * are registered with the leak scan (tools/test-support/leak-scan.ts `registerConfig`).
 */
export async function writeConfig(dir: string, config: unknown, name = 'config.yaml'): Promise<string> {
  const path = join(dir, name);
  const withAdmin = typeof config === 'object' && config !== null && !('admin_listen' in config) ? { ...config, admin_listen: { port: 0, worker_port: 0 } } : config;
  leakScan.registerConfig(typeof withAdmin === 'string' ? yamlOrUndefined(withAdmin) : withAdmin);
  await writeFile(path, typeof withAdmin === 'string' ? withAdmin : stringify(withAdmin));
  return path;
}

/** How a child process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child process with its output collected. */
export interface Child {
  readonly process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** Resolves at once when the process has already exited. */
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL when it has not exited within `graceMs`; resolves on exit. */
  kill(graceMs?: number): Promise<Exit>;
}

/** Spawns `node <FROM_SOURCE> script ...args` from the repository root. */
export function spawnNode(script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Child {
  return spawnChild(process.execPath, [...FROM_SOURCE, script, ...args], { env });
}

/** Options of {@link spawnChild}. */
export interface SpawnOptions {
  /** Added to this process's environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Its own process group, so that {@link signalGroup} reaches pnpm, its shell and node. */
  readonly detached?: boolean;
  /**
   * Scan its output with the leak scan (default true: a server or worker). False for
   * another tool (the compiler), whose output is no server's log.
   */
  readonly leakScan?: boolean;
}

/** What a child is, for a leak-scan place: its script (`src/main.ts`, `dist/main.js`) or its command line. */
function childName(command: string, args: readonly string[]): string {
  const script = args.find((a) => /\.(ts|js)$/u.test(a) && !a.startsWith('-'));
  return script !== undefined ? script.split('/').slice(-2).join('/') : [command.split('/').at(-1), ...args].join(' ').slice(0, 80);
}

/**
 * Spawns `command args` from the repository root, collecting its output; every line it
 * writes is scanned by the leak scan (unless `options.leakScan` is false), and the
 * sensitive values of `options.env` are registered with it.
 */
export function spawnChild(command: string, args: readonly string[], options: SpawnOptions = {}): Child {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  if (options.leakScan !== false) leakScan.watchProcess(child, childName(command, args), options.env);
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (err += c));
  let done = false;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  return {
    process: child,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => done,
    async kill(graceMs = 5000) {
      if (done) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
}

let built: Promise<void> | undefined;

/**
 * Brings examples/api-server/dist (and the packages it references) up to date with
 * `tsc -b examples/api-server`, once per test process: a no-op after `pnpm test`'s own
 * build, and what keeps a single test file run after an edit of the sources from testing a
 * stale build. Rejects with the compiler's output when it fails or takes over 120 s.
 */
export function buildOnce(): Promise<void> {
  built ??= (async () => {
    const tsc = spawnChild(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'examples/api-server'], { leakScan: false });
    // 120 s: a cold build of every referenced package on a busy 2-core machine takes about 40 s.
    const timer = setTimeout(() => tsc.process.kill('SIGKILL'), 120_000);
    const exit = await tsc.exited;
    clearTimeout(timer);
    if (exit.code !== 0) throw new Error(`tsc -b examples/api-server failed (${JSON.stringify(exit)}):\n${tsc.stdout()}\n${tsc.stderr()}`);
  })();
  return built;
}

/** Resolves after `ms` (the interval of a poll that has its own deadline). */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `child` itself (changed in place), whose `kill` now first closes the connections fetch
 * keeps to `urls` (the server's listeners, `http://127.0.0.1:<port>`;
 * tools/test-support/http-connections.ts), so that the server's drain does not wait 1 s
 * (examples/api-server/src/shutdown.ts `DRAIN_IDLE_CLOSE_MS`) for a kept-alive connection of
 * the tests to go idle long enough: a stop took ~1,015 ms, now ~15 ms. Every fetch to `urls`
 * goes through those connections from now on. Signals sent otherwise (`child.process.kill`)
 * leave the connections as they are.
 * @throws TypeError when a URL is not absolute.
 */
export function closeConnectionsOnKill<T extends Child>(child: T, urls: readonly string[]): T {
  ownConnections(...urls);
  const kill = child.kill.bind(child);
  return Object.assign(child, {
    kill(graceMs?: number): Promise<Exit> {
      // Not awaited: a request still in flight (an event stream) ends only when the server stops.
      void closeConnections(...urls);
      return kill(graceMs);
    },
  });
}

/** A running API server process. */
export interface ServerProcess extends Child {
  readonly url: string;
  readonly egressUrl: string;
}

/**
 * Starts examples/api-server, built ({@link buildOnce}), with `--config configPath` and
 * waits until `GET {url}/livez` answers 200, polling until `deadlineMs` (counted from the
 * spawn). Rejects (with the child's stderr) when it exits first or the deadline passes; the
 * child is then killed.
 */
export async function startServerProcess(
  configPath: string,
  url: string,
  egressUrl: string,
  deadlineMs = 20_000,
  env: NodeJS.ProcessEnv = {},
): Promise<ServerProcess> {
  await buildOnce();
  const child = closeConnectionsOnKill(spawnChild(process.execPath, [BUILT.main, '--config', configPath], { env }), [url, egressUrl]);
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (child.hasExited()) {
      throw new Error(`the server exited before it was ready: ${JSON.stringify(await child.exited)}\n${child.stderr()}`);
    }
    try {
      const res = await fetch(`${url}/livez`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) {
        await res.arrayBuffer();
        return { ...child, url, egressUrl };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await child.kill(1000);
      throw new Error(`the server was not ready within ${deadlineMs} ms\n${child.stderr()}`);
    }
    await pause(50); // polling interval, bounded by the deadline above
  }
}

/** Spawns the built `examples/api-server/dist/<script>.js args` ({@link buildOnce} first), as {@link spawnNode} does a source file. */
export async function spawnBuilt(script: keyof typeof BUILT, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Child> {
  await buildOnce();
  return spawnChild(process.execPath, [BUILT[script], ...args], { env });
}

/** Runs the built `examples/api-server/dist/<script>.js` ({@link buildOnce} first) as {@link runNode} runs a source file. */
export async function runBuilt(script: keyof typeof BUILT, args: readonly string[], deadlineMs = 20_000): Promise<Exit & { stdout: string; stderr: string }> {
  const child = await spawnBuilt(script, args);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), deadlineMs);
  const exit = await child.exited;
  clearTimeout(timer);
  return { ...exit, stdout: child.stdout(), stderr: child.stderr() };
}

/** Runs a node script to completion; resolves with its exit and output. */
export async function runNode(script: string, args: readonly string[], deadlineMs = 20_000): Promise<Exit & { stdout: string; stderr: string }> {
  const child = spawnNode(script, args);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), deadlineMs);
  const exit = await child.exited;
  clearTimeout(timer);
  return { ...exit, stdout: child.stdout(), stderr: child.stderr() };
}

/**
 * Resolves with the child's exit and the ms from `since` to it; fails past `deadlineMs`
 * with the child's output in the message.
 */
export async function exitWithin(child: Child, deadlineMs: number, since = Date.now()): Promise<Exit & { ms: number }> {
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    child.exited,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no exit within ${deadlineMs} ms\n${child.stdout()}\n${child.stderr()}`)), deadlineMs))),
  ]).finally(() => clearTimeout(timer));
  return { ...exit, ms: Date.now() - since };
}

/**
 * The "listening" log line of a started server (its `port`, `egress_port`, `admin_port`),
 * polled every 20 ms. Rejects when the child exits first (with its stderr) or after
 * `deadlineMs` milliseconds.
 */
export async function listeningLine(child: Child, deadlineMs = 20_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (child.hasExited()) throw new Error(`the server exited: ${child.stderr()}`);
    const line = logLines(child).find((l) => l['msg'] === 'listening');
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`no "listening" line within ${deadlineMs} ms\n${child.stdout()}\n${child.stderr()}`);
    await pause(20);
  }
}

/** The pino JSON lines of a child's stdout (other lines, such as the dev banner, skipped). */
export function logLines(child: Pick<Child, 'stdout'>): Record<string, unknown>[] {
  return child
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * Starts `examples/api-server/dist/<script>.js` (built: {@link buildOnce}) on two fresh loopback ports with
 * `settings` (everything but the addresses, which this fills in) written to a file in
 * `dir`, and resolves once it is ready: `/readyz` answers 200 for `main`, the line
 * `worker started` for `worker` (polled until `deadlineMs`). Rejects, with its stderr,
 * when it exits first.
 */
export async function startInstance(
  dir: string,
  script: 'main' | 'worker',
  settings: Record<string, unknown>,
  deadlineMs = 20_000,
): Promise<Child & { readonly base: string }> {
  const [port, egressPort] = [await freePort(), await freePort()];
  const base = `http://127.0.0.1:${port}`;
  const config = await writeConfig(
    dir,
    { base_url: base, listen: { host: '127.0.0.1', port }, egress: { url: `http://127.0.0.1:${egressPort}`, listen: { host: '127.0.0.1', port: egressPort } }, ...settings },
    `${script}-${port}.yaml`,
  );
  await buildOnce();
  const child = closeConnectionsOnKill(spawnChild(process.execPath, [BUILT[script], '--config', config]), [base, `http://127.0.0.1:${egressPort}`]);
  const ready = script === 'main' ? () => fetch(`${base}/readyz`).then((r) => r.ok, () => false) : async () => child.stdout().includes('worker started');
  const deadline = Date.now() + deadlineMs;
  while (!child.hasExited() && !(await ready())) {
    if (Date.now() > deadline) {
      await child.kill(1000);
      throw new Error(`${script} was not ready within ${deadlineMs} ms\n${child.stderr()}`);
    }
    await pause(50); // polling interval, bounded by the deadline above
  }
  if (child.hasExited()) throw new Error(`${script} exited before it was ready: ${child.stderr()}`);
  return Object.assign(child, { base });
}
