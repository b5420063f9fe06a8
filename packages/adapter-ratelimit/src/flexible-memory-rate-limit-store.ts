import type { RateLimitCharge, RateLimitRule, RateLimitStore } from '@svc/core';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { shareOfLimit } from './rules.js';

/** The chain's next link waits for a charge's end, not its outcome: one function, not one a request. */
const settled = (): undefined => undefined;

/** Most prefixed keys a {@link FlexibleMemoryRateLimitStore} keeps; past it, it starts again from none. */
const MAX_PREFIXED_KEYS = 10_000;

/** Options of {@link FlexibleMemoryRateLimitStore}. */
export interface FlexibleMemoryRateLimitStoreOptions {
  /**
   * Divides every rule's limit: each rule allows `ceil(limit / limitDivisor)` requests
   * per window, at least 1. Default 1 (limits as given). The Redis limiter's insurance
   * sets it to the number of instances sharing the limits.
   */
  readonly limitDivisor?: number;
  /** Prefix of rate-limiter-flexible's in-memory keys; default `svc:rl`. */
  readonly keyPrefix?: string;
}

/**
 * Fixed-window {@link RateLimitStore} in one process's memory, on rate-limiter-flexible's
 * `RateLimiterMemory` (one per distinct `limit`/`windowSeconds` pair, since a
 * rate-limiter-flexible limiter has one fixed `points`/`duration`). Windows start at a
 * key's first charge and last `windowSeconds` (rate-limiter-flexible's "fixed window").
 *
 * All or none across the rules of one call (core `RateLimitStore` contract): every
 * `chargeAll` runs as one step of a promise chain, so no other call interleaves between
 * reading the windows of all rules and charging them. It first reads every rule's
 * window (`get`), refuses without charging anything when one is full, and only then
 * charges each rule one point with `penalty` (an unconditional increment: the check was
 * ours). rate-limiter-flexible's `RateLimiterUnion` is not used because it charges every
 * limiter before it knows whether one refuses (rate-limiter-flexible issue #280). The
 * chain costs a few microtasks per call, no I/O: `RateLimiterMemory` answers at once.
 *
 * Limits hold per process; with several instances use {@link RedisRateLimitStore}. Memory
 * is bounded by the keys seen in one window (rate-limiter-flexible drops a key when its
 * window ends).
 * Source: docs/api-spec.md "Limits"; docs/CONTRACT.md "Rate limits".
 */
export class FlexibleMemoryRateLimitStore implements RateLimitStore {
  /** Limiters by `windowSeconds`, then by `limit`: numbers as keys, no key string built per charge. */
  private readonly limiters = new Map<number, Map<number, RateLimiterMemory>>();
  private readonly limitDivisor: number;
  private readonly keyPrefix: string;
  /**
   * `${keyPrefix}:${rule key}` by rule key, made once: the limiters have no prefix of their
   * own and get this string, the same one every request, whose hash their Map lookups find
   * computed (rate-limiter-flexible's `getKey` built a new string at each `get` and
   * `penalty`, flattened and hashed each time). Bounded by {@link MAX_PREFIXED_KEYS}.
   */
  private readonly prefixedKeys = new Map<string, string>();
  private tail: Promise<unknown> = Promise.resolve();

  /** @throws RangeError when `limitDivisor` is not a whole number ≥ 1. */
  constructor(options: FlexibleMemoryRateLimitStoreOptions = {}) {
    this.limitDivisor = options.limitDivisor ?? 1;
    if (!Number.isInteger(this.limitDivisor) || this.limitDivisor < 1) throw new RangeError('limitDivisor must be a whole number ≥ 1');
    this.keyPrefix = options.keyPrefix ?? 'svc:rl';
  }

  /** Charges one point to every rule, all or none; see the class comment. Never rejects. */
  chargeAll(rules: readonly RateLimitRule[]): Promise<RateLimitCharge> {
    const effective = this.limitDivisor === 1 ? rules : rules.map((r) => ({ ...r, limit: shareOfLimit(r.limit, this.limitDivisor) }));
    const result = this.tail.then(() => this.checkThenCharge(effective));
    this.tail = result.catch(settled);
    return result;
  }

  /** Runs alone on the chain; see {@link FlexibleMemoryRateLimitStore.chargeAll}. */
  private async checkThenCharge(rules: readonly RateLimitRule[]): Promise<RateLimitCharge> {
    const limiters = rules.map((rule) => this.limiterFor(rule));
    const keys = rules.map((rule) => this.prefixed(rule.key));
    // One promise per rule, the library's own: no async closure around each read.
    const found = await Promise.all(rules.map((_rule, i) => (limiters[i] as RateLimiterMemory).get(keys[i] as string)));
    const states = rules.map((rule, i) => {
      const current = found[i] ?? null;
      // A window whose end has passed may still be stored until its timer fires.
      const open = current !== null && current.msBeforeNext > 0;
      return { rule, key: keys[i] as string, limiter: limiters[i] as RateLimiterMemory, count: open ? current.consumedPoints : 0, msLeft: open ? current.msBeforeNext : rule.windowSeconds * 1000 };
    });
    if (states.some((s) => s.count >= s.rule.limit)) {
      return { charged: false, windows: states.map((s) => ({ count: s.count, msLeft: s.msLeft })) };
    }
    const charged = await Promise.all(states.map((s) => s.limiter.penalty(s.key, 1)));
    return {
      charged: true,
      windows: states.map((s, i) => {
        const res = charged[i];
        const count = res?.consumedPoints ?? s.count + 1;
        const msLeft = res !== undefined && res.msBeforeNext > 0 ? res.msBeforeNext : s.rule.windowSeconds * 1000;
        return { count, msLeft };
      }),
    };
  }

  /** The stored key of a rule key: `${keyPrefix}:${key}`, as rate-limiter-flexible's own prefix would make it. */
  private prefixed(key: string): string {
    let stored = this.prefixedKeys.get(key);
    if (stored === undefined) {
      if (this.prefixedKeys.size >= MAX_PREFIXED_KEYS) this.prefixedKeys.clear();
      stored = `${this.keyPrefix}:${key}`;
      this.prefixedKeys.set(key, stored);
    }
    return stored;
  }

  private limiterFor(rule: RateLimitRule): RateLimiterMemory {
    let byLimit = this.limiters.get(rule.windowSeconds);
    if (byLimit === undefined) this.limiters.set(rule.windowSeconds, (byLimit = new Map()));
    let limiter = byLimit.get(rule.limit);
    if (limiter === undefined) {
      // No prefix of the library's: the keys come prefixed ({@link FlexibleMemoryRateLimitStore.prefixed}).
      limiter = new RateLimiterMemory({ points: rule.limit, duration: rule.windowSeconds, keyPrefix: '' });
      byLimit.set(rule.limit, limiter);
    }
    return limiter;
  }
}
