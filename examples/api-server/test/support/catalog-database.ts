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
