import { checkIdentifierPart, type ColumnValue, type ColumnValues, type EntityName, type KeySelector } from '@svc/core';
import { TYPES } from 'tedious';

/** A tedious data type, as `Request.addParameter` takes it. */
export type SqlDataType = (typeof TYPES)[keyof typeof TYPES];

/** One value bound as a typed `sp_executesql` parameter, never spliced into SQL text. */
export interface BoundParameter {
  /** Parameter name without `@`, e.g. `p0`. */
  readonly name: string;
  /** SQL Server type the value is declared as on the wire. */
  readonly type: SqlDataType;
  /** The value; `null` is SQL NULL. */
  readonly value: string | number | boolean | null;
  /** Declared length in characters, for strings up to 4000 (longer ones are `nvarchar(max)`). */
  readonly options?: { readonly length: number };
}

/** A statement batch and its parameters: one `sp_executesql` RPC, one round trip. */
export interface Statement {
  /** T-SQL text; identifiers quoted, values only as `@pN` references. */
  readonly sql: string;
  /** Parameters in `@p0, @p1, ...` order. */
  readonly parameters: readonly BoundParameter[];
}

/** Name of the one-column, one-row result every batch ends with. */
export const ROWS_AFFECTED_COLUMN = 'rows_affected';

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;
// nvarchar(n) tops out at 4000 UTF-16 code units; longer strings go as nvarchar(max).
const NVARCHAR_MAX_LENGTH = 4000;

/**
 * Quotes one identifier part as a SQL Server delimited identifier: `[` + the part with
 * every `]` doubled + `]` (T-SQL "Database identifiers", delimited identifiers;
 * CONTRACT.md "Row writes"). Nothing is stripped, split or refused that the core's
 * identifier rules allow, so `we]ird table` stays that table and never becomes another.
 *
 * @throws Error when the part breaks the core's identifier rules (empty, over 128
 *   characters, a control character or a dot): validation should have refused it, so
 *   reaching here is a bug.
 */
export function quoteIdentifier(part: string): string {
  const checked = checkIdentifierPart(part);
  if (!checked.ok) throw new Error(`identifier part ${checked.error}`);
  return `[${part.replaceAll(']', ']]')}]`;
}

/** `[schema].[table]`. */
export function quoteEntity(entity: EntityName): string {
  return `${quoteIdentifier(entity.schema)}.${quoteIdentifier(entity.table)}`;
}

/**
 * Binds a JSON value with the SQL Server type that holds it exactly: string → nvarchar,
 * safe integer → int or bigint by range, any other number → float, boolean → bit,
 * null → nvarchar NULL (SQL Server converts a NULL nvarchar implicitly to the column's
 * type for every column a JSON value can fill).
 */
export function bindValue(name: string, value: ColumnValue): BoundParameter {
  if (value === null) return { name, type: TYPES.NVarChar, value: null, options: { length: NVARCHAR_MAX_LENGTH } };
  switch (typeof value) {
    case 'string':
      // One declared length for every short string keeps one cached plan per statement
      // shape instead of one per string length (sp_executesql declares `nvarchar(n)`).
      return value.length <= NVARCHAR_MAX_LENGTH
        ? { name, type: TYPES.NVarChar, value, options: { length: NVARCHAR_MAX_LENGTH } }
        : { name, type: TYPES.NVarChar, value };
    case 'boolean':
      return { name, type: TYPES.Bit, value };
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`parameter ${name} is not a finite number`);
      if (Number.isSafeInteger(value)) {
        return { name, type: value >= INT_MIN && value <= INT_MAX ? TYPES.Int : TYPES.BigInt, value };
      }
      return { name, type: TYPES.Float, value };
  }
}

/**
 * The insert batch: one parameterised `INSERT`, then the statement's own row count.
 *
 * `@@ROWCOUNT` read right after the `INSERT` is that statement's count; the `DONE`
 * tokens of the response would also count the rows of every trigger statement. No
 * `OUTPUT` clause: SQL Server refuses `OUTPUT` without `INTO` on a table with enabled
 * triggers (error 334). `SET NOCOUNT ON` keeps trigger and statement counts off the
 * wire; SET options inside `sp_executesql` end with it, so the pooled session is not
 * changed.
 */
export function insertStatement(entity: EntityName, values: ColumnValues): Statement {
  const columns = Object.keys(values);
  if (columns.length === 0) throw new Error('an insert needs at least one column');
  const parameters = columns.map((column, i) => bindValue(`p${i}`, values[column] ?? null));
  const sql = [
    'SET NOCOUNT ON;',
    `INSERT INTO ${quoteEntity(entity)} (${columns.map(quoteIdentifier).join(', ')}) VALUES (${parameters.map((p) => `@${p.name}`).join(', ')});`,
    `SELECT @@ROWCOUNT AS ${quoteIdentifier(ROWS_AFFECTED_COLUMN)};`,
  ].join('\n');
  return { sql, parameters };
}

/**
 * The update batch, sent as one `sp_executesql` RPC (one round trip): in a transaction,
 * update at most two rows selected by `key_column = key_value`, keep the statement's own
 * `@@ROWCOUNT`, roll back when it is over 1 (an ambiguous key: nothing changes), commit
 * otherwise, and select the count.
 *
 * `TOP (2)` is enough to tell one row from many without touching every duplicate.
 * `SET XACT_ABORT ON` makes any error (and a client timeout's attention) roll the
 * transaction back, so no error can leave it open on a pooled connection.
 */
export function updateStatement(entity: EntityName, key: KeySelector, values: ColumnValues): Statement {
  const columns = Object.keys(values);
  if (columns.length === 0) throw new Error('an update needs at least one column');
  const parameters = columns.map((column, i) => bindValue(`p${i}`, values[column] ?? null));
  const keyParameter = bindValue(`p${columns.length}`, key.value);
  const assignments = columns.map((column, i) => `${quoteIdentifier(column)} = @p${i}`).join(', ');
  const count = `@${ROWS_AFFECTED_COLUMN}`;
  const sql = [
    'SET NOCOUNT ON;',
    'SET XACT_ABORT ON;',
    `DECLARE ${count} int;`,
    'BEGIN TRANSACTION;',
    `UPDATE TOP (2) ${quoteEntity(entity)} SET ${assignments} WHERE ${quoteIdentifier(key.column)} = @${keyParameter.name};`,
    `SET ${count} = @@ROWCOUNT;`,
    `IF ${count} > 1 BEGIN ROLLBACK TRANSACTION; END ELSE BEGIN COMMIT TRANSACTION; END;`,
    `SELECT ${count} AS ${quoteIdentifier(ROWS_AFFECTED_COLUMN)};`,
  ].join('\n');
  return { sql, parameters: [...parameters, keyParameter] };
}
