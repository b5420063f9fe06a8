import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { RecordWriter } from '../ports/record-writer.js';
import { validateUpdateRecordBody, type UpdateRecordBody } from '../schemas/validate.js';
import type { DomainError } from '../domain/errors.js';
import type { Result } from '../domain/result.js';
import { executeRecordWrite, type RecordWriteErrorCode, type RecordWriteInput, type RowWriteResult } from './record-write.js';

/**
 * Updates the single row selected by `key_column = key_value`:
 * `PATCH /api/v1/connections/{connection_id}/records`.
 *
 * Same steps and codes as {@link InsertRecord}, plus `ambiguous_key` when the key selects
 * more than one row (nothing is changed). 0 rows selected is a success with
 * `rows_affected: 0`. Source: docs/api-spec.md "PATCH .../records"; docs/CONTRACT.md "Row writes".
 */
export class UpdateRecord {
  constructor(
    private readonly connections: ConnectionCatalog,
    private readonly writer: RecordWriter,
  ) {}

  /** @returns `{rows_affected: 0 | 1}` (answered 200), or an error with its code. */
  execute(input: RecordWriteInput<UpdateRecordBody>): Promise<Result<RowWriteResult, DomainError<RecordWriteErrorCode>>> {
    return executeRecordWrite(input, this.connections, validateUpdateRecordBody, (connection, entity, body, route) =>
      this.writer.update({ connection, entity, key: { column: body.key_column, value: body.key_value }, values: body.values, route }),
    );
  }
}
