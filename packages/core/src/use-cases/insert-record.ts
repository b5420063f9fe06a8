import { validationFailed } from '../domain/errors.js';
import { err } from '../domain/result.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { RecordWriter } from '../ports/record-writer.js';
import { validateInsertRecordBody } from '../schemas/validate.js';
import { entityOf, routeOf, writableConnection, type RecordWriteErrorCode, type RecordWriteInput, type RowWriteResult } from './record-write.js';
import { rateLimited, type Metered, type RequestQuota } from './request-quota.js';

/**
 * Inserts a single new row: `POST /api/v1/connections/{connection_id}/records`.
 *
 * Steps: charge the credential's window (`rate_limited`); check the `X-Svc-Egress`
 * header (`invalid_header`); validate the body (`validation_failed` with JSON Pointer
 * paths); find the connection (`not_found`, the same for another account's); refuse
 * types other than `sqlserver` (`writes_not_supported`) before the writer is called;
 * write on the requested route
 * (`unknown_entity`, `unknown_column`, `constraint_violation`, `invalid_value`,
 * `connection_unavailable`, `connection_timeout`).
 * Source: api-spec.md "POST .../records"; CONTRACT.md "Row writes".
 */
export class InsertRecord {
  constructor(
    private readonly connections: ConnectionCatalog,
    private readonly writer: RecordWriter,
    private readonly quota: RequestQuota,
  ) {}

  /** @returns `{rows_affected: 1}` (answered 201), or an error with its code. */
  async execute(input: RecordWriteInput): Promise<Metered<RowWriteResult, RecordWriteErrorCode>> {
    const rateLimit = await this.quota.charge(input.principal);
    if (!rateLimit.allowed) return { result: err(rateLimited(rateLimit)), rateLimit };

    const route = routeOf(input.route);
    if (!route.ok) return { result: route, rateLimit };
    const body = validateInsertRecordBody(input.body);
    if (!body.ok) return { result: err(validationFailed(body.error)), rateLimit };
    const entity = entityOf(body.value.entity);
    if (!entity.ok) return { result: entity, rateLimit };
    const connection = await writableConnection(this.connections, input.principal, input.connectionId);
    if (!connection.ok) return { result: connection, rateLimit };

    const written = await this.writer.insert({
      connection: connection.value,
      entity: entity.value,
      values: body.value.values,
      route: route.value,
    });
    return {
      result: written.ok ? { ok: true, value: { rows_affected: written.value.rowsAffected } } : written,
      rateLimit,
    };
  }
}
