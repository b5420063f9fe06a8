import type { Logger } from '@svc/core';
import { Redis, type RedisOptions } from 'ioredis';
import { typeOf } from './run-lifecycle.js';

/**
 * ioredis connection options (host, port, db, username, password, tls, ...). ioredis's
 * `replyMapping` is left out: its declared type does not accept `undefined` under
 * `exactOptionalPropertyTypes`, and BullMQ needs the default (legacy) replies.
 */
export type RedisConnectionOptions = Omit<RedisOptions, 'replyMapping'>;

/**
 * A new ioredis client for `redis` (a `redis://` URL or options; never logged: it may hold
 * a password) with `overrides` on top. Connection errors are logged once per outage
 * (error code only) instead of once per reconnect attempt, and reconnection is logged.
 */
export function createRedisClient(redis: string | RedisConnectionOptions, overrides: RedisConnectionOptions, logger: Logger, role: string): Redis {
  const client = typeof redis === 'string' ? new Redis(redis, overrides) : new Redis({ ...redis, ...overrides });
  let down = false;
  client.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    logger.warn({ component: role, error_type: typeOf(error) }, 'Redis connection lost; reconnecting');
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info({ component: role }, 'Redis connection back');
  });
  return client;
}

/** Quits `client`, or drops the connection when quitting fails (already gone). */
export async function quitClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
