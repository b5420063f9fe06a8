/**
 * `@svc/core/testing`: builders, fakes and contract suites for tests of the core, of
 * adapters (which must pass the same contract suites as the fakes), and of embedders.
 * The contract suites register mocha `describe` blocks.
 */
export * from './builders.js';
export * from './record-writer-contract.js';
export * from './rate-limit-store-contract.js';
export * from './run-queue-contract.js';
export * from './run-store-contract.js';
export * from './run-lifecycle-contract.js';
export * from './recording-logger.js';
export * from './eventually.js';
export * from './run-driver.js';
// The in-memory adapters are the fakes: they hold state and pass the contract suites.
export * from '../memory/index.js';
