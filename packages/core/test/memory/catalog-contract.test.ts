import { catalogContract, InMemoryAgentCatalog, InMemoryConnectionCatalog, InMemoryCredentialStore } from '@svc/core/testing';

// The in-memory catalogs are the embedded default and the fakes of every use-case test:
// they pass the suite the PostgreSQL catalog (@svc/adapter-postgres) passes.
catalogContract('InMemoryCredentialStore + InMemoryAgentCatalog + InMemoryConnectionCatalog', () => {
  const credentials = new InMemoryCredentialStore();
  const agents = new InMemoryAgentCatalog();
  const connections = new InMemoryConnectionCatalog();
  return Promise.resolve({
    credentials,
    agents,
    connections,
    add: (entries) => {
      for (const c of entries.credentials ?? []) credentials.add(c);
      for (const a of entries.agents ?? []) agents.add(a);
      for (const c of entries.connections ?? []) connections.add(c);
      return Promise.resolve();
    },
    revoke: (credentialId) => Promise.resolve(credentials.revoke(credentialId)),
    close: () => Promise.resolve(),
  });
});
