import type { RateLimitDecision, RateLimitRule } from '@svc/core';
import { tightestDecision } from '@svc/core';

/**
 * Checks the preconditions of `RateLimiter.consume` (core `ports/rate-limiter.ts`): one
 * or more rules, keys distinct, `limit` a whole number ≥ 0, `windowSeconds` > 0.
 *
 * @throws RangeError when a precondition fails (a bug in the caller, not a refusal).
 */
export function checkRules(rules: readonly RateLimitRule[]): void {
  if (rules.length === 0) throw new RangeError('consume needs at least one rate-limit rule');
  const keys = new Set<string>();
  for (const rule of rules) {
    // Rule keys name a credential or agent id, never a secret (core RateLimitRule), so
    // they may appear in the message.
    if (keys.has(rule.key)) throw new RangeError(`rate-limit rule key "${rule.key}" appears twice`);
    if (!Number.isInteger(rule.limit) || rule.limit < 0) throw new RangeError(`rate-limit rule "${rule.key}": limit must be a whole number ≥ 0`);
    if (!(rule.windowSeconds > 0) || !Number.isFinite(rule.windowSeconds)) {
      throw new RangeError(`rate-limit rule "${rule.key}": windowSeconds must be > 0`);
    }
    keys.add(rule.key);
  }
}

/**
 * The one decision to report among the per-rule decisions of one request.
 *
 * Core's `tightestDecision` picks a refusal first, else the fewest remaining; among
 * several refusals (all at remaining 0) it keeps the first. Refusals are put in order of
 * the latest reset first, so that `Retry-After` names a time at which every refusing
 * window has reset: retrying after the earlier reset would only be refused again.
 * Source: CONTRACT.md "Rate limits".
 */
export function reportedDecision(decisions: readonly RateLimitDecision[]): RateLimitDecision {
  const refused = decisions.filter((d) => !d.allowed).sort((a, b) => b.resetSeconds - a.resetSeconds);
  return tightestDecision(refused.length > 0 ? refused : decisions);
}

/**
 * A rule's limit divided among `instanceCount` instances: `ceil(limit / instanceCount)`,
 * at least 1. Used by the insurance limiter while Redis is unreachable, so that the
 * instances together allow about the shared limit (CONTRACT.md "Rate limits": limits hold
 * across every instance).
 */
export function shareOfLimit(limit: number, instanceCount: number): number {
  return Math.max(1, Math.ceil(limit / instanceCount));
}
