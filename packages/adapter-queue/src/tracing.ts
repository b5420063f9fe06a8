/** Name of the tracer of `@svc/adapter-queue` (docs/decisions.md "Observability"). */
export const ADAPTER_QUEUE_TRACER_NAME = '@svc/adapter-queue';

/** Attributes of every Redis client span of this adapter (OpenTelemetry semantic conventions). */
export const REDIS_SPAN_ATTRIBUTES = Object.freeze({ 'db.system.name': 'redis' });
