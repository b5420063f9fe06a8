// A redis-server of a test's own, on a spare loopback port, that the test may kill, pause
// and restart (the shared Redis on 6379 is never touched by fault tests).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** AOF on, with `appendfsync always` (every acknowledged write is on disk). Default false. */
  readonly appendOnly?: boolean;
  /** More `redis-server` arguments, after those above (a later one wins), e.g. `['--maxmemory-policy', 'allkeys-lru']`. */
  readonly args?: readonly string[];
}

/** A redis-server child: its URL, and the faults a test can inflict on it. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL; resolves when the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: the socket stays open, nothing answers. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Starts it again on the same port and directory (after {@link RedisServer.kill}); resolves when it answers PING. */
  restart(): Promise<void>;
  /** Kills it (if alive) and removes its directory. */
  stop(): Promise<void>;
}

/** Resolves when a PING on `port` answers PONG; rejects after `deadlineMs`. */
async function waitForPing(port: number, child: ChildProcess, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`redis-server on ${port} exited (${child.exitCode ?? child.signalCode})`);
    const probe = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 500 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not listening yet, or still loading its AOF
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25)); // poll interval, bounded by the deadline
  }
}

/** Starts `redis-server` (on PATH) with `--save ''` and a directory of its own. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'svc-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--appendonly', options.appendOnly === true ? 'yes' : 'no'];
  if (options.appendOnly === true) args.push('--appendfsync', 'always');
  args.push(...(options.args ?? []));
  let child: ChildProcess;
  const launch = async (): Promise<void> => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    await waitForPing(port, child);
  };
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const kill = async (): Promise<void> => {
    if (!alive()) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    restart: launch,
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Asserts that `work` rejects with the core's `DependencyUnavailableError`, without the
 * server's port in its message, within `boundMs` + `slackMs` (slack for a loaded 2-core
 * machine): what every Redis adapter does when its own `server` is paused or killed
 * (docs/CONTRACT.md "Dependencies and faults").
 * @returns the milliseconds it took.
 */
export async function expectUnavailableWithin(server: Pick<RedisServer, 'port'>, work: () => Promise<unknown>, boundMs: number, slackMs: number): Promise<number> {
  const started = performance.now();
  const outcome = await work().catch((error: unknown) => error);
  const ms = performance.now() - started;
  // By name: this folder is outside the workspace packages (no @svc/core to import); the core sets it on the class.
  expect(outcome).to.be.instanceOf(Error);
  expect((outcome as Error).name).to.equal('DependencyUnavailableError');
  expect((outcome as Error).message).to.not.include(String(server.port));
  expect(ms).to.be.at.most(boundMs + slackMs);
  return ms;
}
