/**
 * `@svc/core/testing`: builders, fakes and contract suites for tests of the core, of
 * adapters (which must pass the same contract suites as the fakes), and of embedders.
 * The contract suites register `describe` blocks with the runner they are given
 * (`node:test`, mocha, ...; default mocha's globals): see {@link TestRunner}.
 */
export * from './builders.js';
export * from './test-runner.js';
export * from './record-writer-contract.js';
export * from './rate-limit-store-contract.js';
export * from './run-queue-contract.js';
export * from './run-store-contract.js';
export * from './idempotency-store-contract.js';
export * from './run-lifecycle-contract.js';
export * from './run-event-log-contract.js';
export * from './catalog-contract.js';
export * from './file-store-contract.js';
export * from './file-catalog-contract.js';
export * from './recording-logger.js';
export * from './recording-telemetry.js';
export * from './eventually.js';
export * from './run-driver.js';
export * from './failing-fakes.js';
// The in-memory adapters are the fakes: they hold state and pass the contract suites.
export * from '../memory/index.js';
