import { checkIdentifierPart, exactDecimalOf, MAX_DECIMAL_PRECISION, MAX_WRITE_PARAMETERS, type ColumnValue, type ColumnValues, type EntityName, type KeySelector } from '@svc/core';
import { TYPES } from 'tedious';

/** A tedious data type, as `Request.addParameter` takes it. */
export type SqlDataType = (typeof TYPES)[keyof typeof TYPES];

/** One value bound as a typed `sp_executesql` parameter, never spliced into SQL text. */
export interface BoundParameter {
  /** Parameter name without `@`, e.g. `p0`. */
  readonly name: string;
  /** SQL Server type the value is declared as on the wire. */
  readonly type: SqlDataType;
  /** The value; `null` is SQL NULL. A `bigint` keeps every digit of a `bigint` parameter. */
  readonly value: string | number | bigint | boolean | null;
  /** Declared length in characters, for strings up to 4000 (longer ones are `nvarchar(max)`). */
  readonly options?: { readonly length: number };
  /** How the statement refers to the value: `@p0`, or `CAST(@p0 AS decimal(38, 9))`. */
  readonly reference: string;
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

/** The insert batch's last line: the statement's own row count. */
const SELECT_ROWS_AFFECTED = `SELECT @@ROWCOUNT AS [${ROWS_AFFECTED_COLUMN}];`;

// The range of `int`; compared with JS numbers and with bigints alike.
const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;
// nvarchar(n) tops out at 4000 UTF-16 code units; longer strings go as nvarchar(max).
const NVARCHAR_MAX_LENGTH = 4000;

/**
 * Quotes one identifier part as a SQL Server delimited identifier: `[` + the part with
 * every `]` doubled + `]` (T-SQL "Database identifiers", delimited identifiers;
 * docs/CONTRACT.md "Row writes"). Nothing is stripped, split or refused that the core's
 * identifier rules allow, so `we]ird table` stays that table and never becomes another.
 *
 * @throws Error when the part breaks the core's identifier rules (empty, over 128
 *   characters, a control character or a dot): validation should have refused it, so
 *   reaching here is a bug.
 */
export function quoteIdentifier(part: string): string {
  const checked = checkIdentifierPart(part);
  if (!checked.ok) throw new Error(`identifier part ${checked.error}`);
  return part.includes(']') ? `[${part.replaceAll(']', ']]')}]` : `[${part}]`;
}

/** `[schema].[table]`. */
export function quoteEntity(entity: EntityName): string {
  return `${quoteIdentifier(entity.schema)}.${quoteIdentifier(entity.table)}`;
}

// Longest plain text of a decimal(38, s): sign, 38 digits, point and the 0 before a
// point that leads (`-0.` + 38 digits = 41 characters). One declared length for all
// keeps one cached plan per statement shape.
const DECIMAL_TEXT_LENGTH = 41;

/**
 * Binds a JSON value with a SQL Server type that holds it exactly: string → nvarchar,
 * boolean → bit, null → nvarchar NULL (SQL Server converts a NULL nvarchar implicitly to
 * the column's type for every column a JSON value can fill), and a number (JS `number`
 * or `ExactNumber` of @svc/core) by its exact decimal form (docs/CONTRACT.md "Exact values"):
 *
 * - an integer within `int` → int, within `bigint` → bigint, sent from its exact text
 *   (tedious 19 writes a `bigint` parameter with `writeBigInt64LE(BigInt(value))`, so a
 *   JS `bigint` arrives digit for digit);
 * - any other number → its plain decimal text as `varchar(41)`, converted by SQL Server
 *   with `CAST(@pN AS decimal(38, s))`. Not tedious's `TYPES.Decimal`: tedious 19
 *   `parseFloat`s the value, multiplies it by 10^scale as a double, `Math.round`s it and
 *   writes it with `writeUInt64LE`, zero above 64 bits (tedious 19.2.2
 *   `lib/data-types/decimal.js`). Measured against the scripted server
 *   (test/exact-values.test.ts): as `decimal(38, 9)`, `1234567890.123456789` arrives as
 *   1234567890.123456768, and `12345678901234567890.123456789` cannot be sent at all
 *   (its scaled double is over 2^64). Not float either: a double holds 15–17 digits. `CAST` of character data to decimal is exact in SQL Server, and the
 *   expression has the type a numeric literal with those digits would have.
 *
 * @throws Error for a number outside the exact range (validation refuses it before any
 *   writer is called, so this is a bug of the caller).
 */
export function bindValue(name: string, value: ColumnValue): BoundParameter {
  const reference = `@${name}`;
  if (value === null) return { name, type: TYPES.NVarChar, value: null, options: { length: NVARCHAR_MAX_LENGTH }, reference };
  if (typeof value === 'string') {
    // One declared length for every short string keeps one cached plan per statement
    // shape instead of one per string length (sp_executesql declares `nvarchar(n)`).
    return value.length <= NVARCHAR_MAX_LENGTH
      ? { name, type: TYPES.NVarChar, value, options: { length: NVARCHAR_MAX_LENGTH }, reference }
      : { name, type: TYPES.NVarChar, value, reference };
  }
  if (typeof value === 'boolean') return { name, type: TYPES.Bit, value, reference };
  // A safe integer is exact as it is: int or bigint by its size, without exactDecimalOf's BigInt.
  if (typeof value === 'number' && Number.isSafeInteger(value)) {
    // `-0` is sent as 0, as its exact text `0` would be.
    return value >= INT_MIN && value <= INT_MAX ? { name, type: TYPES.Int, value: value === 0 ? 0 : value, reference } : { name, type: TYPES.BigInt, value: BigInt(value), reference };
  }
  const exact = exactDecimalOf(value);
  if (!exact.ok) throw new Error(`parameter ${name}: the number ${exact.error}`);
  const { text, scale, isBigint } = exact.value;
  if (isBigint) {
    const n = BigInt(text);
    return n >= INT_MIN && n <= INT_MAX ? { name, type: TYPES.Int, value: Number(n), reference } : { name, type: TYPES.BigInt, value: n, reference };
  }
  return {
    name,
    type: TYPES.VarChar,
    value: text,
    options: { length: DECIMAL_TEXT_LENGTH },
    reference: `CAST(@${name} AS decimal(${MAX_DECIMAL_PRECISION}, ${scale}))`,
  };
}

// SQL Server refuses an RPC of more than 2,100 parameters (error 8003), two of which are
// sp_executesql's own; the core's validation keeps writes within MAX_WRITE_PARAMETERS.
function checkParameterCount(count: number): void {
  if (count > MAX_WRITE_PARAMETERS) throw new Error(`a write binds at most ${MAX_WRITE_PARAMETERS} parameters, not ${count}`);
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
  checkParameterCount(columns.length);
  // One loop for the parameters, the column list and the value list (not three `map`s and
  // `join`s), and the last line made once.
  const parameters: BoundParameter[] = [];
  let names = '';
  let references = '';
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i] as string;
    const parameter = bindValue(`p${i}`, values[column] ?? null);
    parameters.push(parameter);
    names += i === 0 ? quoteIdentifier(column) : `, ${quoteIdentifier(column)}`;
    references += i === 0 ? parameter.reference : `, ${parameter.reference}`;
  }
  const sql = `SET NOCOUNT ON;\nINSERT INTO ${quoteEntity(entity)} (${names}) VALUES (${references});\n${SELECT_ROWS_AFFECTED}`;
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
  checkParameterCount(columns.length + 1);
  const parameters = columns.map((column, i) => bindValue(`p${i}`, values[column] ?? null));
  const keyParameter = bindValue(`p${columns.length}`, key.value);
  const assignments = columns.map((column, i) => `${quoteIdentifier(column)} = ${parameters[i]?.reference ?? ''}`).join(', ');
  const count = `@${ROWS_AFFECTED_COLUMN}`;
  const sql = [
    'SET NOCOUNT ON;',
    'SET XACT_ABORT ON;',
    `DECLARE ${count} int;`,
    'BEGIN TRANSACTION;',
    `UPDATE TOP (2) ${quoteEntity(entity)} SET ${assignments} WHERE ${quoteIdentifier(key.column)} = ${keyParameter.reference};`,
    `SET ${count} = @@ROWCOUNT;`,
    `IF ${count} > 1 BEGIN ROLLBACK TRANSACTION; END ELSE BEGIN COMMIT TRANSACTION; END;`,
    `SELECT ${count} AS ${quoteIdentifier(ROWS_AFFECTED_COLUMN)};`,
  ].join('\n');
  return { sql, parameters: [...parameters, keyParameter] };
}
