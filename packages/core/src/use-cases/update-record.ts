import { validationFailed } from '../domain/errors.js';
import { err } from '../domain/result.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { RecordWriter } from '../ports/record-writer.js';
import { validateUpdateRecordBody } from '../schemas/validate.js';
import { entityOf, routeOf, writableConnection, type RecordWriteErrorCode, type RecordWriteInput, type RowWriteResult } from './record-write.js';
import { rateLimited, type Metered, type RequestQuota } from './request-quota.js';

/**
 * Updates the single row selected by `key_column = key_value`:
 * `PATCH /api/v1/connections/{connection_id}/records`.
 *
 * Same steps and codes as {@link InsertRecord}, plus `ambiguous_key` when the key selects
 * more than one row (nothing is changed). 0 rows selected is a success with
 * `rows_affected: 0`. Source: api-spec.md "PATCH .../records"; CONTRACT.md "Row writes".
 */
export class UpdateRecord {
  constructor(
    private readonly connections: ConnectionCatalog,
    private readonly writer: RecordWriter,
    private readonly quota: RequestQuota,
  ) {}

  /** @returns `{rows_affected: 0 | 1}` (answered 200), or an error with its code. */
  async execute(input: RecordWriteInput): Promise<Metered<RowWriteResult, RecordWriteErrorCode>> {
    const rateLimit = await this.quota.charge(input.principal);
    if (!rateLimit.allowed) return { result: err(rateLimited(rateLimit)), rateLimit };

    const route = routeOf(input.route);
    if (!route.ok) return { result: route, rateLimit };
    const body = validateUpdateRecordBody(input.body);
    if (!body.ok) return { result: err(validationFailed(body.error)), rateLimit };
    const entity = entityOf(body.value.entity);
    if (!entity.ok) return { result: entity, rateLimit };
    const connection = await writableConnection(this.connections, input.principal, input.connectionId);
    if (!connection.ok) return { result: connection, rateLimit };

    const written = await this.writer.update({
      connection: connection.value,
      entity: entity.value,
      key: { column: body.value.key_column, value: body.value.key_value },
      values: body.value.values,
      route: route.value,
    });
    return {
      result: written.ok ? { ok: true, value: { rows_affected: written.value.rowsAffected } } : written,
      rateLimit,
    };
  }
}
