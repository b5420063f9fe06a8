/**
 * Tells the time and waits. Injected so that tests control windows, expiry and every wait
 * of a worker (retry backoff) without real time passing (core `ManualClock`).
 */
export interface Clock {
  /** The current instant. */
  now(): Date;
  /**
   * Resolves once `ms` milliseconds have passed on this clock (at once for `ms` ≤ 0).
   * @throws the signal's reason (an `AbortError` by default) when `signal` aborts first.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
