import type { ColumnValue, ColumnValues } from '../domain/column-values.js';
import { formatEntityName, type EntityName } from '../domain/entity-name.js';
import { domainError } from '../domain/errors.js';
import { sameColumnValue } from '../domain/exact-number.js';
import { err, ok, type Result } from '../domain/result.js';
import type { InsertCommand, RecordWriter, UpdateCommand, WriteError, WriteOutcome } from '../ports/record-writer.js';

/** A row of an in-memory table. */
export type Row = Record<string, ColumnValue>;

interface Table {
  readonly columns: ReadonlySet<string>;
  rows: Row[];
}

/**
 * Tables in memory that follow the {@link RecordWriter} contract: unknown table →
 * `unknown_entity`, unknown column → `unknown_column`, key selecting several rows →
 * `ambiguous_key` with nothing changed. It also keeps the commands it received, so a
 * test can see that it was never called.
 */
export class InMemoryRecordWriter implements RecordWriter {
  private readonly tables = new Map<string, Table>();
  /** Every command received, in order (insert and update). */
  readonly received: (InsertCommand | UpdateCommand)[] = [];

  /** Creates (or replaces) a table with these columns and rows. */
  defineTable(entity: EntityName | string, columns: readonly string[], rows: readonly Row[] = []): void {
    const name = typeof entity === 'string' ? entity : formatEntityName(entity);
    this.tables.set(name, { columns: new Set(columns), rows: rows.map((r) => ({ ...r })) });
  }

  /** A copy of a table's rows, or `undefined` for an unknown table. */
  rowsOf(entity: EntityName | string): Row[] | undefined {
    const name = typeof entity === 'string' ? entity : formatEntityName(entity);
    return this.tables.get(name)?.rows.map((r) => ({ ...r }));
  }

  insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>> {
    this.received.push(command);
    const table = this.resolve(command.entity, command.values);
    if (!table.ok) return Promise.resolve(table);
    table.value.rows.push({ ...command.values });
    return Promise.resolve(ok({ rowsAffected: 1 }));
  }

  update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>> {
    this.received.push(command);
    const table = this.resolve(command.entity, { ...command.values, [command.key.column]: command.key.value });
    if (!table.ok) return Promise.resolve(table);
    // Numbers compare by exact value (docs/CONTRACT.md "Exact values"), as SQL Server compares
    // the exactly bound parameter: 9007199254740993 never selects 9007199254740992.
    const matches = table.value.rows.filter((r) => Object.hasOwn(r, command.key.column) && sameColumnValue(r[command.key.column], command.key.value));
    if (matches.length > 1) {
      return Promise.resolve(
        err(domainError('ambiguous_key', `key_column ${command.key.column} selects ${matches.length} rows; nothing was changed.`)),
      );
    }
    // defineProperty, not Object.assign: a column named __proto__ is set as a column, never
    // through the inherited setter that would replace the row's prototype.
    for (const row of matches) {
      for (const [column, value] of Object.entries(command.values)) {
        Object.defineProperty(row, column, { value, enumerable: true, writable: true, configurable: true });
      }
    }
    return Promise.resolve(ok({ rowsAffected: matches.length }));
  }

  private resolve(entity: EntityName, values: ColumnValues): Result<Table, WriteError> {
    const table = this.tables.get(formatEntityName(entity));
    if (table === undefined) {
      return err(domainError('unknown_entity', `Entity ${formatEntityName(entity)} does not exist or is not visible.`));
    }
    for (const column of Object.keys(values)) {
      if (!table.columns.has(column)) {
        return err(domainError('unknown_column', `Column ${column} does not exist in ${formatEntityName(entity)}.`));
      }
    }
    return ok(table);
  }
}
