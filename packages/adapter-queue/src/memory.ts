/**
 * `@svc/adapter-queue/memory`: the in-memory run backend, the demo processor and the log
 * notifier, without loading BullMQ or ioredis (an API server without Redis starts faster
 * and smaller). The same classes are exported from the package's main entry.
 */
export type { RunBackend, RunWorker, RunWorkerCloseReport } from '@svc/core';
export { InMemoryRuns, InProcessRunWorker, type InProcessRunWorkerOptions } from '@svc/core';
export { DemoRunProcessor, type DemoRunProcessorOptions } from './demo-run-processor.js';
export { LogNotifier } from './log-notifier.js';
export { within, msUntil, type WithinOutcome } from './within.js';
export { QUIT_TIMEOUT_MS, RUN_WORKER_STOP_SLACK_MS } from './stop-bounds.js';
