/**
 * `@svc/adapter-ratelimit`: the core `RateLimiter` port on rate-limiter-flexible and
 * Redis. {@link FlexibleMemoryRateLimiter} limits per process (embedded default);
 * {@link RedisRateLimiter} shares the limits of every instance through Redis, with an
 * in-memory insurance while Redis is away. Both charge several rules all or none.
 * Source: api-spec.md "Limits"; CONTRACT.md "Rate limits".
 */
export { FlexibleMemoryRateLimiter, type FlexibleMemoryRateLimiterOptions } from './flexible-memory-rate-limiter.js';
export { RedisRateLimiter, DEFAULT_RATE_LIMIT_TIMEOUT_MS, type RedisRateLimiterOptions, type RedisRateLimiterConnectOptions, type RedisConnectionOptions } from './redis-rate-limiter.js';
export { shareOfLimit } from './rules.js';
