import { randomUUID } from 'node:crypto';
import { silentLogger, type IdempotencyClaim, type IdempotencyStore, type Logger, type StoredAnswer } from '@svc/core';
import type { Redis } from 'ioredis';
import { QUIT_TIMEOUT_MS } from './close-within.js';
import { guardRedis } from './dependency-guard.js';
import { LuaScript } from './lua-script.js';
import { createRedisClient, requestClientOptions, type RedisConnectionOptions } from './redis-client.js';
import { within } from './within.js';

/**
 * Claims a key in one round trip, atomically. KEYS[1] the key; ARGV[1] the claim record,
 * ARGV[2] the lease in ms. Returns the record found, or nothing when the claim was set.
 */
const CLAIM = new LuaScript(`
local found = redis.call('GET', KEYS[1])
if found then return found end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`);

/**
 * Replaces a claim by its answer only while the claim holds the key. KEYS[1] the key;
 * ARGV[1] the claim record as set, ARGV[2] the answer record, ARGV[3] its TTL in ms.
 * Returns 1 when kept, 0 when the claim no longer held the key.
 */
const COMPLETE = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`);

/** Deletes a claim only while it holds the key. KEYS[1] the key; ARGV[1] the claim record as set. */
const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`);

/** A key's record as stored (JSON): a claim, or an answer with its body in base64. */
type StoredRecord =
  | { readonly state: 'claimed'; readonly fingerprint: string; readonly token: string }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly status: number; readonly headers: Record<string, string>; readonly body: string };

/** Settings of {@link RedisIdempotencyStore}. */
export interface RedisIdempotencyStoreSettings {
  /** Keys are `<prefix>:idempotency:<scope>`; default `svc`. */
  readonly prefix?: string;
  /**
   * Bound in ms of each call (`claim`, `complete`, `release`): past it, or at once when
   * Redis is disconnected, the call rejects with the core's `DependencyUnavailableError`
   * (the request answers 503). Default 500 ms: a quarter of docs/CONTRACT.md's default
   * `dependency_timeout_ms` (2000), because a keyed request also charges the rate limiter
   * and writes the run within that bound (the API server passes its own share).
   */
  readonly operationTimeoutMs?: number;
  /** Where connection losses are logged (error code only). */
  readonly logger?: Logger;
}

/** Default of {@link RedisIdempotencyStoreSettings.operationTimeoutMs}. */
export const DEFAULT_IDEMPOTENCY_TIMEOUT_MS = 500;

/**
 * Idempotency keys in Redis, shared by every instance on it (core `IdempotencyStore`):
 * one key per account and `Idempotency-Key` (the core's hashed scope), holding a claim
 * for its lease (`PX`) or the answer for its TTL (24 h from the core). Claim, complete
 * and release are each one Lua script, one round trip, atomic; a claim's `token` makes
 * `complete` and `release` act only for the request that holds the key.
 * Source: docs/CONTRACT.md "Runs lifecycle"; docs/decisions.md "Idempotency keys".
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly prefix: string;
  private readonly timeoutMs: number;

  /**
   * @param client - an ioredis client with request options (`requestClientOptions`: no
   *   offline queue, a command timeout), so a lost Redis fails fast.
   * @param ownsClient - true: {@link RedisIdempotencyStore.close} quits it.
   */
  constructor(
    private readonly client: Redis,
    settings: RedisIdempotencyStoreSettings = {},
    private readonly ownsClient = false,
  ) {
    this.prefix = settings.prefix ?? 'svc';
    this.timeoutMs = settings.operationTimeoutMs ?? DEFAULT_IDEMPOTENCY_TIMEOUT_MS;
  }

  /**
   * A store on a client of its own (request options, bounded by `operationTimeoutMs`),
   * connected and answering PING.
   * @param redis - a `redis://` URL or ioredis options; never logged (it may hold a password).
   * @throws Error when Redis does not answer (the client is closed again); the error names no host.
   */
  static async connect(redis: string | RedisConnectionOptions, settings: RedisIdempotencyStoreSettings = {}): Promise<RedisIdempotencyStore> {
    const timeoutMs = settings.operationTimeoutMs ?? DEFAULT_IDEMPOTENCY_TIMEOUT_MS;
    const client = createRedisClient(redis, { ...requestClientOptions(timeoutMs), lazyConnect: true }, settings.logger ?? silentLogger, 'idempotency');
    try {
      // With the offline queue off, the first command must wait for the connection.
      await client.connect();
      await client.ping();
    } catch (error) {
      client.disconnect();
      throw new Error('Redis for idempotency keys does not answer', { cause: error });
    }
    return new RedisIdempotencyStore(client, settings, true);
  }

  async claim(scope: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const found = await guardRedis('redis', this.timeoutMs, () => CLAIM.run(this.client, [this.key(scope)], [claimRecord(fingerprint, token), Math.ceil(leaseMs)]));
    if (found === null || found === undefined) return { outcome: 'claimed', token: `${token}:${fingerprint}` };
    const record = JSON.parse(String(found)) as StoredRecord;
    if (record.state === 'claimed') return { outcome: 'in_flight', fingerprint: record.fingerprint };
    return { outcome: 'completed', fingerprint: record.fingerprint, answer: { status: record.status, headers: record.headers, body: Buffer.from(record.body, 'base64') } };
  }

  async complete(scope: string, token: string, answer: StoredAnswer, ttlMs: number): Promise<boolean> {
    const [id, fingerprint] = splitToken(token);
    const record: StoredRecord = { state: 'completed', fingerprint, status: answer.status, headers: { ...answer.headers }, body: Buffer.from(answer.body).toString('base64') };
    const kept = await guardRedis('redis', this.timeoutMs, () => COMPLETE.run(this.client, [this.key(scope)], [claimRecord(fingerprint, id), JSON.stringify(record), Math.ceil(ttlMs)]));
    return kept === 1;
  }

  async release(scope: string, token: string): Promise<void> {
    const [id, fingerprint] = splitToken(token);
    await guardRedis('redis', this.timeoutMs, () => RELEASE.run(this.client, [this.key(scope)], [claimRecord(fingerprint, id)]));
  }

  /** Quits the client when this store made it ({@link RedisIdempotencyStore.connect}), within `QUIT_TIMEOUT_MS`; else nothing. */
  async close(): Promise<void> {
    if (!this.ownsClient) return;
    const quit = await within(this.client.quit(), QUIT_TIMEOUT_MS);
    if (quit.outcome !== 'done') this.client.disconnect();
  }

  private key(scope: string): string {
    return `${this.prefix}:idempotency:${scope}`;
  }
}

/** The claim record, byte for byte the same for the same claim (complete and release compare it). */
function claimRecord(fingerprint: string, token: string): string {
  const record: StoredRecord = { state: 'claimed', fingerprint, token };
  return JSON.stringify(record);
}

/**
 * The token handed out is `<uuid>:<fingerprint>`, so that `complete` and `release` can
 * rebuild the claim record without a read. A token of another store: an id that matches nothing.
 */
function splitToken(token: string): [string, string] {
  const at = token.indexOf(':');
  return at < 0 ? [token, ''] : [token.slice(0, at), token.slice(at + 1)];
}
