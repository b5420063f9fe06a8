/**
 * `@svc/adapter-queue`: the core `RunQueue` and `RunStore` ports, and the worker that
 * processes runs with the core `RunProcessor`.
 *
 * - In memory (embedded default): {@link InMemoryRuns} — core's in-memory queue and
 *   store, with {@link InProcessRunWorker}s.
 * - Durable (BullMQ on Redis): {@link BullMqRuns} — {@link BullMqRunQueue},
 *   {@link RedisRunStore}, {@link BullMqRunWorker}.
 * - {@link DemoRunProcessor} (a stand-in agent) and {@link LogNotifier}.
 * - {@link RedisFileCatalog}: the core `FileCatalog` (file records) in Redis.
 * Source: docs/CONTRACT.md "Runs"; docs/ARCHITECTURE.md.
 */
// The in-memory backend and the worker port live in core (an embedder needs no adapter to
// process runs); they are re-exported here so that a composition root picks either backend
// from one package.
export type { RunBackend, RunWorker, RunWorkerCloseReport, RunWorkerOptions } from '@svc/core';
export { BullMqRuns, DEFAULT_OPERATION_TIMEOUT_MS, type BullMqRunsSettings } from './bullmq-runs.js';
export { BullMqRunQueue, RUN_JOB_NAME, type BullMqRunQueueOptions, type KeepFinishedJobs, type RunJobData } from './bullmq-run-queue.js';
export {
  BullMqRunWorker,
  INTERRUPTED_REASON,
  type BullMqRunWorkerOptions,
  type BullMqRunWorkerSettings,
} from './bullmq-run-worker.js';
export { RedisRunStore, DEFAULT_FINISHED_RUN_TTL_SECONDS, type RedisRunStoreOptions } from './redis-run-store.js';
export { createRedisClient, reconnectDelayMs, requestClientOptions, workerClientOptions, type RedisConnectionOptions } from './redis-client.js';
export { guardRedis, isRedisUnavailable } from './dependency-guard.js';
export { InMemoryRuns, InProcessRunWorker, type InProcessRunWorkerOptions } from '@svc/core';
export { DemoRunProcessor, type DemoRunProcessorOptions } from './demo-run-processor.js';
export { LogNotifier } from './log-notifier.js';
export { redisDurabilityFindings, type RedisDurabilityFinding } from './redis-durability.js';
export { within, msUntil, type WithinOutcome } from './within.js';
export { QUIT_TIMEOUT_MS, RUN_WORKER_STOP_SLACK_MS } from './stop-bounds.js';
export { RedisIdempotencyStore, DEFAULT_IDEMPOTENCY_TIMEOUT_MS, type RedisIdempotencyStoreSettings } from './redis-idempotency-store.js';
export { RedisFileCatalog, DEFAULT_FILE_CATALOG_TIMEOUT_MS, type RedisFileCatalogSettings } from './redis-file-catalog.js';
