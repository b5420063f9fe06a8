/**
 * `@svc/adapter-ratelimit/memory`: the in-process store on rate-limiter-flexible, without
 * loading ioredis. Also exported from the package's main entry.
 */
export { FlexibleMemoryRateLimitStore, type FlexibleMemoryRateLimitStoreOptions } from './flexible-memory-rate-limit-store.js';
