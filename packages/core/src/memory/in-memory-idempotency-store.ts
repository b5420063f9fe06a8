import { randomUUID } from 'node:crypto';
import type { Clock } from '../ports/clock.js';
import type { IdempotencyClaim, IdempotencyStore, StoredAnswer } from '../ports/idempotency-store.js';
import { SystemClock } from './system-clock.js';

/**
 * Default {@link InMemoryIdempotencyStoreOptions.maxEntries}: 10 000 keys. An answer is at
 * most a few KiB (a run-start result, a problem details body), so the store stays within
 * tens of MiB; a process that takes more than 10 000 keyed writes a day needs Redis anyway
 * (an in-memory store is per process: it does not hold across instances).
 */
export const DEFAULT_MAX_IDEMPOTENCY_ENTRIES = 10_000;

/** Settings of {@link InMemoryIdempotencyStore}. */
export interface InMemoryIdempotencyStoreOptions {
  /** The time leases and answers expire by; default the system clock. */
  readonly clock?: Clock;
  /**
   * Most keys held (claims and answers), ≥ 1; default {@link DEFAULT_MAX_IDEMPOTENCY_ENTRIES}.
   * Past it the oldest entries go first, expired or not: a key evicted early is a fresh
   * key again (its request may run a second time), the documented price of a bounded store.
   */
  readonly maxEntries?: number;
}

interface Entry {
  readonly fingerprint: string;
  /** Set while claimed. */
  readonly token?: string;
  /** Set once completed. */
  readonly answer?: StoredAnswer;
  /** When the entry ends, ms since the epoch on the store's clock. */
  readonly expiresAt: number;
}

/**
 * Idempotency keys in this process's memory: the embedded default and the fake of tests.
 * Bounded in time (a claim lasts its lease, an answer its TTL, 24 h from the core) and in
 * size ({@link InMemoryIdempotencyStoreOptions.maxEntries}, oldest first). Keys are not
 * shared with another process: several instances need adapter-queue's
 * `RedisIdempotencyStore`. Source: docs/decisions.md "Idempotency keys".
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly maxEntries: number;

  /** @throws RangeError when `maxEntries` is not a whole number ≥ 1. */
  constructor(options: InMemoryIdempotencyStoreOptions = {}) {
    this.clock = options.clock ?? new SystemClock();
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_IDEMPOTENCY_ENTRIES;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError('maxEntries must be a whole number ≥ 1');
  }

  /** Keys held now (claims and answers, expired ones not yet swept included). */
  get size(): number {
    return this.entries.size;
  }

  claim(scope: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    const now = this.clock.now().getTime();
    const found = this.live(scope, now);
    if (found !== undefined) {
      return Promise.resolve(
        found.answer !== undefined ? { outcome: 'completed', fingerprint: found.fingerprint, answer: copy(found.answer) } : { outcome: 'in_flight', fingerprint: found.fingerprint },
      );
    }
    const token = randomUUID();
    this.put(scope, { fingerprint, token, expiresAt: now + leaseMs }, now);
    return Promise.resolve({ outcome: 'claimed', token });
  }

  complete(scope: string, token: string, answer: StoredAnswer, ttlMs: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    const found = this.live(scope, now);
    if (found?.token !== token) return Promise.resolve(false);
    this.put(scope, { fingerprint: found.fingerprint, answer: copy(answer), expiresAt: now + ttlMs }, now);
    return Promise.resolve(true);
  }

  release(scope: string, token: string): Promise<void> {
    if (this.entries.get(scope)?.token === token) this.entries.delete(scope);
    return Promise.resolve();
  }

  private live(scope: string, now: number): Entry | undefined {
    const entry = this.entries.get(scope);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > now) return entry;
    this.entries.delete(scope);
    return undefined;
  }

  /** Sets `scope` last in insertion order, then evicts from the front: expired entries, then the oldest past the cap. */
  private put(scope: string, entry: Entry, now: number): void {
    this.entries.delete(scope);
    this.entries.set(scope, entry);
    for (const [key, old] of this.entries) {
      if (this.entries.size <= this.maxEntries && old.expiresAt > now) break;
      this.entries.delete(key);
    }
  }
}

function copy(answer: StoredAnswer): StoredAnswer {
  return { status: answer.status, headers: { ...answer.headers }, body: Uint8Array.from(answer.body) };
}
