import type { RateLimitRule, WindowState } from '../domain/rate-limit.js';
import type { Clock } from '../ports/clock.js';
import type { RateLimitCharge, RateLimitStore } from '../ports/rate-limit-store.js';
import { SystemClock } from './system-clock.js';

interface Window {
  count: number;
  /** Epoch milliseconds at which the window ends. */
  endsAt: number;
}

/**
 * Fixed windows in one process's memory; `chargeAll` runs synchronously, so it is atomic
 * on Node's single thread. Limits hold per process only: with several instances, use a
 * shared store (Redis). Expired windows are dropped on access and swept every
 * `sweepEvery` charges, so memory stays bounded by the keys seen in one window.
 */
export class InMemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, Window>();
  private charges = 0;

  /**
   * @param clock - time source (inject a ManualClock in tests).
   * @param sweepEvery - charges between sweeps of expired windows.
   */
  constructor(
    private readonly clock: Clock = new SystemClock(),
    private readonly sweepEvery = 10_000,
  ) {}

  /** See {@link RateLimitStore.chargeAll}; never rejects. */
  chargeAll(rules: readonly RateLimitRule[]): Promise<RateLimitCharge> {
    const now = this.clock.now().getTime();
    if (++this.charges % this.sweepEvery === 0) this.sweep(now);
    // A window that is not open is a new one, stored only when charged: a refused request
    // opens no window (like the Redis store's script).
    const windows = rules.map((rule): Window => {
      const open = this.windows.get(rule.key);
      return open !== undefined && open.endsAt > now ? open : { count: 0, endsAt: now + rule.windowSeconds * 1000 };
    });
    const charged = rules.every((rule, i) => (windows[i] as Window).count < rule.limit);
    if (charged) {
      rules.forEach((rule, i) => {
        const window = windows[i] as Window;
        window.count += 1;
        this.windows.set(rule.key, window);
      });
    }
    return Promise.resolve({ charged, windows: windows.map((w): WindowState => ({ count: w.count, msLeft: w.endsAt - now })) });
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
