import {
  aConnection,
  idempotencyStoreContract,
  InMemoryIdempotencyStore,
  InMemoryRateLimitStore,
  InMemoryRecordWriter,
  InMemoryRunQueue,
  InMemoryRunStore,
  rateLimitStoreContract,
  recordWriterContract,
  runEventLogContract,
  runLifecycleContract,
  runQueueContract,
  runStoreContract,
} from '@svc/core/testing';

// The fakes stand in for the real adapters in every use-case test, so they must pass the
// same contract suites as those adapters do (docs/ARCHITECTURE.md "Style to follow").

recordWriterContract('InMemoryRecordWriter', () => {
  const writer = new InMemoryRecordWriter();
  return Promise.resolve({
    writer,
    connection: aConnection(),
    givenTable: (entity, rows) => Promise.resolve(writer.defineTable(entity, ['id', 'name', 'qty'], rows)),
    rowsOf: (entity) => Promise.resolve(writer.rowsOf(entity) ?? []),
    close: () => Promise.resolve(),
  });
});

// The contract's window test waits for real time to pass, so this store keeps the
// system clock; every use-case test drives its store with a ManualClock instead.
rateLimitStoreContract('InMemoryRateLimitStore', () =>
  Promise.resolve({ store: new InMemoryRateLimitStore(), close: () => Promise.resolve() }),
);

runQueueContract('InMemoryRunQueue + InMemoryRunStore', () => {
  const store = new InMemoryRunStore();
  const queue = new InMemoryRunQueue(store);
  return Promise.resolve({
    queue,
    store,
    // Draining is fine here: each test gets a fresh queue.
    scheduledCount: (runId: string) => {
      let count = 0;
      for (let id = queue.take(); id !== undefined; id = queue.take()) if (id === runId) count += 1;
      return Promise.resolve(count);
    },
    close: () => Promise.resolve(),
  });
});

runStoreContract('InMemoryRunStore', () => Promise.resolve({ store: new InMemoryRunStore(), close: () => Promise.resolve() }));

runLifecycleContract('InMemoryRunStore', () => Promise.resolve({ store: new InMemoryRunStore(), close: () => Promise.resolve() }));

idempotencyStoreContract('InMemoryIdempotencyStore', () => Promise.resolve({ store: new InMemoryIdempotencyStore(), close: () => Promise.resolve() }));
runEventLogContract('InMemoryRunStore', () => Promise.resolve({ store: new InMemoryRunStore(), close: () => Promise.resolve() }));
