import type { RateLimitDecision } from '@svc/core';

/**
 * The rate-limit headers of a decision: `RateLimit-Limit`, `RateLimit-Remaining`,
 * `RateLimit-Reset` (seconds, delta), their legacy `x-ratelimit-*` aliases
 * (`x-ratelimit-reset` is Unix time in seconds), and `Retry-After` (seconds) when refused.
 * Source: api-spec.md "Errors" (429 headers); CONTRACT.md "Rate limits".
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
  };
  if (!decision.allowed) headers['Retry-After'] = String(decision.retryAfterSeconds ?? Math.max(1, decision.resetSeconds));
  return headers;
}
