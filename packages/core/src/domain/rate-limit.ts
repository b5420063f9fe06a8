/**
 * One fixed-window limit to consume a point from.
 * Source: api-spec.md "Limits"; CONTRACT.md "Rate limits".
 */
export interface RateLimitRule {
  /** Counter key, e.g. `credential:<id>` or `agent:<id>`; no secret in it. */
  readonly key: string;
  /** Requests allowed per window. */
  readonly limit: number;
  /** Window length in seconds. */
  readonly windowSeconds: number;
}

/**
 * The answer of a rate limiter for one request.
 *
 * When several rules apply, it is the one with fewer requests remaining (or the one
 * that refused). Source: CONTRACT.md "Rate limits"; api-spec.md "Errors" (429 headers).
 */
export interface RateLimitDecision {
  /** False when the request is over a limit (answer 429). */
  readonly allowed: boolean;
  /** Requests allowed in the current window (`RateLimit-Limit`). */
  readonly limit: number;
  /** Requests remaining in the current window, ≥ 0 (`RateLimit-Remaining`). */
  readonly remaining: number;
  /** Seconds until the window resets, ≥ 0, a delta (`RateLimit-Reset`). */
  readonly resetSeconds: number;
  /** Unix time in seconds at which the window resets (`x-ratelimit-reset`). */
  readonly resetAt: number;
  /** Seconds to wait before retrying (`Retry-After`); present when refused. */
  readonly retryAfterSeconds?: number;
  /** Key of the rule this decision reports. */
  readonly key: string;
}

/**
 * Picks the decision to report among several: a refusal first (of several refusals, the
 * one that resets last, so that `Retry-After` is long enough), else the one with the
 * fewest requests remaining. Source: CONTRACT.md "Rate limits".
 *
 * @throws RangeError when `decisions` is empty (a bug in the caller).
 */
export function tightestDecision(decisions: readonly RateLimitDecision[]): RateLimitDecision {
  let pick: RateLimitDecision | undefined;
  for (const d of decisions) {
    if (pick === undefined) pick = d;
    else if (pick.allowed && !d.allowed) pick = d;
    else if (!pick.allowed && !d.allowed && d.resetSeconds > pick.resetSeconds) pick = d;
    else if (pick.allowed && d.allowed && d.remaining < pick.remaining) pick = d;
  }
  if (pick === undefined) throw new RangeError('tightestDecision needs at least one decision');
  return pick;
}
