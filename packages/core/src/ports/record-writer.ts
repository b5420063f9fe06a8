import type { ColumnValues, KeySelector } from '../domain/column-values.js';
import type { Connection } from '../domain/connection.js';
import type { EgressRoute } from '../domain/egress-route.js';
import type { EntityName } from '../domain/entity-name.js';
import type { DomainError } from '../domain/errors.js';
import type { Result } from '../domain/result.js';

/** Insert one row. Source: docs/api-spec.md "POST /api/v1/connections/{connection_id}/records". */
export interface InsertCommand {
  /** Target connection; its type allows writes (checked before the writer is called). */
  readonly connection: Connection;
  /** Table to insert into. */
  readonly entity: EntityName;
  /** Non-empty column values, bound as parameters. */
  readonly values: ColumnValues;
  /** Route the database traffic takes. */
  readonly route: EgressRoute;
}

/** Update the one row selected by a key. Source: docs/api-spec.md "PATCH .../records". */
export interface UpdateCommand extends InsertCommand {
  /** `key_column = key_value`. */
  readonly key: KeySelector;
}

/** A successful row write. Source: docs/api-spec.md "Row-write result". */
export interface WriteOutcome {
  /** Rows the statement itself affected (trigger statements not counted). */
  readonly rowsAffected: number;
}

/** Expected failures of a row write, per docs/CONTRACT.md "Row writes" and its error table. */
export type WriteErrorCode =
  | 'unknown_entity'
  | 'unknown_column'
  | 'constraint_violation'
  | 'invalid_value'
  | 'ambiguous_key'
  | 'connection_unavailable'
  | 'connection_timeout';

/** A failed row write; `detail` names the column or constraint, never SQL, host or user. */
export type WriteError = DomainError<WriteErrorCode>;

/**
 * Writes single rows to a customer's database.
 *
 * Contract:
 * - `insert` resolves `{rowsAffected: 1}` on success.
 * - `update` changes at most one row: 0 → `{rowsAffected: 0}`; more than one selected →
 *   nothing changed and `ambiguous_key`.
 * - Expected database failures resolve as `Err` with a {@link WriteErrorCode}; the
 *   writer rejects only for bugs (e.g. a connection id it has no settings for).
 * - A write is never retried silently after it may have reached the database.
 * - `route: 'egress'` makes the traffic leave from the stable egress source address.
 */
export interface RecordWriter {
  /** Inserts one row. */
  insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>>;
  /** Updates the single row selected by `command.key`. */
  update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>>;
}
