import { fileStoreContract, InMemoryFileStore } from '@svc/core/testing';

// The fake of every files use-case test passes the suite adapter-storage's LocalFileStore
// and S3FileStore pass (docs/ARCHITECTURE.md "Style to follow": unchecked fakes drift).
fileStoreContract('InMemoryFileStore', () => Promise.resolve({ store: new InMemoryFileStore(), close: () => Promise.resolve() }));
