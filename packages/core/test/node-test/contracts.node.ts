// The contract suites of @svc/core/testing under node:test, not mocha: run by
// test/testing/node-test-runner.test.ts as `node --conditions=source --import tsx --test
// <this file>`. It is not named *.test.ts, so mocha's globs never load it (node:test's
// `describe` outside `node --test` would register into a different harness).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { RunStore } from '@svc/core';
import {
  aConnection,
  catalogContract,
  fileStoreContract,
  inMemoryCatalogHarness,
  InMemoryFileStore,
  InMemoryRateLimitStore,
  InMemoryRecordWriter,
  InMemoryRunQueue,
  InMemoryRunStore,
  rateLimitStoreContract,
  recordWriterContract,
  runQueueContract,
  runLifecycleContract,
  runStoreContract,
  type TestRunner,
} from '@svc/core/testing';

/** node:test's functions, as they are: they must fit TestRunner without a cast. */
const runner: TestRunner = { describe, it, beforeEach, afterEach };

/**
 * With SVC_BREAK_RUN_STORE=1 the run store refuses every change: the run store contract
 * must then fail under node:test, which shows that its tests really run and assert here.
 */
function storeUnderTest(): RunStore {
  const store = new InMemoryRunStore();
  if (process.env['SVC_BREAK_RUN_STORE'] !== '1') return store;
  return {
    get: (runId) => store.get(runId),
    save: (run) => store.save(run),
    transition: async (runId) => ({ applied: false, run: await store.get(runId) }),
    requestCancel: (runId, at) => store.requestCancel(runId, at),
    reportProgress: () => Promise.resolve(false),
    list: (accountId, filter, page) => store.list(accountId, filter, page),
  };
}

describe('a contract suite called without a runner under node:test', () => {
  it('throws, saying what to pass', () => {
    assert.throws(
      () => runStoreContract('no runner', () => Promise.resolve({ store: new InMemoryRunStore(), close: () => Promise.resolve() })),
      /^Error: runStoreContract: no test runner was given .*Pass \{ describe, it, beforeEach, afterEach \} from your runner/u,
    );
  });
});

recordWriterContract(
  'InMemoryRecordWriter under node:test',
  () => {
    const writer = new InMemoryRecordWriter();
    return Promise.resolve({
      writer,
      connection: aConnection(),
      givenTable: (entity, rows) => Promise.resolve(writer.defineTable(entity, ['id', 'name', 'qty'], rows)),
      rowsOf: (entity) => Promise.resolve(writer.rowsOf(entity) ?? []),
      close: () => Promise.resolve(),
    });
  },
  runner,
);

rateLimitStoreContract('InMemoryRateLimitStore under node:test', () => Promise.resolve({ store: new InMemoryRateLimitStore(), close: () => Promise.resolve() }), runner);

runQueueContract(
  'InMemoryRunQueue + InMemoryRunStore under node:test',
  () => {
    const store = new InMemoryRunStore();
    return Promise.resolve({ queue: new InMemoryRunQueue(store), store, close: () => Promise.resolve() });
  },
  runner,
);

runStoreContract('InMemoryRunStore under node:test', () => Promise.resolve({ store: storeUnderTest(), close: () => Promise.resolve() }), runner);

runLifecycleContract('InMemoryRunStore under node:test', () => Promise.resolve({ store: new InMemoryRunStore(), close: () => Promise.resolve() }), runner);

catalogContract(
  'InMemoryCredentialStore + InMemoryAgentCatalog + InMemoryConnectionCatalog under node:test',
  inMemoryCatalogHarness,
  runner,
);

fileStoreContract('InMemoryFileStore under node:test', () => Promise.resolve({ store: new InMemoryFileStore(), close: () => Promise.resolve() }), runner);
