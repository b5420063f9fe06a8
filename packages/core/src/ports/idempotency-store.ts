/**
 * An answer kept for replay: what a client gets again, byte for byte, when it repeats a
 * request with the same `Idempotency-Key`. Source: docs/CONTRACT.md "Runs lifecycle".
 */
export interface StoredAnswer {
  /** The HTTP status (2xx or 4xx: core `isReplayableStatus`). */
  readonly status: number;
  /**
   * The headers that belong to the answer itself (`Content-Type`, and `Location` of a run
   * start), by their name as sent. Per-request headers (`X-Request-Id`, rate limits) are
   * never stored: a replay carries its own.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, exactly as sent. */
  readonly body: Uint8Array;
}

/** What {@link IdempotencyStore.claim} found. */
export type IdempotencyClaim =
  /** The key was free: it is now held by this request until `complete`, `release` or the lease ends. */
  | { readonly outcome: 'claimed'; readonly token: string }
  /** Another request holds the key and has not answered yet (its lease runs). */
  | { readonly outcome: 'in_flight'; readonly fingerprint: string }
  /** A request with this key was answered: its fingerprint and its answer. */
  | { readonly outcome: 'completed'; readonly fingerprint: string; readonly answer: StoredAnswer };

/**
 * Where idempotency keys and their answers are kept (memory, Redis). The store keeps; the
 * core decides (which key, which fingerprint, what to replay or refuse, what is kept:
 * `ClaimIdempotencyKey`).
 *
 * Contract (checked by `idempotencyStoreContract` in `@svc/core/testing`):
 * - `claim` is atomic: of any number of concurrent claims of one free key, exactly one
 *   answers `claimed`; the others see `in_flight` with the winner's fingerprint.
 * - A claim lasts `leaseMs` (milliseconds) unless completed or released first; after it, the
 *   key is free again (a process that died does not lock a key for ever).
 * - `complete` keeps the answer for `ttlMs` (milliseconds) only if `token` still holds the
 *   key (a claim whose lease ended and was taken by another request is not overwritten),
 *   and says whether it did; `release` frees the key only if `token` holds it.
 * - `scope` is an opaque string of at most 64 characters (the core hashes account and key).
 * - Every method rejects only when the store is unreachable (with the core's
 *   `DependencyUnavailableError`), within the store's own bound.
 * Source: docs/CONTRACT.md "Runs lifecycle"; docs/decisions.md "Idempotency keys".
 */
export interface IdempotencyStore {
  /**
   * Claims `scope` for a request of `fingerprint`, or tells what holds it.
   * @param leaseMs - how long the claim holds without `complete` or `release`, > 0.
   */
  claim(scope: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim>;
  /**
   * Keeps `answer` under `scope` for `ttlMs` (> 0), replacing the claim of `token`.
   * @returns false when `token` no longer holds `scope` (its lease ended): nothing kept.
   */
  complete(scope: string, token: string, answer: StoredAnswer, ttlMs: number): Promise<boolean>;
  /** Frees `scope` when `token` holds it (an answer that is not kept); else does nothing. */
  release(scope: string, token: string): Promise<void>;
}
