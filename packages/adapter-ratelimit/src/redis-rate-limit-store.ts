import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Logger, RateLimitCharge, RateLimitRule, RateLimitStore } from '@svc/core';
import { DependencyUnavailableError, silentLogger, tracerOf, withSpan } from '@svc/core';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { Redis, type RedisOptions } from 'ioredis';
import { FlexibleMemoryRateLimitStore } from './flexible-memory-rate-limit-store.js';

/**
 * The check-all-then-charge-all script. KEYS: one counter per rule. ARGV: `limit_i`,
 * `windowMs_i` for each rule i. A window is a counter key that expires `windowMs` after
 * the request that opened it (fixed window from the first request, like
 * rate-limiter-flexible's). A key without expiry (PTTL -1) or missing (-2) is a closed
 * window. Returns `{allowed, count_1, ttlMs_1, count_2, ttlMs_2, ...}`: the counts after
 * the charge when allowed (1), the counts as found when refused (0, nothing written).
 */
const CONSUME_SCRIPT = `
local n = #KEYS
local counts, ttls = {}, {}
local allowed = 1
for i = 1, n do
  local ttl = redis.call('PTTL', KEYS[i])
  local count = 0
  if ttl > 0 then
    count = tonumber(redis.call('GET', KEYS[i])) or 0
  else
    ttl = 0
  end
  counts[i] = count
  ttls[i] = ttl
  if count >= tonumber(ARGV[2 * i - 1]) then allowed = 0 end
end
if allowed == 1 then
  for i = 1, n do
    if ttls[i] > 0 then
      counts[i] = redis.call('INCR', KEYS[i])
    else
      local window = tonumber(ARGV[2 * i])
      redis.call('SET', KEYS[i], 1, 'PX', window)
      counts[i] = 1
      ttls[i] = window
    end
  end
end
local out = {allowed}
for i = 1, n do
  out[2 * i] = counts[i]
  out[2 * i + 1] = ttls[i]
end
return out
`;

const CONSUME_SHA = createHash('sha1').update(CONSUME_SCRIPT).digest('hex');

/** Attributes of the limiter's Redis client span (OpenTelemetry semantic conventions). */
const REDIS_SPAN_ATTRIBUTES = Object.freeze({ 'db.system.name': 'redis' });

/**
 * ioredis connection options (host, port, db, username, password, tls, ...). ioredis's
 * `replyMapping` is left out: its declared type does not accept `undefined` under
 * `exactOptionalPropertyTypes`, and the limiter needs the default (legacy) replies.
 */
export type RedisConnectionOptions = Omit<RedisOptions, 'replyMapping'>;

/** Options of {@link RedisRateLimitStore}. */
export interface RedisRateLimitStoreOptions {
  /**
   * The ioredis client. Give it `enableOfflineQueue: false` (as
   * {@link RedisRateLimitStore.connect} does) so that a command fails at once while Redis is
   * away and the request goes to the insurance instead of waiting for a reconnect.
   */
  readonly client: Redis;
  /** When true, {@link RedisRateLimitStore.close} quits the client. Default false (the caller owns it). */
  readonly ownsClient?: boolean;
  /**
   * Prefix of every counter key, e.g. `svc:rl:` (the default) gives `svc:rl:agent:<id>`.
   * On a Redis Cluster, put a hash tag in it (`{svc-rl}:`): one request's keys must share
   * a slot for the script.
   */
  readonly keyPrefix?: string;
  /**
   * How many API instances share these limits (default 1). While Redis is unreachable,
   * each instance allows `ceil(limit / instanceCount)` (at least 1) per window from its
   * own memory, so that together they stay near the shared limit.
   */
  readonly instanceCount?: number;
  /** Where the outage warning (once per outage) and the recovery notice go. */
  readonly logger?: Logger;
  /**
   * Bound in ms of one request's Redis work (the script, and its reload after NOSCRIPT);
   * past it the request is decided as when Redis is unreachable. Default
   * {@link DEFAULT_RATE_LIMIT_TIMEOUT_MS}.
   */
  readonly operationTimeoutMs?: number;
  /**
   * What a request gets while Redis is unreachable, failing or silent: `true` (default)
   * the in-memory insurance decides it; `false` it rejects with the core's
   * `DependencyUnavailableError` (`redis`), which the HTTP adapter answers 503, for
   * deployments where limits must never be looser than configured.
   */
  readonly insurance?: boolean;
}

/**
 * Default of {@link RedisRateLimitStoreOptions.operationTimeoutMs}: 500 ms, a quarter of
 * docs/CONTRACT.md's default `dependency_timeout_ms` (2000): a run start also waits for the
 * run queue (half of it) after the limiter, and the rest is headroom for the process.
 */
export const DEFAULT_RATE_LIMIT_TIMEOUT_MS = 500;

/**
 * Ms during which requests skip Redis after a timed-out script while the client
 * still looks connected (a paused or overloaded server): without it every request would
 * wait its full `operationTimeoutMs` and pile one more script on a server that does not
 * answer. After it, one request tries Redis again. 1 s: the same as the reconnect cap, so
 * limits are shared again about a second after Redis answers, whatever the fault was.
 */
const RETRY_REDIS_AFTER_MS = 1000;

/**
 * ioredis reconnect delay in ms after the `times`-th failed attempt: +100 ms per attempt,
 * at most 1000 ms, never giving up, so that limits are shared again at most about a
 * second after Redis returns, without a restart.
 */
function reconnectDelayMs(times: number): number {
  return Math.min(times * 100, 1000);
}

/** Options of {@link RedisRateLimitStore.connect}: those of the store, less the client. */
export interface RedisRateLimitStoreConnectOptions extends Omit<RedisRateLimitStoreOptions, 'client' | 'ownsClient'> {
  /**
   * Milliseconds after which a Redis command counts as failed and the request goes to the
   * insurance (ioredis `commandTimeout`, and {@link RedisRateLimitStoreOptions.operationTimeoutMs});
   * default {@link DEFAULT_RATE_LIMIT_TIMEOUT_MS}.
   */
  readonly commandTimeoutMs?: number;
  /**
   * Milliseconds to wait for the first connection (default 2000). When Redis is not
   * ready by then, the limiter still starts: it runs on the insurance (with the outage
   * warning) while ioredis keeps reconnecting.
   */
  readonly readyTimeoutMs?: number;
}

/**
 * Fixed-window {@link RateLimitStore} shared by every instance through Redis (docs/CONTRACT.md
 * "Rate limits": with Redis configured, limits hold across every instance).
 *
 * How all-or-none works, and why: one Lua script reads the window of every rule of the
 * request and, only when none is full, charges all of them; a refused request writes
 * nothing. Redis runs a script atomically, so counts are exact under any concurrency
 * (100 concurrent requests on a limit of 30: exactly 30 allowed; with [credential,
 * agent] rules the credential is charged exactly 30 times too), and no other request ever
 * sees a point that is later given back. The alternatives were rejected:
 * rate-limiter-flexible's `RateLimiterUnion` charges every limiter before it knows
 * whether one refuses (rate-limiter-flexible issue #280); consuming per rule with
 * `RateLimiterRedis` and then `reward`-ing the charged ones when a later rule refuses is
 * exact only in the end (a concurrent request can be refused by a point that is about to
 * be given back), loses the give-back when the process dies in between, and costs a
 * second round trip.
 *
 * Redis round trips per request: one (`EVALSHA`); two only when Redis does not know the
 * script yet (after a restart or `SCRIPT FLUSH`: `NOSCRIPT`, then `EVAL`, which caches it).
 *
 * When Redis fails (a command error or timeout, or the client is not connected), the
 * request is decided by an in-memory insurance ({@link FlexibleMemoryRateLimitStore}, on
 * rate-limiter-flexible) whose limits are divided by `instanceCount`. The logger gets
 * one warning when an outage starts and one notice when Redis answers again, never one
 * per request; neither names the host or carries the error text (core `Logger`
 * contract), only the error code. Windows counted by the insurance are not copied to
 * Redis. A paused server (SIGSTOP: connected, silent) counts as failed after
 * `operationTimeoutMs`, so no request waits on the limiter longer than that, and for the
 * next second requests skip Redis (one request tries it again after that). With
 * `insurance: false` every such request rejects with `DependencyUnavailableError` instead.
 * Source: docs/api-spec.md "Limits", "Errors" (429 headers); docs/CONTRACT.md "Rate limits".
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly client: Redis;
  private readonly ownsClient: boolean;
  private readonly keyPrefix: string;
  private readonly instanceCount: number;
  private readonly logger: Logger;
  private readonly insurance: FlexibleMemoryRateLimitStore | undefined;
  private readonly timeoutMs: number;
  private readonly tracer: Tracer;
  private degraded = false;
  /** Epoch ms before which requests skip Redis (it failed or timed out just now). */
  private skipRedisUntil = 0;

  /** @throws RangeError when `instanceCount` is not a whole number ≥ 1. */
  constructor(options: RedisRateLimitStoreOptions) {
    this.client = options.client;
    this.ownsClient = options.ownsClient ?? false;
    this.keyPrefix = options.keyPrefix ?? 'svc:rl:';
    this.instanceCount = options.instanceCount ?? 1;
    this.logger = options.logger ?? silentLogger;
    this.timeoutMs = options.operationTimeoutMs ?? DEFAULT_RATE_LIMIT_TIMEOUT_MS;
    this.tracer = tracerOf('@svc/adapter-ratelimit');
    this.insurance =
      options.insurance === false ? undefined : new FlexibleMemoryRateLimitStore({ limitDivisor: this.instanceCount, keyPrefix: `${this.keyPrefix}insurance` });
  }

  /**
   * Creates a limiter with its own ioredis client (closed by {@link RedisRateLimitStore.close});
   * waits for the first connection up to `readyTimeoutMs` and never rejects for an
   * unreachable Redis. The client's options, each chosen for a limiter that must decide
   * every request within `commandTimeoutMs`:
   * - `enableOfflineQueue: false`: while disconnected a command fails at once and the
   *   request is decided without Redis, instead of waiting for a reconnect;
   * - `maxRetriesPerRequest: 0`: a script in flight when the connection drops is not
   *   re-sent after reconnecting (the request was decided without it; a re-send would
   *   charge a point nobody asked for);
   * - `commandTimeout`: a paused server fails each command after `commandTimeoutMs`;
   * - `connectTimeout`: a connection attempt to a host that drops packets gives up after
   *   `readyTimeoutMs`; reconnects never stop (delay +100 ms per attempt, at most 1 s).
   *
   * @param redis - a `redis://` URL or ioredis options; never logged (it may hold a password).
   */
  static async connect(redis: string | RedisConnectionOptions, options: RedisRateLimitStoreConnectOptions = {}): Promise<RedisRateLimitStore> {
    const timeoutMs = options.commandTimeoutMs ?? DEFAULT_RATE_LIMIT_TIMEOUT_MS;
    const clientOptions: RedisConnectionOptions = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      connectTimeout: options.readyTimeoutMs ?? 2000,
      retryStrategy: reconnectDelayMs,
    };
    // A retryStrategy given with the connection options wins (e.g. a test that wants none).
    const client =
      typeof redis === 'string' ? new Redis(redis, clientOptions) : new Redis({ ...redis, ...clientOptions, retryStrategy: redis.retryStrategy ?? reconnectDelayMs });
    // ioredis emits 'error' on every failed reconnect; the limiter reports outages itself
    // (once), so the events only need a listener to not crash the process.
    client.on('error', () => undefined);
    const { commandTimeoutMs: _c, readyTimeoutMs, ...limiterOptions } = options;
    const limiter = new RedisRateLimitStore({ operationTimeoutMs: timeoutMs, ...limiterOptions, client, ownsClient: true });
    if (client.status !== 'ready') {
      const timeout = AbortSignal.timeout(readyTimeoutMs ?? 2000);
      await once(client, 'ready', { signal: timeout }).catch(() => undefined);
    }
    return limiter;
  }

  /**
   * Charges one point to every rule, all or none; see the class comment.
   * @throws DependencyUnavailableError when Redis is unreachable, failing or silent and
   *   the insurance is off.
   */
  async chargeAll(rules: readonly RateLimitRule[]): Promise<RateLimitCharge> {
    let failure: unknown;
    const now = Date.now();
    if (this.client.status !== 'ready') {
      failure = new Error(`client ${this.client.status}`);
      this.enterOutage(`client_${this.client.status}`);
    } else if (now < this.skipRedisUntil) {
      failure = new Error('Redis failed a moment ago');
    } else {
      // While failing, one request at a time tries Redis; the others do not queue behind it.
      if (this.degraded) this.skipRedisUntil = now + this.timeoutMs;
      try {
        // A client span per script call (EVALSHA, and EVAL after a NOSCRIPT miss).
        const charge = await withSpan(this.tracer, 'redis rate_limit.charge', REDIS_SPAN_ATTRIBUTES, () => this.withinBound(this.chargeInRedis(rules)), SpanKind.CLIENT);
        this.skipRedisUntil = 0;
        this.leaveOutage();
        return charge;
      } catch (error) {
        if (error instanceof TypeError || error instanceof RangeError) throw error;
        failure = error;
        // Only silence is worth skipping: other failures answer at once.
        if (isTimeout(error)) this.skipRedisUntil = Date.now() + RETRY_REDIS_AFTER_MS;
        this.enterOutage(codeOf(error));
      }
    }
    if (this.insurance === undefined) throw new DependencyUnavailableError('redis', { cause: failure });
    return this.insurance.chargeAll(rules);
  }

  /** Quits the client when this limiter owns it; the insurance holds no resources. */
  async close(): Promise<void> {
    if (!this.ownsClient || this.client.status === 'end') return;
    try {
      await this.client.quit();
    } catch {
      // Quit fails when the connection is already gone; dropping it is all that is left.
      this.client.disconnect();
    }
  }

  /**
   * `work`, or a rejection after `operationTimeoutMs`: ioredis `commandTimeout` bounds one
   * command, this bounds the request (NOSCRIPT, then EVAL, is two), and also holds for an
   * injected client configured without a command timeout.
   */
  private async withinBound<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    work.catch(() => undefined);
    try {
      return await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(Object.assign(new Error('no answer in time'), { code: 'TIMEOUT' })), this.timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async chargeInRedis(rules: readonly RateLimitRule[]): Promise<RateLimitCharge> {
    const keys = rules.map((r) => this.keyPrefix + r.key);
    const args = rules.flatMap((r) => [r.limit, Math.max(1, Math.round(r.windowSeconds * 1000))]);
    let reply: unknown;
    try {
      reply = await this.client.evalsha(CONSUME_SHA, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      reply = await this.client.eval(CONSUME_SCRIPT, keys.length, ...keys, ...args);
    }
    const values = parseReply(reply, rules.length);
    return {
      charged: values[0] === 1,
      windows: rules.map((rule, i) => {
        const ttlMs = values[2 * i + 2] ?? 0;
        return { count: values[2 * i + 1] ?? 0, msLeft: ttlMs > 0 ? ttlMs : rule.windowSeconds * 1000 };
      }),
    };
  }

  private enterOutage(reason: string): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn(
      { component: 'rate-limiter', reason, instance_count: this.instanceCount },
      this.insurance === undefined
        ? 'Redis is unreachable: requests are refused with 503 until it answers (no insurance limiter)'
        : 'Redis is unreachable: rate limits fall back to this instance\'s memory, each limit divided by the instance count',
    );
  }

  private leaveOutage(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.info({ component: 'rate-limiter' }, 'Redis answers again: rate limits are shared across instances again');
  }
}

/** The error's code (e.g. `ECONNREFUSED`) or class name; never its message, which may name the host. */
function codeOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : error.name;
  }
  return 'unknown';
}

/** A command or request that got no answer in time (ioredis `commandTimeout`, or ours). */
function isTimeout(error: unknown): boolean {
  return error instanceof Error && ((error as { code?: unknown }).code === 'TIMEOUT' || error.message === 'Command timed out');
}

/** @throws TypeError when the script's reply is not the expected array of integers. */
function parseReply(reply: unknown, ruleCount: number): number[] {
  if (!Array.isArray(reply) || reply.length !== 1 + 2 * ruleCount || !reply.every((v) => typeof v === 'number')) {
    throw new TypeError('unexpected reply from the rate-limit script');
  }
  return reply as number[];
}
