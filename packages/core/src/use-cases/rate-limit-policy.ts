import { domainError, type DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import {
  DEFAULT_RATE_LIMITS,
  reportedDecision,
  rulesFor,
  type RateLimitDecision,
  type RateLimitRule,
  type RateLimitSettings,
  type WindowLimit,
} from '../domain/rate-limit.js';
import type { Clock } from '../ports/clock.js';
import type { RateLimitStore } from '../ports/rate-limit-store.js';
import { SystemClock } from '../memory/system-clock.js';

/**
 * The rate-limit charge of one authenticated request: every authenticated request passes
 * it exactly once, whatever happens after (an unreadable body, a missing agent, a body
 * that fails validation). The use case charges it at its step (a run start only knows
 * whether the agent's window applies once the body is valid and the agent visible); a
 * door that answers before the use case runs (an HTTP body that cannot be read) charges
 * it itself. Source: docs/CONTRACT.md "Rate limits"; docs/ARCHITECTURE.md "Style to follow".
 */
export interface RequestMeter {
  /**
   * Charges the request: its credential's window and, when `agentId` is given, that
   * agent's window too, all or none.
   * @returns the `rate_limited` error when a window is full, else `undefined`.
   * @throws Error when called a second time (a bug: a request is charged once).
   * @throws DependencyUnavailableError when the store is unreachable and has no fallback.
   */
  charge(agentId?: string): Promise<DomainError<'rate_limited'> | undefined>;
  /** True once {@link RequestMeter.charge} was called, even if it rejected. */
  readonly charged: boolean;
  /** The decision of the charge, whose headers the answer carries; `undefined` before it (or when unmetered). */
  readonly decision: RateLimitDecision | undefined;
}

class ChargeOnce implements RequestMeter {
  charged = false;
  decision: RateLimitDecision | undefined;

  constructor(
    private readonly policy: RateLimitPolicy,
    private readonly principal: Principal,
  ) {}

  charge(agentId?: string): Promise<DomainError<'rate_limited'> | undefined> {
    if (this.charged) return Promise.reject(new Error('RequestMeter.charge called twice: a request is charged exactly once'));
    this.charged = true;
    // `then`, not an async frame: one promise fewer on every authenticated request.
    return this.policy.decide(this.principal, agentId).then((decision) => {
      this.decision = decision;
      return decision.allowed ? undefined : rateLimited(decision);
    });
  }
}

/**
 * The meter of an in-process call that is not rate limited (an embedder that limits
 * elsewhere, a test): it never refuses and reports no decision.
 */
export const UNMETERED: RequestMeter = Object.freeze({
  charge: () => Promise.resolve(undefined),
  charged: false,
  decision: undefined,
});

function checkLimit(name: string, window: WindowLimit): void {
  if (!Number.isInteger(window.limit) || window.limit < 1) throw new RangeError(`rate limit ${name}: limit must be a whole number ≥ 1`);
  if (!(window.windowSeconds > 0) || !Number.isFinite(window.windowSeconds)) throw new RangeError(`rate limit ${name}: windowSeconds must be > 0`);
}

/** Most rule lists a {@link RateLimitPolicy} keeps; past it, it starts again from none. */
const MAX_CACHED_RULE_LISTS = 10_000;

/** One credential's rule lists: its window alone, and with each agent's. */
interface CachedRules {
  readonly credentialOnly: readonly RateLimitRule[];
  readonly withAgent: Map<string, readonly RateLimitRule[]>;
}

function freezeRules(rules: RateLimitRule[]): readonly RateLimitRule[] {
  for (const rule of rules) Object.freeze(rule);
  return Object.freeze(rules);
}

/**
 * The rate-limit rules of the API as domain code: which windows a request is charged
 * ({@link rulesFor}: the credential's, plus the agent's on a run start), all or none
 * (the store's atomic `chargeAll`), and which window's headers the answer reports
 * ({@link reportedDecision}). The store only counts.
 * Source: docs/api-spec.md "Limits"; docs/CONTRACT.md "Rate limits".
 */
export class RateLimitPolicy {
  /**
   * {@link rulesFor}'s lists, by account, credential and agent, made once: the same key
   * strings every request, so that the store's lookups find their hash computed (keys
   * built per request were flattened and hashed at each of the store's lookups; with the
   * memory store's prefixed keys made once too, a run start went from 262 712 to 254 726
   * instructions, callgrind, 2026-11-28, bench/BENCHMARKS.md). Bounded by
   * {@link MAX_CACHED_RULE_LISTS}; only authenticated principals and visible agents reach it.
   */
  private readonly ruleLists = new Map<string, Map<string, CachedRules>>();
  private cachedLists = 0;

  /**
   * @param store - where windows are counted (memory or Redis).
   * @param settings - the limits; default {@link DEFAULT_RATE_LIMITS}.
   * @param clock - the time `resetAt` is computed from.
   * @throws RangeError when a limit is not a whole number ≥ 1 or a window not > 0 seconds.
   */
  constructor(
    private readonly store: RateLimitStore,
    readonly settings: RateLimitSettings = DEFAULT_RATE_LIMITS,
    private readonly clock: Clock = new SystemClock(),
  ) {
    checkLimit('credential', settings.credential);
    checkLimit('agent', settings.agent);
  }

  /** A new meter for one request of `principal`; see {@link RequestMeter}. */
  meterFor(principal: Principal): RequestMeter {
    return new ChargeOnce(this, principal);
  }

  /**
   * Charges `principal`'s windows (and `agentId`'s) and decides; prefer
   * {@link RateLimitPolicy.meterFor}, which guards against a second charge.
   * @throws DependencyUnavailableError when the store is unreachable and has no fallback.
   */
  decide(principal: Principal, agentId?: string): Promise<RateLimitDecision> {
    let rules: readonly RateLimitRule[];
    try {
      rules = this.rulesOf(principal, agentId);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.store.chargeAll(rules).then((charge) => reportedDecision(rules, charge.windows, charge.charged, this.clock.now().getTime()));
  }

  /** {@link rulesFor}'s list for `principal` (and `agentId`), the same frozen one every time (see `ruleLists`). */
  private rulesOf(principal: Principal, agentId: string | undefined): readonly RateLimitRule[] {
    let byCredential = this.ruleLists.get(principal.accountId);
    let cached = byCredential?.get(principal.credentialId);
    if (cached === undefined) {
      if (this.cachedLists >= MAX_CACHED_RULE_LISTS) {
        this.ruleLists.clear();
        this.cachedLists = 0;
        byCredential = undefined;
      }
      if (byCredential === undefined) this.ruleLists.set(principal.accountId, (byCredential = new Map()));
      cached = { credentialOnly: freezeRules(rulesFor(principal, this.settings)), withAgent: new Map() };
      byCredential.set(principal.credentialId, cached);
      this.cachedLists += 1;
    }
    if (agentId === undefined) return cached.credentialOnly;
    let rules = cached.withAgent.get(agentId);
    if (rules === undefined) {
      if (this.cachedLists >= MAX_CACHED_RULE_LISTS) return rulesFor(principal, this.settings, agentId);
      cached.withAgent.set(agentId, (rules = freezeRules(rulesFor(principal, this.settings, agentId))));
      this.cachedLists += 1;
    }
    return rules;
  }
}

/**
 * The `rate_limited` error for a refused decision; `detail` says which window and when
 * to retry (seconds).
 */
export function rateLimited(decision: RateLimitDecision): DomainError<'rate_limited'> {
  const which = decision.key.startsWith('agent:') ? 'this agent' : 'this credential';
  const retry = decision.retryAfterSeconds ?? decision.resetSeconds;
  return domainError('rate_limited', `Rate limit exceeded for ${which}: ${decision.limit} requests per window; retry in ${retry} seconds.`);
}
