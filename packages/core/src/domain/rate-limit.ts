import type { Principal } from './principal.js';

/**
 * One fixed-window limit to charge a point to.
 * Source: docs/api-spec.md "Limits"; docs/CONTRACT.md "Rate limits".
 */
export interface RateLimitRule {
  /** Window key, e.g. `credential:<account id>:<credential id>`; ids only, never a secret. */
  readonly key: string;
  /** Requests allowed per window, a whole number ≥ 1. */
  readonly limit: number;
  /** Window length in seconds, > 0. */
  readonly windowSeconds: number;
}

/** One fixed-window limit: `limit` requests per `windowSeconds` seconds. */
export interface WindowLimit {
  /** Requests allowed per window, a whole number ≥ 1. */
  readonly limit: number;
  /** Window length in seconds, > 0. */
  readonly windowSeconds: number;
}

/**
 * The rate limits the core enforces.
 * Source: docs/CONTRACT.md "Rate limits" (per credential, default 600 / 60 s) and
 * docs/api-spec.md "Limits" (per agent on run creation, 30 / 60 s).
 */
export interface RateLimitSettings {
  /** Per credential, on every authenticated operation. */
  readonly credential: WindowLimit;
  /** Per agent, on run creation, in addition to the credential limit. */
  readonly agent: WindowLimit;
}

/**
 * Defaults of {@link RateLimitSettings}: 600 / 60 s per credential, 30 / 60 s per agent.
 * The only place these numbers are written; the server's settings, the index and the
 * OpenAPI document take them from here.
 */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  credential: { limit: 600, windowSeconds: 60 },
  agent: { limit: 30, windowSeconds: 60 },
};

/**
 * The rules one authenticated request is charged: its credential's window always, and the
 * agent's window for a run start (valid, on a visible agent). Windows are keyed by
 * account *and* id, so that two accounts that happen to use the same credential or agent
 * id never share a window (docs/CONTRACT.md "Isolation between accounts").
 *
 * @param agentId - the agent whose window also applies; absent for every other request.
 */
export function rulesFor(principal: Principal, settings: RateLimitSettings, agentId?: string): RateLimitRule[] {
  // Literals of one shape, not spreads of the settings: a spread's copy cost every
  // authenticated request ~1k instructions (callgrind, bench/BENCHMARKS.md).
  const { credential, agent } = settings;
  const rules: RateLimitRule[] = [{ key: `credential:${principal.accountId}:${principal.credentialId}`, limit: credential.limit, windowSeconds: credential.windowSeconds }];
  if (agentId !== undefined) rules.push({ key: `agent:${principal.accountId}:${agentId}`, limit: agent.limit, windowSeconds: agent.windowSeconds });
  return rules;
}

/**
 * The state of one window as a {@link RateLimitStore} answers it (port
 * `ports/rate-limit-store.ts`).
 */
export interface WindowState {
  /** Requests counted in the window: after the charge when charged, as found when refused. */
  readonly count: number;
  /** Milliseconds until the window ends, > 0 (a window that was not open counts as a full new one). */
  readonly msLeft: number;
}

/**
 * The answer of the rate limits for one request.
 *
 * When several windows apply, it reports one of them (see {@link reportedDecision}).
 * Source: docs/CONTRACT.md "Rate limits"; docs/api-spec.md "Errors" (429 headers).
 */
export interface RateLimitDecision {
  /** False when the request is over a limit (answer 429). */
  readonly allowed: boolean;
  /** Requests allowed in the reported window (`RateLimit-Limit`). */
  readonly limit: number;
  /** Requests remaining in the reported window, ≥ 0 (`RateLimit-Remaining`). */
  readonly remaining: number;
  /** Seconds until the window resets, ≥ 0, a delta (`RateLimit-Reset`). */
  readonly resetSeconds: number;
  /** Unix time in seconds at which the window resets (`x-ratelimit-reset`). */
  readonly resetAt: number;
  /** Seconds to wait before retrying (`Retry-After`), ≥ 1; present when refused. */
  readonly retryAfterSeconds?: number;
  /** Key of the rule this decision reports. */
  readonly key: string;
}

/**
 * The decision of one window. Reset is rounded up to whole seconds, so it is never 0
 * while the window is open; `Retry-After` is at least 1.
 *
 * @param state - the window's count and milliseconds left, as the store answered.
 * @param nowMs - epoch milliseconds of the answer.
 * @param allowed - whether the request passes.
 */
export function decide(rule: RateLimitRule, state: WindowState, nowMs: number, allowed: boolean): RateLimitDecision {
  const resetSeconds = Math.max(0, Math.ceil(state.msLeft / 1000));
  const remaining = Math.max(0, rule.limit - state.count);
  const resetAt = Math.ceil((nowMs + state.msLeft) / 1000);
  // Two literals rather than a conditional spread (a copy on every decision).
  if (allowed) return { allowed, limit: rule.limit, remaining, resetSeconds, resetAt, key: rule.key };
  return { allowed, limit: rule.limit, remaining, resetSeconds, resetAt, key: rule.key, retryAfterSeconds: Math.max(1, resetSeconds) };
}

/**
 * The one decision to report among the windows of a request, whose headers the answer
 * carries. Allowed: the window with the fewest requests remaining (the first of equals).
 * Refused: among the full windows only (the others were not charged and did not refuse),
 * the one that resets last, so that `Retry-After` names a time at which every refusing
 * window has reset (retrying after an earlier reset would only be refused again).
 * Source: docs/CONTRACT.md "Rate limits".
 *
 * @param states - one per rule, in the same order, as the store answered.
 * @param charged - whether the store charged the request (all windows) or refused it (none).
 * @throws RangeError when `rules` is empty or `states` does not match it (a bug).
 */
export function reportedDecision(rules: readonly RateLimitRule[], states: readonly WindowState[], charged: boolean, nowMs: number): RateLimitDecision {
  if (rules.length === 0 || states.length !== rules.length) throw new RangeError('reportedDecision needs one window state per rule');
  let pick: RateLimitDecision | undefined;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as RateLimitRule;
    const state = states[i] as WindowState;
    if (!charged && state.count < rule.limit) continue;
    const d = decide(rule, state, nowMs, charged);
    if (pick === undefined || (charged ? d.remaining < pick.remaining : d.resetSeconds > pick.resetSeconds)) pick = d;
  }
  // A refusal with no full window is a store that broke its contract; report the first.
  return pick ?? decide(rules[0] as RateLimitRule, states[0] as WindowState, nowMs, charged);
}
