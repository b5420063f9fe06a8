import { PostgresCatalog } from '@svc/adapter-postgres';
import pg from 'pg';

/**
 * The PostgreSQL database the catalog tests make their schemas in: `CATALOG_TEST_URL`, or
 * the machine's `test` database (trust auth on loopback; `.ci/run` starts it). The same
 * default as adapter-postgres's own tests.
 */
export const CATALOG_TEST_URL = process.env['CATALOG_TEST_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Drops a schema a test made (and everything in it), over a connection of its own bounded
 * by a 5 s connect timeout; a schema that is not there is no error.
 */
export async function dropSchema(schema: string, url: string = CATALOG_TEST_URL): Promise<void> {
  const db = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await db.connect();
  try {
    await db.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await db.end();
  }
}

/** SQL Server details of a connection in a configuration file, as the tests write them. */
export interface SqlServerEntry {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password_env: string;
}

/** Account entries of a configuration file (its `accounts` list), as the end-to-end tests write them. */
export interface AccountEntry {
  readonly id: string;
  readonly api_keys?: readonly { id: string; sha256: string }[];
  readonly oauth_tokens?: readonly { id: string; sha256: string; scopes: string[]; expires_at?: string }[];
  readonly agents?: readonly { id: string; name?: string; description?: string }[];
  readonly connections?: readonly { id: string; type: string; name?: string; sqlserver?: SqlServerEntry }[];
}

/**
 * Writes a configuration's accounts into a migrated PostgreSQL catalog schema through its
 * admin API: credentials by digest as they are, agents and connections with their names,
 * SQL Server details with the password by environment variable. The catalog refuses an
 * access token without scopes (a configuration file allows one): such a token is left out,
 * and then answers 401 like any unknown token.
 */
export async function fillCatalog(schema: string, accounts: readonly AccountEntry[], url: string = CATALOG_TEST_URL): Promise<void> {
  const catalog = await PostgresCatalog.open({ connection: url, schema, cache: false });
  try {
    for (const account of accounts) {
      await catalog.admin.addAccount(account.id);
      for (const k of account.api_keys ?? []) await catalog.admin.importCredential({ credentialId: k.id, accountId: account.id, kind: 'api_key', sha256: k.sha256, scopes: [] });
      for (const t of (account.oauth_tokens ?? []).filter((token) => token.scopes.length > 0)) {
        await catalog.admin.importCredential({
          credentialId: t.id,
          accountId: account.id,
          kind: 'oauth',
          sha256: t.sha256,
          scopes: t.scopes,
          ...(t.expires_at === undefined ? {} : { expiresAt: new Date(t.expires_at) }),
        });
      }
      for (const a of account.agents ?? []) await catalog.admin.addAgent({ accountId: account.id, ...a });
      for (const c of account.connections ?? []) {
        const { sqlserver, ...rest } = c;
        await catalog.admin.addConnection({
          accountId: account.id,
          ...rest,
          ...(sqlserver === undefined
            ? {}
            : { sqlserver: { host: sqlserver.host, port: sqlserver.port, database: sqlserver.database, user: sqlserver.user, password: { env: sqlserver.password_env }, encrypt: false, trustServerCertificate: true } }),
        });
      }
    }
  } finally {
    await catalog.close();
  }
}
