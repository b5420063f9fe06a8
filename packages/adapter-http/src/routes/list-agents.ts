import { apiKeyOnly, errorResponses, jsonResponse, listPageHeaders, pagingParameters, responseRef } from '../openapi/components.js';
import { pageQueryOf, queryParams, setNextLink } from '../paging.js';
import { sendError } from '../pipeline/problem-details.js';
import { sendResultAs } from '../pipeline/rate-limit.js';
import type { AuthenticatedRoute } from '../route.js';

const PARAMETERS = ['limit', 'cursor'] as const;

/**
 * `GET /api/v1/agents`: the caller's agents, a page at a time → 200 `{"data": [Agent],
 * "next_cursor": string | null}`, with `Link: <…>; rel="next"` while more follow. API keys
 * only. Source: docs/CONTRACT.md "Discovery" (agent discovery is not in docs/api-spec.md).
 */
export const listAgentsRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'listAgents',
  credential: 'listAgents',
  method: 'GET',
  paths: { main: ['/api/v1/agents'] },
  handler: ({ useCases, settings }) => {
    const listAgents = useCases.listAgents;
    return async (ctx, caller) => {
      const params = queryParams(ctx, PARAMETERS);
      if (!params.ok) {
        sendError(ctx, params.error);
        return;
      }
      const result = await listAgents.execute({ principal: caller.principal, meter: caller.meter, page: pageQueryOf(params.value) });
      sendResultAs(ctx, caller.meter, result, 200, (page) => ({ data: page.items, next_cursor: setNextLink(ctx, settings.baseUrl, page.nextCursor) }));
    };
  },
  openapi: () => ({
    operationId: 'listAgents',
    tags: ['Agents', 'Discovery'],
    summary: "List the caller's agents",
    description:
      "The agents of the credential's account, in ascending `agent_id` order, `limit` at a time. The next page is at the URL of `Link: rel=\"next\"`, and its cursor is `next_cursor` (`null` and no `Link` on the last page). Another account's agents are never listed. Members without a value are `null`, never absent. API keys only (an OAuth access token answers 401 `unsupported_credential`).",
    security: apiKeyOnly,
    parameters: [...pagingParameters],
    responses: {
      '200': jsonResponse('A page of agents.', 'AgentList', {
        data: [
          {
            agent_id: 'agent_demo',
            name: null,
            description: null,
            created_at: null,
            run_url: 'https://api.svc.example.test/api/v1/agents/agent_demo/run',
            mcp_url: 'https://api.svc.example.test/api/v1/agents/agent_demo/mcp',
          },
        ],
        next_cursor: 'eyJ2IjoxLCJrIjoiYWdlbnRfZGVtbyJ9.c2lnbmF0dXJl',
      }, listPageHeaders),
      ...errorResponses({ '400': responseRef('BadRequestList'), '401': responseRef('Unauthorized'), '429': responseRef('TooManyRequests'), '503': responseRef('ServiceUnavailable') }),
    },
  }),
};
