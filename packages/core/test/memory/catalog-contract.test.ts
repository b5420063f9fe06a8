import { catalogContract, inMemoryCatalogHarness } from '@svc/core/testing';

// The in-memory catalogs are the embedded default and the fakes of every use-case test:
// they pass the suite the PostgreSQL catalog (@svc/adapter-postgres) passes.
catalogContract('InMemoryCredentialStore + InMemoryAgentCatalog + InMemoryConnectionCatalog', inMemoryCatalogHarness);
