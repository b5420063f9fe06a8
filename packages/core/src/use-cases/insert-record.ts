import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { RecordWriter } from '../ports/record-writer.js';
import { validateInsertRecordBody, type InsertRecordBody } from '../schemas/validate.js';
import type { DomainError } from '../domain/errors.js';
import type { Result } from '../domain/result.js';
import { executeRecordWrite, type RecordWriteErrorCode, type RecordWriteInput, type RowWriteResult } from './record-write.js';

/**
 * Inserts a single new row: `POST /api/v1/connections/{connection_id}/records`.
 *
 * Steps: charge the request (`input.meter`: the credential's window) (`rate_limited`); check the `X-Svc-Egress`
 * header (`invalid_header`); validate the body (`validation_failed` with JSON Pointer
 * paths); find the connection (`not_found`, the same for another account's); refuse
 * types other than `sqlserver` (`writes_not_supported`) before the writer is called;
 * write on the requested route (`unknown_entity`, `unknown_column`,
 * `constraint_violation`, `invalid_value`, `connection_unavailable`,
 * `connection_timeout`).
 * Source: docs/api-spec.md "POST .../records"; docs/CONTRACT.md "Row writes".
 */
export class InsertRecord {
  constructor(
    private readonly connections: ConnectionCatalog,
    private readonly writer: RecordWriter,
  ) {}

  /** @returns `{rows_affected: 1}` (answered 201), or an error with its code. */
  execute(input: RecordWriteInput<InsertRecordBody>): Promise<Result<RowWriteResult, DomainError<RecordWriteErrorCode>>> {
    return executeRecordWrite(input, this.connections, validateInsertRecordBody, (connection, entity, body, route) =>
      this.writer.insert({ connection, entity, values: body.values, route }),
    );
  }
}
