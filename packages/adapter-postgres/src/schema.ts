import { CatalogInvalidError } from './errors.js';

/** The schema the catalog lives in unless told otherwise. */
export const DEFAULT_CATALOG_SCHEMA = 'svc';

// Lower-case, so that the name needs no quoting in psql; 40 characters at most, so that
// the NOTIFY channel (`svc_catalog_` + schema) stays within PostgreSQL's 63-byte names.
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/u;

/**
 * Checks a schema name: 1..40 characters of `a-z`, `0-9` and `_`, not starting with a
 * digit (it is spliced into DDL and into the NOTIFY channel name, quoted).
 *
 * @throws CatalogInvalidError (`schema`) for any other name.
 */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new CatalogInvalidError('schema', 'must be 1..40 characters of a-z, 0-9 and _, not starting with a digit');
  return schema;
}

/**
 * The channel the catalog's triggers NOTIFY on for `schema` (payload: the table name).
 * The trigger function builds the same name from `TG_TABLE_SCHEMA`.
 */
export function channelOf(schema: string): string {
  return `svc_catalog_${schema}`;
}

/** Quotes an identifier checked by {@link checkSchemaName} (or one of ours) for DDL. */
export function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The knex table holding the applied migrations (in the catalog schema). */
export const MIGRATIONS_TABLE = 'knex_migrations';
