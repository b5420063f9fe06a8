// The PostgreSQL of these machines (127.0.0.1:5432, trust auth, database `test`); each test
// file makes its own schema with a random name and drops it after.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateCatalog, PostgresCatalog, type PostgresCatalogOptions } from '@svc/adapter-postgres';

/** The test database; `CATALOG_TEST_URL` points elsewhere. */
export const TEST_DATABASE_URL = process.env['CATALOG_TEST_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema name no other test uses. */
export function randomSchema(): string {
  return `svc_test_${randomBytes(6).toString('hex')}`;
}

/** Runs SQL on a client of its own (as psql would), then closes it. */
export async function psql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await client.query<T>(text, values);
  } finally {
    await client.end();
  }
}

/** Drops a schema made by a test, with everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await psql(`drop schema if exists "${schema}" cascade`);
}

/** A migrated schema and the options to open catalogs on it. */
export interface TestCatalogDatabase {
  readonly schema: string;
  /** Options to open a catalog on the schema, plus `overrides`. */
  options(overrides?: Partial<PostgresCatalogOptions>): PostgresCatalogOptions;
  /** Opens a catalog on the schema (closed by {@link TestCatalogDatabase.drop}). */
  open(overrides?: Partial<PostgresCatalogOptions>): Promise<PostgresCatalog>;
  /** Closes every catalog opened here and drops the schema. */
  drop(): Promise<void>;
}

/** Makes a random schema, migrates it, and hands out catalogs on it. */
export async function migratedDatabase(): Promise<TestCatalogDatabase> {
  const schema = randomSchema();
  await migrateCatalog({ connection: TEST_DATABASE_URL, schema });
  const opened: PostgresCatalog[] = [];
  const options = (overrides: Partial<PostgresCatalogOptions> = {}): PostgresCatalogOptions => ({ connection: TEST_DATABASE_URL, schema, ...overrides });
  return {
    schema,
    options,
    async open(overrides) {
      const catalog = await PostgresCatalog.open(options(overrides));
      opened.push(catalog);
      return catalog;
    },
    async drop() {
      await Promise.all(opened.map((c) => c.close()));
      await dropSchema(schema);
    },
  };
}
