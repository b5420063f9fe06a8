import { Redis } from 'ioredis';
import type { RedisConnectionOptions } from './redis-client.js';
import { within } from './within.js';

/**
 * One Redis setting that breaks the promise "a run answered 202 is never lost" (CONTRACT
 * "Runs"), as read with `CONFIG GET`.
 */
export interface RedisDurabilityFinding {
  /** The Redis setting (`appendonly`, `appendfsync`, `maxmemory-policy`), or `CONFIG` when unreadable. */
  readonly setting: string;
  /** Its value on the server (`unreadable` when `CONFIG GET` was refused or failed). */
  readonly value: string;
  /** The value the promise needs. */
  readonly required: string;
  /** What is lost, in one sentence. */
  readonly risk: string;
}

/**
 * What the run queue needs of Redis. `appendfsync everysec` is accepted: Redis writes the
 * AOF before it answers, so a crash of the Redis process loses nothing; only a crash of
 * its host (power, kernel) can lose the last second. `always` closes that second too.
 */
const REQUIRED: readonly { setting: string; ok: (value: string) => boolean; required: string; risk: string }[] = [
  {
    setting: 'appendonly',
    ok: (v) => v === 'yes',
    required: 'yes',
    risk: 'a restart of Redis loses every queued run and every run record',
  },
  {
    setting: 'appendfsync',
    ok: (v) => v === 'always' || v === 'everysec',
    required: 'everysec or always',
    risk: 'a crash of the Redis host loses the writes of the last ~30 s, runs answered 202 among them',
  },
  {
    setting: 'maxmemory-policy',
    ok: (v) => v === 'noeviction',
    required: 'noeviction',
    risk: 'under memory pressure Redis evicts run records and queued jobs',
  },
];

/**
 * How long the check may take in all, in ms: it runs once at start, before the server
 * listens, and a Redis that does not answer within it is reported unreadable rather than
 * holding the start.
 */
const CHECK_TIMEOUT_MS = 2000;

/**
 * Reads the Redis settings that durable runs depend on (`CONFIG GET appendonly`,
 * `appendfsync`, `maxmemory-policy`, one command each so that Redis < 7 answers too) on a
 * short-lived client of its own, and returns those that break the promise.
 *
 * Managed services often refuse `CONFIG` (renamed or ACL-denied): that is one finding with
 * `setting: 'CONFIG'` and `value: 'unreadable'`, since nothing could be verified.
 *
 * Source: issue "Faults" part 5; Redis persistence documentation (AOF, `appendfsync`),
 * eviction policies. Never throws; never logs the URL (it may hold a password).
 *
 * @param redis - a `redis://` URL or ioredis options.
 */
export async function redisDurabilityFindings(redis: string | RedisConnectionOptions): Promise<RedisDurabilityFinding[]> {
  // One attempt, no retries, the whole probe under one deadline: a probe, not a client
  // that must ride out an outage. A paused Redis accepts the TCP connection (the kernel
  // does) and then answers nothing, so only the overall deadline bounds it.
  const options = { lazyConnect: true, connectTimeout: CHECK_TIMEOUT_MS, maxRetriesPerRequest: 0, enableReadyCheck: false, retryStrategy: () => null };
  const client = typeof redis === 'string' ? new Redis(redis, options) : new Redis({ ...redis, ...options });
  // Its failures are the finding below; a probe that never reconnects has nothing to log.
  client.on('error', () => undefined);
  try {
    const read = await within(
      (async () => {
        await client.connect();
        return Promise.all(REQUIRED.map((r) => client.config('GET', r.setting) as Promise<string[]>));
      })(),
      CHECK_TIMEOUT_MS,
    );
    if (read.outcome !== 'done') throw new Error(read.outcome);
    return REQUIRED.flatMap((r, i) => {
      const value = read.value[i]?.[1] ?? 'unset';
      return r.ok(value) ? [] : [{ setting: r.setting, value, required: r.required, risk: r.risk }];
    });
  } catch {
    return [
      {
        setting: 'CONFIG',
        value: 'unreadable',
        required: 'CONFIG GET allowed',
        risk: 'the Redis settings durable runs need (appendonly yes, appendfsync everysec or always, maxmemory-policy noeviction) cannot be verified',
      },
    ];
  } finally {
    // Dropped, not quit: QUIT to a paused server would wait again.
    client.disconnect();
  }
}
