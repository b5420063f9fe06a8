import type { RateLimitDecision, RateLimitRule } from '../domain/rate-limit.js';
import { tightestDecision } from '../domain/rate-limit.js';
import type { Clock } from '../ports/clock.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import { SystemClock } from './system-clock.js';

interface Window {
  count: number;
  /** Epoch milliseconds at which the window ends. */
  endsAt: number;
}

/**
 * Fixed-window limiter in one process's memory; all-or-none across rules (the whole
 * check-and-charge runs synchronously, so it is atomic on Node's single thread). Limits
 * hold per process only: with several instances, use the Redis limiter.
 * Expired windows are dropped on access and swept every `sweepEvery` charges, so memory
 * stays bounded by the keys seen in one window.
 */
export class InMemoryRateLimiter implements RateLimiter {
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

  consume(rules: readonly RateLimitRule[]): Promise<RateLimitDecision> {
    const now = this.clock.now().getTime();
    if (++this.charges % this.sweepEvery === 0) this.sweep(now);
    const current = rules.map((rule) => ({ rule, window: this.windowOf(rule, now) }));
    const refused = current.filter(({ rule, window }) => window.count >= rule.limit);
    if (refused.length > 0) {
      return Promise.resolve(tightestDecision(refused.map(({ rule, window }) => decide(rule, window, now, false))));
    }
    for (const { window } of current) window.count += 1;
    return Promise.resolve(tightestDecision(current.map(({ rule, window }) => decide(rule, window, now, true))));
  }

  private windowOf(rule: RateLimitRule, now: number): Window {
    let window = this.windows.get(rule.key);
    if (window === undefined || window.endsAt <= now) {
      window = { count: 0, endsAt: now + rule.windowSeconds * 1000 };
      this.windows.set(rule.key, window);
    }
    return window;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}

/**
 * Builds a decision from a window's state. Shared by limiter implementations so that
 * they round the same way: reset is rounded up to whole seconds (never 0 while the
 * window is open).
 *
 * @param rule - the rule.
 * @param window - `count` after the charge, `endsAt` in epoch ms.
 * @param now - epoch ms.
 * @param allowed - whether the request passes.
 */
export function decide(rule: RateLimitRule, window: { count: number; endsAt: number }, now: number, allowed: boolean): RateLimitDecision {
  const resetSeconds = Math.max(0, Math.ceil((window.endsAt - now) / 1000));
  return {
    allowed,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - window.count),
    resetSeconds,
    resetAt: Math.ceil(window.endsAt / 1000),
    key: rule.key,
    ...(allowed ? {} : { retryAfterSeconds: Math.max(1, resetSeconds) }),
  };
}

/** A limiter that allows everything (for embedders that limit elsewhere). */
export class UnlimitedRateLimiter implements RateLimiter {
  /** @param clock - time source of `resetAt`. */
  constructor(private readonly clock: Clock = new SystemClock()) {}

  consume(rules: readonly RateLimitRule[]): Promise<RateLimitDecision> {
    const first = rules[0];
    return Promise.resolve({
      allowed: true,
      limit: first?.limit ?? 0,
      remaining: first?.limit ?? 0,
      resetSeconds: first?.windowSeconds ?? 0,
      resetAt: Math.ceil(this.clock.now().getTime() / 1000) + (first?.windowSeconds ?? 0),
      key: first?.key ?? '',
    });
  }
}
