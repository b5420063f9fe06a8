import { apiKeyOnly, jsonRequestBody, jsonResponse, replayableHeaders, responseRef, rowWriteErrors } from '../openapi/components.js';
import { idempotencyStage } from '../pipeline/idempotency.js';
import { sendResult } from '../pipeline/rate-limit.js';
import type { Context } from 'koa';
import type { AuthenticatedRoute, Caller } from '../route.js';
import { jsonBody } from '../pipeline/json-body.js';
import { recordWriteParameters, rowWriteRequest, type RowWriteRequest } from './record-write-input.js';

/**
 * `PATCH /api/v1/connections/{connection_id}/records` (and `PATCH /v1/connections/{connection_id}/records`
 * on the egress address): update the one row selected by `key_column = key_value` → 200
 * `{"data": {"rows_affected": 0|1}}`; 409 `ambiguous_key` when the key selects several rows.
 * On the main address the route comes from `X-Svc-Egress`; on the egress address it is
 * always the egress route. Source: docs/api-spec.md "PATCH .../records"; docs/CONTRACT.md "Row writes", "Addresses".
 */
export const updateRecordRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'updateRecord',
  credential: 'updateRecord',
  method: 'PATCH',
  paths: { main: ['/api/v1/connections/:connection_id/records'], egress: ['/v1/connections/:connection_id/records'] },
  handler: ({ useCases, limits, settings }, listener) => {
    const updateRecord = useCases.updateRecord;
    const idempotently = idempotencyStage(useCases.claimIdempotencyKey, settings.logger);
    const write = (ctx: Context, caller: Caller, input: RowWriteRequest): Promise<void> => updateRecord.execute(input).then((result) => sendResult(ctx, caller.meter, result, 200));
    // One `then` for the body and the write (the body read by `jsonBody`, held to the body limit).
    return (ctx, caller) => jsonBody(ctx, limits.bodyLimitBytes).then((body) => idempotently(ctx, caller, body, rowWriteRequest(ctx, caller, listener, body), write));
  },
  openapi: ({ limits }, listener) => ({
    operationId: listener === 'egress' ? 'updateRecordViaEgress' : 'updateRecord',
    tags: ['Connections'],
    summary: 'Update the single row selected by a key',
    description:
      'Updates the row where `key_column = key_value`, in one transaction: 0 rows → `rows_affected: 0`; more than one → 409 `ambiguous_key` and nothing is changed. Only for `sqlserver` connections.' +
      (listener === 'egress' ? ' This address always uses the stable egress route.' : ''),
    security: apiKeyOnly,
    parameters: recordWriteParameters(listener, limits),
    requestBody: jsonRequestBody('UpdateRecordRequest', { row: { entity: 'dbo.orders', key_column: 'id', key_value: 2, values: { qty: 4 } } }),
    responses: { '200': jsonResponse('Updated (0 or 1 row).', 'RowWriteResponse', { data: { rows_affected: 1 } }, replayableHeaders), ...rowWriteErrors({ '409': responseRef('Conflict') }) },
  }),
};
