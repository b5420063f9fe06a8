/**
 * `@svc/adapter-ratelimit/memory`: the in-process limiter on rate-limiter-flexible,
 * without loading ioredis. Also exported from the package's main entry.
 */
export { FlexibleMemoryRateLimiter, type FlexibleMemoryRateLimiterOptions } from './flexible-memory-rate-limiter.js';
