import type { Knex } from 'knex';
import { CatalogNotMigratedError, CatalogSchemaTooNewError } from './errors.js';
import { CATALOG_MIGRATIONS } from './migrations.js';
import { MIGRATIONS_TABLE, quoted } from './schema.js';

/**
 * Checks that `schema` holds exactly the migrations this package knows.
 *
 * @throws CatalogNotMigratedError naming `command` when some are missing (or the schema is absent).
 * @throws CatalogSchemaTooNewError when it holds migrations this package does not know.
 */
export async function checkMigrated(db: Knex, schema: string, command: string): Promise<void> {
  const found = await db.raw<{ rows: { name: string | null }[] }>(`select to_regclass(?) as name`, [`${quoted(schema)}.${MIGRATIONS_TABLE}`]);
  if (found.rows[0]?.name === null || found.rows[0]?.name === undefined) throw new CatalogNotMigratedError(schema, CATALOG_MIGRATIONS, command);
  const rows = await db.withSchema(schema).from(MIGRATIONS_TABLE).select<{ name: string }[]>('name');
  const applied = new Set(rows.map((r) => r.name));
  const unknown = [...applied].filter((name) => !CATALOG_MIGRATIONS.includes(name));
  if (unknown.length > 0) throw new CatalogSchemaTooNewError(schema, unknown);
  const pending = CATALOG_MIGRATIONS.filter((name) => !applied.has(name));
  if (pending.length > 0) throw new CatalogNotMigratedError(schema, pending, command);
}
