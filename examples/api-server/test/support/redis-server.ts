import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { eventually } from '@svc/core/testing';
import { Redis } from 'ioredis';
import { freePort, tempDir } from './server-process.js';

/** A `redis-server` child of the test on a spare loopback port, never the shared one. */
export interface RedisChild {
  readonly port: number;
  readonly url: string;
  readonly process: ChildProcess;
  /** SIGKILL (Redis lost). */
  kill(): Promise<void>;
  /** SIGSTOP (Redis paused: the socket stays open, nothing answers). */
  pause(): void;
  /** Kills the child (continuing it first when paused) and removes its directory. */
  remove(): Promise<void>;
}

/**
 * Starts `redis-server --port N --save '' --appendonly no` in a temporary directory and
 * waits until it answers PING (polling, 5 s deadline).
 */
export async function startRedisChild(): Promise<RedisChild> {
  const port = await freePort();
  const dir = await tempDir();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir.path], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 500, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await eventually(
      () =>
        probe.connect().then(
          () => probe.ping().then(() => true),
          () => false,
        ),
      `redis-server on port ${port}`,
      5_000,
      20,
    );
  } finally {
    probe.disconnect();
  }
  let gone = false;
  const kill = async (): Promise<void> => {
    if (gone) return;
    gone = true;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    url,
    process: child,
    kill,
    pause: () => child.kill('SIGSTOP'),
    async remove() {
      await kill();
      await dir.remove();
    },
  };
}
