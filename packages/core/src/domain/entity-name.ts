import { checkIdentifierPart } from './identifier.js';
import { err, ok, type Result } from './result.js';

/**
 * A table addressed as `schema.table`.
 *
 * Source: docs/api-spec.md "Record (row)" (entity written `schema.table`) and docs/CONTRACT.md
 * "Row writes" (exactly two parts, each 1..128 characters, no control characters and no
 * dot inside a part). Parts are kept raw; the SQL adapter quotes them as identifiers.
 */
export interface EntityName {
  /** Schema part, e.g. `dbo`. */
  readonly schema: string;
  /** Table part, e.g. `orders` or `my table` or `we]ird`. */
  readonly table: string;
}

/**
 * Parses `schema.table`.
 *
 * @param text - the wire value of `entity`.
 * @returns the entity name, or a message naming the broken rule (`orders`, `a.b.c`,
 *   `.t`, `dbo.`, a part over 128 characters, a control character).
 */
export function parseEntityName(text: string): Result<EntityName, string> {
  // Two `indexOf`s, not `split('.')`: no array a row write.
  const dot = text.indexOf('.');
  if (dot < 0 || text.indexOf('.', dot + 1) >= 0) return err('must be written schema.table: exactly two parts separated by one dot');
  const schema = text.slice(0, dot);
  const table = text.slice(dot + 1);
  const s = checkIdentifierPart(schema);
  if (!s.ok) return err(`schema part ${s.error}`);
  const t = checkIdentifierPart(table);
  if (!t.ok) return err(`table part ${t.error}`);
  return ok({ schema, table });
}

/** Formats an entity name back to its wire form `schema.table`. */
export function formatEntityName(entity: EntityName): string {
  return `${entity.schema}.${entity.table}`;
}
