import { catalogContract, type CatalogHarness } from '@svc/core/testing';
import type { CredentialKind } from '@svc/core';
import type { PostgresCatalog } from '@svc/adapter-postgres';
import { migratedDatabase, type TestCatalogDatabase } from './support/database.js';

// The PostgreSQL catalog passes the suite the in-memory catalogs pass (core's
// catalogContract): with its cache (kept current by this process's own changes at once, by
// NOTIFY for the others), and without it (`cache: false`, as the admin CLI opens it).

/** A harness on a fresh catalog of the shared schema, changed through its own administration. */
async function harnessOn(catalog: PostgresCatalog): Promise<CatalogHarness> {
  const accounts = new Set<string>();
  const kinds = new Map<string, CredentialKind>();
  const account = async (accountId: string): Promise<void> => {
    if (accounts.has(accountId)) return;
    await catalog.admin.addAccount(accountId);
    accounts.add(accountId);
  };
  return {
    credentials: catalog.credentials,
    agents: catalog.agents,
    connections: catalog.connections,
    async add(entries) {
      for (const c of entries.credentials ?? []) {
        await account(c.accountId);
        await catalog.admin.importCredential(c);
        kinds.set(c.credentialId, c.kind);
      }
      for (const a of entries.agents ?? []) {
        await account(a.accountId);
        await catalog.admin.addAgent({ id: a.agentId, accountId: a.accountId, ...(a.name === undefined ? {} : { name: a.name }), ...(a.description === undefined ? {} : { description: a.description }) });
      }
      for (const c of entries.connections ?? []) {
        await account(c.accountId);
        await catalog.admin.addConnection({ id: c.connectionId, accountId: c.accountId, type: c.type, ...(c.name === undefined ? {} : { name: c.name }) });
      }
    },
    async revoke(credentialId) {
      if (kinds.get(credentialId) === 'oauth') await catalog.admin.revokeAccessToken(credentialId);
      else await catalog.admin.revokeApiKey(credentialId);
    },
    close: () => catalog.close(),
  };
}

describe('PostgresCatalog against core catalogContract', function () {
  let db: TestCatalogDatabase;
  before(async function () {
    db = await migratedDatabase();
  });
  after(async function () {
    await db?.drop();
  });

  catalogContract('PostgresCatalog (cached, LISTEN/NOTIFY)', async () => harnessOn(await db.open()));
  catalogContract('PostgresCatalog (cache: false)', async () => harnessOn(await db.open({ cache: false })));
});
