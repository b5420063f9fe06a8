/** The API server as a library: start it in-process (tests, embedding). */
export * from './server.js';
export * from './settings.js';
export * from './container.js';
export * from './dev-account.js';
export * from './live-catalogs.js';
export * from './routing-record-writer.js';
export * from './reload.js';
export * from './config-reloader.js';
export * from './command-line.js';
export * from './observability/settings.js';
export * from './observability/metrics.js';
export * from './observability/tracing.js';
export * from './observability/admin-listener.js';
