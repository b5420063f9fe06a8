// Redis helpers shared by the tests of every package that talks to Redis.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis the adapter tests run against (docs/ARCHITECTURE.md "Tests"). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A client of the test Redis, or a skipped suite: without `CI` an unreachable Redis
 * skips the calling suite with a printed reason; with `CI` set it fails the suite, so
 * that CI never passes by skipping.
 */
export async function redisOrSkip(ctx: Mocha.Context): Promise<Redis> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1_000, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return client;
  } catch (error) {
    client.disconnect();
    const reason = `Redis at ${REDIS_URL} does not answer (${error instanceof Error ? error.message : String(error)})`;
    if (process.env.CI !== undefined) throw new Error(`${reason}; CI is set, so this fails instead of skipping`);
    console.log(`      skipped: ${reason}`);
    ctx.skip();
  }
}

/** A key prefix no other test run uses: `svc-test:<name>:<pid>:<random>:`. */
export function uniquePrefix(name: string): string {
  return `svc-test:${name}:${process.pid}:${randomUUID().slice(0, 8)}:`;
}

/** Deletes every key that starts with `prefix` (SCAN, never KEYS, on a shared server). */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
