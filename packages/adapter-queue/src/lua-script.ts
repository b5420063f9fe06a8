import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA1 (`EVALSHA`), so that each call sends only the hash; when
 * the server does not know the script yet (`NOSCRIPT`: after a restart or `SCRIPT
 * FLUSH`), it is sent once in full with `EVAL`, which caches it. One round trip per call,
 * two on that first miss. This is not a retry of a failure: `NOSCRIPT` means nothing ran.
 */
export class LuaScript {
  private readonly sha: string;

  /** @param source - the script; KEYS and ARGV as documented where it is defined. */
  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script. @throws the Redis error (unreachable, script error). */
  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
