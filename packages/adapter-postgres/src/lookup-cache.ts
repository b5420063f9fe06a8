import { LRUCache } from 'lru-cache';

/** Settings of the lookup cache. */
export interface LookupCacheSettings {
  /** Most entries kept (hits and misses alike); the least recently used go first. */
  readonly maxEntries: number;
  /** Longest an entry is served, in milliseconds, even without any notification. */
  readonly ttlMs: number;
}

/**
 * The answers of earlier lookups, misses included, kept while they are known to be
 * current: the owner clears it on every change notification, and serves nothing from it
 * while it is {@link LookupCache.suspended} (no LISTEN connection: a change would go
 * unnoticed).
 *
 * A lookup that started before a change and finishes after it must not store its answer,
 * which may predate the change: each lookup notes the generation it started in, and every
 * {@link LookupCache.invalidate} starts a new one.
 *
 * Bounded (LRU, `maxEntries`), so that a flood of unknown digests cannot grow it without
 * end; `ttlMs` is a safety net for a notification lost in a way nobody noticed.
 */
export class LookupCache {
  private readonly entries: LRUCache<string, { readonly value: unknown }>;
  private generation = 0;
  private suspendedFlag = true;
  private hitCount = 0;
  private loadCount = 0;

  constructor(settings: LookupCacheSettings) {
    this.entries = new LRUCache({ max: settings.maxEntries, ttl: settings.ttlMs, ttlAutopurge: false });
  }

  /** True while nothing is served from the cache (no LISTEN connection). */
  get suspended(): boolean {
    return this.suspendedFlag;
  }

  /** Stops serving from the cache and forgets it (the LISTEN connection was lost). */
  suspend(): void {
    this.suspendedFlag = true;
    this.invalidate();
  }

  /** Serves from the cache again, from empty (the LISTEN connection is back: what changed meanwhile is unknown). */
  resume(): void {
    this.invalidate();
    this.suspendedFlag = false;
  }

  /** Forgets every entry (a change was notified, or made by this process). */
  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /** Lookups answered from the cache, and loads from the database, since start. */
  counts(): { readonly hits: number; readonly loads: number } {
    return { hits: this.hitCount, loads: this.loadCount };
  }

  /**
   * The cached answer for `key`, else `load()`'s, kept for the next lookup when no change
   * happened meanwhile. Rejections are not kept.
   */
  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (!this.suspendedFlag) {
      const hit = this.entries.get(key);
      if (hit !== undefined) {
        this.hitCount += 1;
        return hit.value as T;
      }
    }
    const started = this.generation;
    this.loadCount += 1;
    const value = await load();
    if (!this.suspendedFlag && started === this.generation) this.entries.set(key, { value });
    return value;
  }
}
