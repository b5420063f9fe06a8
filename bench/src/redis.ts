import { Redis } from 'ioredis';

/** Redis round trips the server made for some requests, as seen by `MONITOR`. */
export interface RoundTrips {
  /** Requests sent while monitoring. */
  readonly requests: number;
  /** Round trips touching a rate-limit key (see {@link isRateLimitKey}), per request. */
  readonly limitsPerRequest: number;
  /** Every other round trip under the prefix (queue, run store), per request. */
  readonly othersPerRequest: number;
  /** The distinct commands seen, e.g. `evalsha`, `multi/exec`. */
  readonly commands: readonly string[];
}

/**
 * Whether a key under the bench's prefix is a rate-limit counter. The limiter's key
 * naming is the server's choice: the remainder after the prefix starting with `rl`
 * (`<prefix>:rl:...`, also `<prefix>:rlcredential:...`), or naming a rate limit or a
 * limiter anywhere, counts.
 */
export function isRateLimitKey(keyAfterPrefix: string): boolean {
  return /^[:{}]*(rl|rate[-_]?limit|limit)/iu.test(keyAfterPrefix) || /(^|[^a-z])(rate[-_]?limits?)([^a-z]|$)/iu.test(keyAfterPrefix);
}

/** The bench's view of Redis: keys under a prefix, and `MONITOR` counts. */
export class RedisProbe {
  private constructor(private readonly client: Redis) {}

  /**
   * Connects, or returns `undefined` when Redis does not answer within `timeoutMs`.
   * @param url - e.g. `redis://127.0.0.1:6379`.
   */
  static async connect(url: string, timeoutMs = 2000): Promise<RedisProbe | undefined> {
    const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return new RedisProbe(client);
    } catch {
      client.disconnect();
      return undefined;
    }
  }

  /** Keys whose name contains `prefix` (BullMQ may put its own prefix first). */
  async keysContaining(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.client.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return keys;
  }

  /** Deletes every key whose name contains `prefix`; returns how many. */
  async deleteContaining(prefix: string): Promise<number> {
    const keys = await this.keysContaining(prefix);
    for (let i = 0; i < keys.length; i += 500) await this.client.unlink(...keys.slice(i, i + 500));
    return keys.length;
  }

  /**
   * Counts the round trips to Redis that carry a key containing `prefix` while `act`
   * runs `requests` requests, with `MONITOR` on a second connection. A `MULTI`…`EXEC`
   * block is one round trip; commands run inside Lua scripts are not round trips.
   * Monitoring slows Redis: use it on a few sequential requests, never under load.
   */
  async countRoundTrips(prefix: string, requests: number, act: () => Promise<void>): Promise<RoundTrips> {
    // ioredis runs MONITOR on a duplicate of the client: its own connection.
    const monitor = await this.client.monitor();
    monitor.on('error', () => undefined);
    const open = new Map<string, { keys: string[] }>();
    const trips: { keys: string[]; command: string }[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return;
      const command = (args[0] ?? '').toLowerCase();
      const block = open.get(source);
      if (command === 'multi') {
        open.set(source, { keys: [] });
      } else if (block !== undefined && (command === 'exec' || command === 'discard')) {
        open.delete(source);
        trips.push({ keys: block.keys, command: 'multi/exec' });
      } else if (block !== undefined) {
        block.keys.push(...args.slice(1));
      } else {
        trips.push({ keys: args.slice(1), command });
      }
    });
    // Let MONITOR take effect before the first request.
    await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      await act();
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      monitor.disconnect();
    }
    let limits = 0;
    let others = 0;
    const commands = new Set<string>();
    for (const trip of trips) {
      const ours = trip.keys.filter((k) => k.includes(prefix));
      if (ours.length === 0) continue;
      commands.add(trip.command);
      if (ours.some((k) => isRateLimitKey(k.slice(k.indexOf(prefix) + prefix.length)))) limits += 1;
      else others += 1;
    }
    return { requests, limitsPerRequest: limits / requests, othersPerRequest: others / requests, commands: [...commands].sort() };
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
