import type { Logger } from '@svc/core';
import { errorTypeOf } from '@svc/core';
import { Redis, type RedisOptions } from 'ioredis';

/**
 * ioredis connection options (host, port, db, username, password, tls, ...). ioredis's
 * `replyMapping` is left out: its declared type does not accept `undefined` under
 * `exactOptionalPropertyTypes`, and BullMQ needs the default (legacy) replies.
 */
export type RedisConnectionOptions = Omit<RedisOptions, 'replyMapping'>;

/**
 * ioredis reconnect delay in ms after the `times`-th failed attempt: 100 ms more per
 * attempt, at most 1000 ms, and never giving up. Never giving up is what lets the same
 * process serve again when Redis returns (no restart); the 1 s cap bounds how long after
 * Redis is back the first request still fails.
 */
export function reconnectDelayMs(times: number): number {
  return Math.min(times * 100, 1000);
}

/**
 * ioredis options of a client that serves HTTP requests (the run queue's `enqueue` and the
 * run store's `get` in the API process), where a lost Redis must become a 503 within
 * `operationTimeoutMs` (docs/CONTRACT.md "Dependencies and faults"):
 * - `enableOfflineQueue: false`: while disconnected a command fails at once instead of
 *   waiting in ioredis's queue for a reconnect that may never come.
 * - `maxRetriesPerRequest: 0`: a command in flight when the connection drops fails at
 *   once; the request has answered 503 by then, so a re-send after reconnecting would
 *   help nobody.
 * - `commandTimeout`: a paused server (SIGSTOP: the socket stays open, nothing answers)
 *   fails each command after `operationTimeoutMs` instead of never.
 * - `connectTimeout`: one connection attempt to a host that drops packets gives up after
 *   `operationTimeoutMs`, and the next attempt follows {@link reconnectDelayMs}.
 */
export function requestClientOptions(operationTimeoutMs: number): RedisConnectionOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: operationTimeoutMs,
    connectTimeout: operationTimeoutMs,
    retryStrategy: reconnectDelayMs,
  };
}

/**
 * ioredis options of a BullMQ worker's client: `maxRetriesPerRequest: null` (BullMQ
 * refuses a worker connection without it) with the offline queue on, so that the
 * worker's commands (its blocking job reads, lock renewals and the run status changes)
 * wait out an outage and apply once Redis is back, instead of failing a run that is
 * fine; no command timeout, because a blocking read legitimately waits. A worker serves
 * no request, so nobody waits on it. Reconnects follow {@link reconnectDelayMs}.
 */
export function workerClientOptions(): RedisConnectionOptions {
  return { maxRetriesPerRequest: null, enableOfflineQueue: true, retryStrategy: reconnectDelayMs };
}

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
    logger.warn({ component: role, error_type: errorTypeOf(error) }, 'Redis connection lost; reconnecting');
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info({ component: role }, 'Redis connection back');
  });
  return client;
}
