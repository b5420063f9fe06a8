import type { DomainError, DomainErrorCode } from '../domain/errors.js';
import { domainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { RateLimitDecision, RateLimitRule } from '../domain/rate-limit.js';
import type { Result } from '../domain/result.js';
import type { RateLimiter } from '../ports/rate-limiter.js';

/** One fixed-window limit: `limit` requests per `windowSeconds` seconds. */
export interface WindowLimit {
  /** Requests allowed per window, ≥ 1. */
  readonly limit: number;
  /** Window length in seconds, ≥ 1. */
  readonly windowSeconds: number;
}

/**
 * The rate limits the core enforces.
 * Source: CONTRACT.md "Rate limits" (per credential, default 600 / 60 s) and api-spec.md
 * "Limits" (per agent on run creation, 30 / 60 s).
 */
export interface RateLimitSettings {
  /** Per credential, on every authenticated operation. */
  readonly credential: WindowLimit;
  /** Per agent, on run creation, in addition to the credential limit. */
  readonly agent: WindowLimit;
}

/** Defaults of {@link RateLimitSettings}: 600 / 60 s per credential, 30 / 60 s per agent. */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  credential: { limit: 600, windowSeconds: 60 },
  agent: { limit: 30, windowSeconds: 60 },
};

/**
 * What an authenticated use case answers: its result, and the rate-limit decision of
 * the request, which the HTTP adapter turns into `RateLimit-*` headers on every answer
 * (CONTRACT.md "Rate limits").
 */
export interface Metered<T, C extends DomainErrorCode> {
  readonly result: Result<T, DomainError<C>>;
  readonly rateLimit: RateLimitDecision;
}

/**
 * The per-credential (and per-agent) limit policy, shared by every authenticated use
 * case so that embedders get it without HTTP.
 *
 * Each authenticated request is charged exactly once: one point of its credential's
 * window, plus one of the agent's window for a valid run start on a visible agent. The
 * charge is all or none (see {@link RateLimiter}), so a request refused by the agent
 * limit costs the credential nothing.
 */
export class RequestQuota {
  /**
   * @param limiter - the rate limiter (memory or Redis).
   * @param settings - the limits; defaults to {@link DEFAULT_RATE_LIMITS}.
   */
  constructor(
    private readonly limiter: RateLimiter,
    private readonly settings: RateLimitSettings = DEFAULT_RATE_LIMITS,
  ) {}

  /** The rule of a credential's window. */
  credentialRule(principal: Principal): RateLimitRule {
    return { key: `credential:${principal.credentialId}`, ...this.settings.credential };
  }

  /** The rule of an agent's window. */
  agentRule(agentId: string): RateLimitRule {
    return { key: `agent:${agentId}`, ...this.settings.agent };
  }

  /**
   * Charges one point to the credential, and to the agent when `agentId` is given.
   * @returns the decision to report; `allowed: false` means answer `rate_limited`.
   */
  charge(principal: Principal, agentId?: string): Promise<RateLimitDecision> {
    const rules = [this.credentialRule(principal)];
    if (agentId !== undefined) rules.push(this.agentRule(agentId));
    return this.limiter.consume(rules);
  }
}

/**
 * The `rate_limited` error for a refused decision; `detail` says which window and when
 * to retry (seconds).
 */
export function rateLimited(decision: RateLimitDecision): DomainError<'rate_limited'> {
  const which = decision.key.startsWith('agent:') ? 'this agent' : 'this credential';
  const retry = decision.retryAfterSeconds ?? decision.resetSeconds;
  return domainError(
    'rate_limited',
    `Rate limit exceeded for ${which}: ${decision.limit} requests per window; retry in ${retry} seconds.`,
  );
}
