import { setTimeout as sleep } from 'node:timers/promises';

/** How a bounded wait of {@link within} ended. */
export type WithinOutcome<T> = { readonly outcome: 'done'; readonly value: T } | { readonly outcome: 'failed'; readonly error: unknown } | { readonly outcome: 'timeout' };

/**
 * Largest delay Node's timers take (2^31 − 1 ms, about 24.8 days): a longer or
 * non-finite one is clamped to 1 ms with a `TimeoutOverflowWarning`, which turned
 * "wait for ever" into "give up at once".
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits for `work` at most `ms` milliseconds, without cancelling it: `'done'` with its
 * value when it resolved in time, `'failed'` when it rejected in time, `'timeout'`
 * otherwise (it keeps running). A bound that is not finite, or longer than a Node timer
 * can hold, means no bound at all (no timer is set); a negative one means 0.
 * The one bounded wait of the stop and close paths (adapter-queue and the API server).
 */
export async function within<T>(work: Promise<T>, ms: number): Promise<WithinOutcome<T>> {
  const settled = work.then(
    (value): WithinOutcome<T> => ({ outcome: 'done', value }),
    (error: unknown): WithinOutcome<T> => ({ outcome: 'failed', error }),
  );
  if (!(ms <= MAX_TIMER_MS)) return settled;
  const timer = new AbortController();
  try {
    return await Promise.race([settled, sleep(Math.max(0, ms), { outcome: 'timeout' } as const, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

/** Ms left until `deadline` (a `Date.now()` value; `Infinity` for none), never negative. */
export function msUntil(deadline: number): number {
  return Math.max(0, deadline - Date.now());
}
