import type { RateLimitRule, WindowState } from '../domain/rate-limit.js';

/** What {@link RateLimitStore.chargeAll} did, with one window state per rule, in order. */
export interface RateLimitCharge {
  /** True when every window was charged one point; false when none was. */
  readonly charged: boolean;
  /** `windows[i]` is the state of `rules[i]`'s window: after the charge, or as found. */
  readonly windows: readonly WindowState[];
}

/**
 * Where fixed windows are counted (memory, Redis). A store counts; the core decides
 * (which windows apply, which one the answer reports: `RateLimitPolicy`).
 *
 * Contract (checked by `rateLimitStoreContract` in `@svc/core/testing`):
 * - `chargeAll` is atomic and all or none: when every rule's window holds fewer than
 *   `limit` requests, each is charged one point and the counts after are answered; when
 *   any is full, nothing is charged and the counts as found are answered. No concurrent
 *   call ever sees a point that is later given back, so exactly `limit` of any number of
 *   concurrent requests pass.
 * - A window opens at the first charge of its key and lasts `windowSeconds` (fixed
 *   window); `msLeft` of a window that is not open is `windowSeconds * 1000`.
 * - It rejects only when the store is unreachable and it has no fallback (with the
 *   core's `DependencyUnavailableError`).
 * Source: docs/api-spec.md "Limits"; docs/CONTRACT.md "Rate limits".
 */
export interface RateLimitStore {
  /**
   * @param rules - one or more rules with distinct keys (the core builds them).
   * @returns whether the request was charged, and every window's state.
   */
  chargeAll(rules: readonly RateLimitRule[]): Promise<RateLimitCharge>;
}
