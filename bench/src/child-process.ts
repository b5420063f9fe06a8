import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { REPO_ROOT, type NodeCommand } from './paths.js';

const execFileAsync = promisify(execFile);

/** A server started as a child process, answering `GET /livez` on loopback. */
export interface ServerChild {
  readonly pid: number;
  /** Port of the listener the load goes to. */
  readonly port: number;
  /** Milliseconds from `spawn` to the first `200` of `GET /livez`. */
  readonly startMs: number;
  /** Resident set size of the child now, in bytes. */
  rssBytes(): Promise<number>;
  /** CPU time the child has used so far (all threads, user + system), ms; `undefined` off Linux. */
  cpuMs(): Promise<number | undefined>;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). Idempotent. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines the child wrote to stderr (for error messages). */
  stderrTail(): string;
}

/** How to start a {@link ServerChild}. */
export interface ServerChildOptions {
  readonly command: NodeCommand;
  /** Extra Node flags before the script (e.g. `--cpu-prof`). */
  readonly nodeFlags?: readonly string[];
  readonly args?: readonly string[];
  /** The port the child listens on (chosen by {@link freePort}). */
  readonly port: number;
  /** Variables added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** File the child's stdout goes to (its log lines); absent: discarded. */
  readonly stdoutFile?: string;
  /** File the child's stderr goes to. */
  readonly stderrFile: string;
  /** Give up when the child does not answer `/livez` within this many milliseconds. */
  readonly deadlineMs?: number;
  /**
   * A command the Node process runs under, with its arguments (e.g. `valgrind
   * --tool=callgrind ...`): spawned as `wrapper[0] ...wrapper[1..] node ...`. It must keep
   * the process id (valgrind does), which {@link ServerChild.pid} then names.
   */
  readonly wrapper?: readonly string[];
}

const running = new Set<ChildProcess>();

// Children must never outlive the bench, even when it dies of an exception.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A TCP port free on 127.0.0.1 right now (bound to port 0, then released). Another
 * process could take it before the child binds it; on loopback in a bench run that race
 * is accepted.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Status of `GET http://127.0.0.1:port/path`, or `undefined` when nothing answers. */
export function getStatus(port: number, path: string, timeoutMs = 1000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(undefined));
    req.end();
  });
}

/**
 * Resident set size of a process in bytes: `VmRSS` of `/proc/PID/status` on Linux,
 * else `ps -o rss=`.
 */
export async function rssOf(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/mu.exec(status)?.[1];
    if (kb !== undefined) return Number(kb) * 1024;
  } catch {
    // not Linux, or the process is gone: ask ps
  }
  const { stdout } = await execFileAsync('ps', ['-o', 'rss=', '-p', String(pid)]);
  return Number(stdout.trim()) * 1024;
}

let ticksPerSecond: Promise<number> | undefined;

/**
 * CPU time of a process so far, user + system of all its threads, in milliseconds:
 * `utime` + `stime` of `/proc/PID/stat` (clock ticks, `getconf CLK_TCK`, usually 100 per
 * second: 10 ms resolution, enough over a load of seconds). `undefined` when there is no
 * `/proc` (not Linux) or the process is gone.
 */
export async function cpuMsOf(pid: number): Promise<number | undefined> {
  ticksPerSecond ??= execFileAsync('getconf', ['CLK_TCK']).then(
    ({ stdout }) => Number(stdout.trim()) || 100,
    () => 100,
  );
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, in parentheses): state is
    // field 3, utime 14, stime 15 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / (await ticksPerSecond) : undefined;
  } catch {
    return undefined;
  }
}

function tailOf(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Spawns a server child (cwd: the repository root, so that `--import tsx` resolves) and
 * waits until `GET /livez` answers 200, polling every 5 ms.
 *
 * @throws Error with the child's stderr tail when it exits or misses the deadline.
 */
export async function startServerChild(options: ServerChildOptions): Promise<ServerChild> {
  const stdout = options.stdoutFile === undefined ? 'ignore' : openSync(options.stdoutFile, 'w');
  const stderr = openSync(options.stderrFile, 'w');
  const started = performance.now();
  const nodeArgs = [...options.command.execArgv, ...(options.nodeFlags ?? []), options.command.script, ...(options.args ?? [])];
  const [command, ...wrapperArgs] = options.wrapper ?? [process.execPath];
  const child = spawn(command ?? process.execPath, options.wrapper === undefined ? nodeArgs : [...wrapperArgs, process.execPath, ...nodeArgs], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', stdout, stderr],
  });
  // The child holds its own copies of the descriptors.
  if (typeof stdout === 'number') closeSync(stdout);
  closeSync(stderr);
  running.add(child);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      running.delete(child);
      resolve();
    });
  });
  const stderrTail = () => tailOf(options.stderrFile);
  const deadline = started + (options.deadlineMs ?? 20_000);
  let startMs: number | undefined;
  while (startMs === undefined) {
    if (exited) throw new Error(`${options.command.script} exited with ${String(child.exitCode ?? child.signalCode)} before listening:\n${stderrTail()}`);
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.command.script} did not answer /livez within ${options.deadlineMs ?? 20_000} ms:\n${stderrTail()}`);
    }
    if ((await getStatus(options.port, '/livez', 500)) === 200) startMs = performance.now() - started;
    else await sleep(5);
  }
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid ?? -1,
    port: options.port,
    startMs,
    rssBytes: async () => {
      if (exited) throw new Error(`${options.command.script} exited with ${String(child.exitCode ?? child.signalCode)}:\n${stderrTail()}`);
      return rssOf(child.pid ?? -1);
    },
    cpuMs: () => cpuMsOf(child.pid ?? -1),
    stderrTail,
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        if (exited) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exit;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
