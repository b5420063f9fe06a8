import { DependencyUnavailableError } from '@svc/core';

/**
 * Redis error replies that mean "the server cannot serve now" rather than "this command
 * is wrong": loading its data set after a restart, busy in a script, refusing writes
 * (persistence failure, replica, out of memory under `noeviction`), or a cluster/failover
 * in progress. Every other error reply is a bug in the command and stays a 500.
 */
const UNAVAILABLE_REPLIES = /^(LOADING|BUSY|MISCONF|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|OOM)\b/u;

/** ioredis's own messages for a connection that is gone, not writeable or silent (ioredis 6 source). */
const CONNECTION_MESSAGES = /^(Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false|Command timed out|Socket timeout\.|connect ETIMEDOUT)/u;

/** Socket error codes of a peer that cannot be reached or went away. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Whether `error`, thrown by an ioredis call, means Redis is unreachable or cannot serve:
 * connection refused, reset or closed, stream not writeable with the offline queue off,
 * `MaxRetriesPerRequestError`, a command timeout, and the error replies of
 * {@link UNAVAILABLE_REPLIES}. Anything else (a wrong command, a corrupt record, our
 * own bug) is not: it stays a 500, so that it is seen and fixed rather than retried.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (error instanceof DependencyUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  if (error.name === 'ReplyError') return UNAVAILABLE_REPLIES.test(error.message);
  if (error.name === 'MaxRetriesPerRequestError' || error.name === 'AbortError') return true;
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && NETWORK_CODES.has(code)) || CONNECTION_MESSAGES.test(error.message);
}

/**
 * Runs `operation` (Redis calls only) and bounds it: it rejects with the core's
 * {@link DependencyUnavailableError} (`dependency`, the cause kept for logs, never sent)
 * when Redis is unreachable or cannot serve ({@link isRedisUnavailable}), or when no
 * answer came within `timeoutMs` (a paused server: the socket stays open, nothing
 * answers). Other failures (bugs) are rethrown as they are.
 *
 * The deadline is ours and not only ioredis `commandTimeout`, because one operation may
 * be several commands (a NOSCRIPT miss, then EVAL) and its bound is per operation.
 * Source: docs/CONTRACT.md "Dependencies and faults" (503 within `dependency_timeout_ms`).
 *
 * @param timeoutMs - the bound in ms; `undefined` waits as long as the client does
 *   (workers, whose clients wait out an outage).
 */
export async function guardRedis<T>(dependency: string, timeoutMs: number | undefined, operation: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const running = operation();
  const attempts: Promise<T>[] = [running];
  if (timeoutMs !== undefined) {
    attempts.push(
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DependencyUnavailableError(dependency, { cause: new Error(`no answer within ${timeoutMs} ms`) })), timeoutMs);
      }),
    );
    // The late outcome of an abandoned operation must not become an unhandled rejection.
    running.catch(() => undefined);
  }
  try {
    return await Promise.race(attempts);
  } catch (error) {
    if (error instanceof DependencyUnavailableError) throw error;
    if (isRedisUnavailable(error)) throw new DependencyUnavailableError(dependency, { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
