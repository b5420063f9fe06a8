/**
 * `@svc/adapter-ratelimit`: the core `RateLimitStore` port on rate-limiter-flexible and
 * Redis. {@link FlexibleMemoryRateLimitStore} counts per process (embedded default);
 * {@link RedisRateLimitStore} shares the windows of every instance through Redis, with an
 * in-memory insurance while Redis is away. Both charge several rules all or none; which
 * rules apply and which window an answer reports is the core's `RateLimitPolicy`.
 * Source: docs/api-spec.md "Limits"; docs/CONTRACT.md "Rate limits".
 */
export { FlexibleMemoryRateLimitStore, type FlexibleMemoryRateLimitStoreOptions } from './flexible-memory-rate-limit-store.js';
export {
  RedisRateLimitStore,
  DEFAULT_RATE_LIMIT_TIMEOUT_MS,
  type RedisRateLimitStoreOptions,
  type RedisRateLimitStoreConnectOptions,
  type RedisConnectionOptions,
} from './redis-rate-limit-store.js';
export { shareOfLimit } from './rules.js';
