// redis-server children of a test's own, on spare loopback ports, for fault and settings
// tests: never the shared Redis on 6379 (ARCHITECTURE.md "Tests").
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { setTimeout as delay } from 'node:timers/promises';

/** A running `redis-server` child. */
export interface RedisServerChild {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Its own data directory (AOF and RDB files), removed by {@link RedisServerChild.stop}. */
  readonly dir: string;
  readonly process: ChildProcess;
  /** SIGKILLs it (if running), waits for its exit, removes its directory. */
  stop(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/**
 * Starts `redis-server` on a spare loopback port with nothing saved unless `args` says so
 * (`--save ''`), in a directory of its own, and resolves once it answers PING (polled,
 * 10 s deadline).
 */
export async function startRedisServer(args: readonly string[]): Promise<RedisServerChild> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'svc-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...args], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  probe.on('error', () => undefined);
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
      if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
      if (probe.status === 'ready' && (await probe.ping().catch(() => '')) === 'PONG') break;
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within 10 s`);
      await delay(50); // polling interval, bounded by the deadline
    }
  } finally {
    probe.disconnect();
  }
  return {
    port,
    url,
    dir,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
