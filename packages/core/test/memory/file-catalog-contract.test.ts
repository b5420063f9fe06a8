import { fileCatalogContract, InMemoryFileCatalog } from '@svc/core/testing';

// The in-memory file catalog (the embedded default, and the fake of use-case tests)
// passes the suite adapter-queue's RedisFileCatalog passes: one set of rules, two catalogs.
fileCatalogContract('InMemoryFileCatalog', () => Promise.resolve({ catalog: new InMemoryFileCatalog(), close: () => Promise.resolve() }));
