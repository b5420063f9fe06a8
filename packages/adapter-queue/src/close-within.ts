import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { quitClient } from './redis-client.js';

/**
 * Ms a Redis QUIT may take on close. QUIT is one round trip that a live Redis answers in
 * well under a millisecond on a LAN; a paused Redis (SIGSTOP) or a half-open socket never
 * answers it (measured: ioredis `quit()` pending for ever), so without a bound a stop
 * would hang. After this the socket is dropped, which loses nothing: QUIT carries no
 * data and Redis frees the connection when it sees the close.
 */
export const QUIT_TIMEOUT_MS = 1_000;

/**
 * Waits for `work` at most `ms` milliseconds.
 * @returns `'done'` when it settled in time (resolved or rejected: a close that fails has
 * ended too), `'timeout'` otherwise (it keeps running).
 */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  if (!Number.isFinite(ms)) {
    await work.catch(() => undefined);
    return 'done';
  }
  const timer = new AbortController();
  try {
    return await Promise.race([
      work.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      sleep(Math.max(0, ms), 'timeout' as const, { signal: timer.signal }),
    ]);
  } finally {
    timer.abort();
  }
}

/**
 * Quits `client`, and drops its connection when Redis has not answered within
 * {@link QUIT_TIMEOUT_MS} (lost or paused).
 * @returns true when the QUIT was answered (or the client was already closed).
 */
export async function quitWithin(client: Redis): Promise<boolean> {
  const outcome = await settleWithin(quitClient(client), QUIT_TIMEOUT_MS);
  if (outcome === 'timeout') client.disconnect();
  return outcome === 'done';
}
