import { apiKeyOnly, errorResponses, jsonResponse, listPageHeaders, pagingParameters, responseRef } from '../openapi/components.js';
import { pageQueryOf, queryParams, setNextLink } from '../paging.js';
import { sendError } from '../pipeline/problem-details.js';
import { sendResultAs } from '../pipeline/rate-limit.js';
import type { AuthenticatedRoute } from '../route.js';

const PARAMETERS = ['limit', 'cursor'] as const;

/**
 * `GET /api/v1/connections`: the caller's connections, a page at a time → 200 `[Connection]`,
 * the array itself without the `data` wrapper (docs/api-spec.md convention 3), so the next
 * page is only in `Link: <…>; rel="next"`. API keys only.
 * Source: docs/api-spec.md "What the service does" (general convention 3); docs/CONTRACT.md "Discovery".
 */
export const listConnectionsRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'listConnections',
  credential: 'listConnections',
  method: 'GET',
  paths: { main: ['/api/v1/connections'] },
  handler: ({ useCases, settings }) => {
    const listConnections = useCases.listConnections;
    return async (ctx, caller) => {
      const params = queryParams(ctx, PARAMETERS);
      if (!params.ok) {
        sendError(ctx, params.error);
        return;
      }
      const result = await listConnections.execute({ principal: caller.principal, meter: caller.meter, page: pageQueryOf(params.value) });
      sendResultAs(ctx, caller.meter, result, 200, (page) => {
        setNextLink(ctx, settings.baseUrl, page.nextCursor);
        return page.items;
      });
    };
  },
  openapi: () => ({
    operationId: 'listConnections',
    tags: ['Connections', 'Discovery'],
    summary: "List the caller's connections",
    description:
      "The connections of the credential's account, in ascending `connection_id` order, `limit` at a time: a JSON array, returned directly without the `data` wrapper (like every connection discovery operation), so the next page is only in `Link: rel=\"next\"` (absent on the last page). Never a password, user name or host. Another account's connections are never listed. API keys only (an OAuth access token answers 401 `unsupported_credential`).",
    security: apiKeyOnly,
    parameters: [...pagingParameters],
    responses: {
      '200': jsonResponse('A page of connections (unwrapped).', 'ConnectionList', [
        {
          connection_id: '6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f',
          type: 'sqlserver',
          name: null,
          writable: true,
          egress_source_address: null,
          records_url: 'https://api.svc.example.test/api/v1/connections/6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f/records',
          created_at: null,
        },
        {
          connection_id: '0b7e6c5d-4a3b-4c2d-9e1f-0a9b8c7d6e5f',
          type: 'postgresql',
          name: null,
          writable: false,
          egress_source_address: null,
          records_url: 'https://api.svc.example.test/api/v1/connections/0b7e6c5d-4a3b-4c2d-9e1f-0a9b8c7d6e5f/records',
          created_at: null,
        },
      ], listPageHeaders),
      ...errorResponses({ '400': responseRef('BadRequestList'), '401': responseRef('Unauthorized'), '429': responseRef('TooManyRequests'), '503': responseRef('ServiceUnavailable') }),
    },
  }),
};
