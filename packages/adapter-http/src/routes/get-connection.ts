import { apiKeyOnly, connectionIdParameter, errorResponses, jsonResponse, responseRef } from '../openapi/components.js';
import { sendResult } from '../pipeline/rate-limit.js';
import { pathParam, type AuthenticatedRoute } from '../route.js';

/**
 * `GET /api/v1/connections/{connection_id}`: one of the caller's connections → 200
 * `{"data": Connection}` (the single connection is wrapped like other reads; only the list
 * is a bare array); another account's answers 404 like a missing one. Never a password,
 * user name or host. API keys only. Source: docs/CONTRACT.md "Discovery".
 */
export const getConnectionRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'getConnection',
  credential: 'getConnection',
  method: 'GET',
  paths: { main: ['/api/v1/connections/:connection_id'] },
  handler: ({ useCases }) => {
    const getConnection = useCases.getConnection;
    return async (ctx, caller) => {
      sendResult(ctx, caller.meter, await getConnection.execute({ principal: caller.principal, meter: caller.meter, connectionId: pathParam(ctx, 'connection_id') }), 200);
    };
  },
  openapi: () => ({
    operationId: 'getConnection',
    tags: ['Connections', 'Discovery'],
    summary: 'Read a connection',
    description:
      "Its type, name, whether it allows row writes (`writable`: SQL Server only), the egress source address to allowlist (`null` when the server has none configured) and its records URL. Never a password, user name or host. Another account's connection answers 404 exactly like a missing one. API keys only.",
    security: apiKeyOnly,
    parameters: [connectionIdParameter],
    responses: {
      '200': jsonResponse('The connection.', 'ConnectionResponse', {
        data: {
          connection_id: '6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f',
          type: 'sqlserver',
          name: null,
          writable: true,
          egress_source_address: null,
          records_url: 'https://api.svc.example.test/api/v1/connections/6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f/records',
          created_at: null,
        },
      }),
      ...errorResponses({ '401': responseRef('Unauthorized'), '404': responseRef('NotFound'), '429': responseRef('TooManyRequests'), '503': responseRef('ServiceUnavailable') }),
    },
  }),
};
