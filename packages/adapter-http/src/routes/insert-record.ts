import { apiKeyOnly, jsonRequestBody, jsonResponse, replayableHeaders, rowWriteErrors } from '../openapi/components.js';
import { idempotencyStage } from '../pipeline/idempotency.js';
import { sendResult } from '../pipeline/rate-limit.js';
import type { Context } from 'koa';
import type { AuthenticatedRoute, Caller } from '../route.js';
import { jsonBody } from '../pipeline/json-body.js';
import { recordWriteParameters, rowWriteRequest, type RowWriteRequest } from './record-write-input.js';

/**
 * `POST /api/v1/connections/{connection_id}/records` (and `POST /v1/connections/{connection_id}/records`
 * on the egress address): insert one row → 201 `{"data": {"rows_affected": 1}}`.
 * On the main address the route comes from `X-Svc-Egress`; on the egress address it is
 * always the egress route. Source: docs/api-spec.md "POST .../records"; docs/CONTRACT.md "Row writes", "Addresses".
 */
export const insertRecordRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'insertRecord',
  credential: 'insertRecord',
  method: 'POST',
  paths: { main: ['/api/v1/connections/:connection_id/records'], egress: ['/v1/connections/:connection_id/records'] },
  handler: ({ useCases, limits, settings }, listener) => {
    const insertRecord = useCases.insertRecord;
    const idempotently = idempotencyStage(useCases.claimIdempotencyKey, settings.logger);
    const write = (ctx: Context, caller: Caller, input: RowWriteRequest): Promise<void> => insertRecord.execute(input).then((result) => sendResult(ctx, caller.meter, result, 201));
    // One `then` for the body and the write (the body read by `jsonBody`, held to the body limit).
    return (ctx, caller) => jsonBody(ctx, limits.bodyLimitBytes).then((body) => idempotently(ctx, caller, body, rowWriteRequest(ctx, caller, listener, body), write));
  },
  openapi: ({ limits }, listener) => ({
    operationId: listener === 'egress' ? 'insertRecordViaEgress' : 'insertRecord',
    tags: ['Connections'],
    summary: 'Insert a single row',
    description:
      'Inserts one new row into `entity`. Only for `sqlserver` connections; other types answer 400 `writes_not_supported` before any database is touched. Identifiers are quoted, values are bound as parameters.' +
      (listener === 'egress' ? ' This address always uses the stable egress route.' : ''),
    security: apiKeyOnly,
    parameters: recordWriteParameters(listener, limits),
    requestBody: jsonRequestBody('InsertRecordRequest', { row: { entity: 'dbo.orders', values: { id: 2, sku: 'B-7', qty: 3, note: null } } }),
    responses: { '201': jsonResponse('Inserted.', 'RowWriteResponse', { data: { rows_affected: 1 } }, replayableHeaders), ...rowWriteErrors() },
  }),
};
