import { domainError, type DomainError } from '../domain/errors.js';
import {
  DEFAULT_IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_IN_USE_RETRY_AFTER_SECONDS,
  IDEMPOTENCY_TTL_MS,
  idempotencyScope,
  isReplayableStatus,
  parseIdempotencyKey,
  requestFingerprint,
} from '../domain/idempotency.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { IdempotencyStore, StoredAnswer } from '../ports/idempotency-store.js';

/** Input of {@link ClaimIdempotencyKey}. */
export interface ClaimIdempotencyKeyInput {
  /** The authenticated caller: keys are scoped to `principal.accountId`. */
  readonly principal: Principal;
  /** The `Idempotency-Key` header as sent; `undefined` when absent (nothing to do). */
  readonly key: string | undefined;
  /** True when the header line was sent more than once (refused: `validation_failed`). */
  readonly repeated?: boolean;
  /** The request method, e.g. `POST`. */
  readonly method: string;
  /** The request path as sent, e.g. `/api/v1/agents/a1/run`. */
  readonly path: string;
  /** The parsed JSON body the operation's use case receives (core `WireBody`), `undefined` when absent. */
  readonly body: unknown;
}

/**
 * A held key: the request runs its operation, then hands its answer to `finish` (kept when
 * replayable, else the key freed) or, when it failed without an answer (it threw), calls
 * `abandon` (the key freed).
 */
export interface IdempotencyClaimHandle {
  /**
   * Keeps `answer` for 24 h when its status is replayable (core `isReplayableStatus`),
   * else frees the key.
   * @returns `stored`, `released`, or `lost` when the claim's lease had ended and another
   *   request took the key (nothing kept).
   * @throws DependencyUnavailableError when the store is unreachable (the claim then ends
   *   with its lease).
   */
  finish(answer: StoredAnswer): Promise<'stored' | 'released' | 'lost'>;
  /**
   * Frees the key (the request failed without an answer of its own).
   * @throws DependencyUnavailableError when the store is unreachable.
   */
  abandon(): Promise<void>;
}

/** What {@link ClaimIdempotencyKey} decided. */
export type IdempotencyDecision =
  /** No `Idempotency-Key`: run the operation as usual. */
  | { readonly kind: 'none' }
  /** The same request was answered: send this answer again, with `Idempotent-Replayed: true`, without running the operation. */
  | { readonly kind: 'replay'; readonly answer: StoredAnswer }
  /** The key is this request's: run the operation, then `claim.finish(answer)`. */
  | { readonly kind: 'claimed'; readonly claim: IdempotencyClaimHandle };

/** Codes {@link ClaimIdempotencyKey} can produce. */
export type ClaimIdempotencyKeyErrorCode = 'validation_failed' | 'idempotency_key_in_use' | 'idempotency_key_reused';

/** Settings of {@link ClaimIdempotencyKey}, in milliseconds. */
export interface IdempotencySettings {
  /** How long an in-flight claim holds; default {@link DEFAULT_IDEMPOTENCY_LEASE_MS} (60 000). */
  readonly leaseMs?: number;
  /** How long an answer is replayed; default {@link IDEMPOTENCY_TTL_MS} (24 h). */
  readonly ttlMs?: number;
}

/**
 * The `Idempotency-Key` of a run start, row insert or row update (IETF httpapi draft
 * "The Idempotency-Key HTTP Header Field"; docs/CONTRACT.md "Runs lifecycle"):
 *
 * - no key: `none`; a key that is empty, longer than 255, not printable ASCII, or sent
 *   twice: `validation_failed` naming the header;
 * - the key is scoped to the caller's account and the request is fingerprinted (method,
 *   path, parsed body with member order ignored: core `requestFingerprint`);
 * - a free key is claimed for the lease (`claimed`); a key answered before for the same
 *   fingerprint: `replay` of that answer; for another fingerprint (answered or in flight):
 *   `idempotency_key_reused` (422); still in flight with the same fingerprint:
 *   `idempotency_key_in_use` (409) with `retryAfterSeconds`.
 *
 * The caller charges the request's rate limits: the operation charges a claimed request as
 * usual; every other outcome (a replay, a refusal) is charged to the credential only.
 * Source: docs/decisions.md "Idempotency keys".
 *
 * @throws DependencyUnavailableError when the store is unreachable (answer 503: nothing done).
 */
export class ClaimIdempotencyKey {
  private readonly leaseMs: number;
  private readonly ttlMs: number;

  /** @throws RangeError when `leaseMs` or `ttlMs` is not > 0. */
  constructor(
    private readonly store: IdempotencyStore,
    settings: IdempotencySettings = {},
  ) {
    this.leaseMs = settings.leaseMs ?? DEFAULT_IDEMPOTENCY_LEASE_MS;
    this.ttlMs = settings.ttlMs ?? IDEMPOTENCY_TTL_MS;
    if (!(this.leaseMs > 0) || !Number.isFinite(this.leaseMs)) throw new RangeError('idempotency leaseMs must be > 0');
    if (!(this.ttlMs > 0) || !Number.isFinite(this.ttlMs)) throw new RangeError('idempotency ttlMs must be > 0');
  }

  /** @returns what to do with the request, or an error with its code. */
  async execute(input: ClaimIdempotencyKeyInput): Promise<Result<IdempotencyDecision, DomainError<ClaimIdempotencyKeyErrorCode>>> {
    if (input.key === undefined && input.repeated !== true) return ok({ kind: 'none' });
    const key = parseIdempotencyKey(input.key ?? '', input.repeated ?? false);
    if (!key.ok) return key;
    const scope = idempotencyScope(input.principal.accountId, key.value);
    const fingerprint = requestFingerprint(input.method, input.path, input.body);
    const found = await this.store.claim(scope, fingerprint, this.leaseMs);
    if (found.outcome === 'claimed') return ok({ kind: 'claimed', claim: this.handle(scope, found.token) });
    if (found.fingerprint !== fingerprint) {
      return err(
        domainError(
          'idempotency_key_reused',
          'This Idempotency-Key was used with another request (method, path or body); send a new key for a new request.',
        ),
      );
    }
    if (found.outcome === 'in_flight') {
      return err(
        domainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry after Retry-After seconds to get its answer.', {
          retryAfterSeconds: IDEMPOTENCY_IN_USE_RETRY_AFTER_SECONDS,
        }),
      );
    }
    return ok({ kind: 'replay', answer: found.answer });
  }

  private handle(scope: string, token: string): IdempotencyClaimHandle {
    const { store, ttlMs } = this;
    let done = false;
    return {
      async finish(answer) {
        if (done) throw new Error('an idempotency claim is finished once');
        done = true;
        if (!isReplayableStatus(answer.status)) {
          await store.release(scope, token);
          return 'released';
        }
        return (await store.complete(scope, token, answer, ttlMs)) ? 'stored' : 'lost';
      },
      async abandon() {
        if (done) return;
        done = true;
        await store.release(scope, token);
      },
    };
  }
}
