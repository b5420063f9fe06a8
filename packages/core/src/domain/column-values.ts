import { ExactNumber } from './exact-number.js';

/**
 * A column value: string, number, boolean or null. A number is a finite JS `number` or,
 * when a JS number cannot hold the digits written, an {@link ExactNumber}; either is
 * written exactly or refused (`invalid_value`, docs/CONTRACT.md "Exact values").
 * Source: docs/api-spec.md "Record (row)".
 */
export type ColumnValue = string | number | ExactNumber | boolean | null;

/**
 * Column name to value pairs of one row write; never empty, names follow the identifier
 * rules of docs/CONTRACT.md "Row writes". Values are always bound as parameters, never
 * spliced into SQL.
 */
export type ColumnValues = Readonly<Record<string, ColumnValue>>;

/**
 * Selects the single row an update changes: `key_column = key_value`.
 *
 * Source: docs/api-spec.md "PATCH .../records" and docs/CONTRACT.md "Row writes" (`key_value` is a
 * string, number or boolean, never null).
 */
export interface KeySelector {
  /** Column compared with `value`. */
  readonly column: string;
  /** Value of the key; null is refused by validation. */
  readonly value: string | number | ExactNumber | boolean;
}

/** True for the JSON scalars a column accepts. */
export function isColumnValue(value: unknown): value is ColumnValue {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    value instanceof ExactNumber
  );
}
