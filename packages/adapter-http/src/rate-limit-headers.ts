import type { RateLimitDecision } from '@svc/core';

/** Anything that takes headers one at a time, like Node's `ServerResponse`. */
export interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}

/**
 * Sets the headers of {@link rateLimitHeaders} on `target`, in the same order, without
 * building an object: every authenticated answer carries them.
 */
export function setRateLimitHeaders(target: HeaderSink, decision: RateLimitDecision): void {
  const limit = String(decision.limit);
  const remaining = String(decision.remaining);
  target.setHeader('RateLimit-Limit', limit);
  target.setHeader('RateLimit-Remaining', remaining);
  target.setHeader('RateLimit-Reset', String(decision.resetSeconds));
  target.setHeader('x-ratelimit-limit', limit);
  target.setHeader('x-ratelimit-remaining', remaining);
  target.setHeader('x-ratelimit-reset', String(decision.resetAt));
  if (!decision.allowed) target.setHeader('Retry-After', String(decision.retryAfterSeconds ?? Math.max(1, decision.resetSeconds)));
}

/**
 * The rate-limit headers of a decision: `RateLimit-Limit`, `RateLimit-Remaining`,
 * `RateLimit-Reset` (seconds, delta), their legacy `x-ratelimit-*` aliases
 * (`x-ratelimit-reset` is Unix time in seconds), and `Retry-After` (seconds) when refused.
 * Source: docs/api-spec.md "Errors" (429 headers); docs/CONTRACT.md "Rate limits".
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {};
  setRateLimitHeaders({ setHeader: (name, value) => (headers[name] = value) }, decision);
  return headers;
}
