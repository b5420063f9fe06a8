import type { RateLimitDecision, RateLimitRule } from '../domain/rate-limit.js';

/**
 * Fixed-window rate limiter.
 *
 * Contract: `consume` takes one point from every rule, all or none: when any rule is
 * over its limit, no rule's counter is charged, the result has `allowed: false` and
 * reports the refusing rule (with `retryAfterSeconds`); when all pass, every counter is
 * charged and the rule with the fewest requests remaining is reported. Windows are in
 * seconds. It rejects only when its store is unreachable and it has no fallback.
 * Source: api-spec.md "Limits"; CONTRACT.md "Rate limits".
 */
export interface RateLimiter {
  /**
   * @param rules - one or more rules, keys distinct.
   * @returns the decision for this request.
   */
  consume(rules: readonly RateLimitRule[]): Promise<RateLimitDecision>;
}
