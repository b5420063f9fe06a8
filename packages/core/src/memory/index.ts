/** The in-memory adapters of every port: embedded defaults, and the fakes of tests. */
export * from './system-clock.js';
export * from './id-generators.js';
export * from './in-memory-catalogs.js';
export * from './in-memory-rate-limit-store.js';
export * from './in-memory-runs.js';
export * from './in-process-runs.js';
export * from './in-memory-record-writer.js';
export * from './fan-out-notifier.js';
export * from './in-memory-idempotency-store.js';
export * from './in-memory-files.js';
