import { apiKeyOnly, errorResponses, jsonResponse, responseRef } from '../openapi/components.js';
import { sendResult } from '../pipeline/rate-limit.js';
import { pathParam, type AuthenticatedRoute } from '../route.js';

/**
 * `GET /api/v1/agents/{agent_id}`: one of the caller's agents → 200 `{"data": Agent}`;
 * another account's answers 404 like a missing one. API keys only. Shares its path's
 * prefix with `POST …/run`, a path of its own (its `Allow` is unchanged).
 * Source: docs/CONTRACT.md "Discovery".
 */
export const getAgentRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'getAgent',
  credential: 'getAgent',
  method: 'GET',
  paths: { main: ['/api/v1/agents/:agent_id'] },
  handler: ({ useCases }) => {
    const getAgent = useCases.getAgent;
    return async (ctx, caller) => {
      sendResult(ctx, caller.meter, await getAgent.execute({ principal: caller.principal, meter: caller.meter, agentId: pathParam(ctx, 'agent_id') }), 200);
    };
  },
  openapi: () => ({
    operationId: 'getAgent',
    tags: ['Agents', 'Discovery'],
    summary: 'Read an agent',
    description: "Its name, description, creation time (each `null` when unknown), and the URLs of its run start and MCP endpoint. Another account's agent answers 404 exactly like a missing one. API keys only.",
    security: apiKeyOnly,
    parameters: [{ name: 'agent_id', in: 'path', required: true, description: 'Agent id.', schema: { type: 'string', minLength: 1 } }],
    responses: {
      '200': jsonResponse('The agent.', 'AgentResponse', {
        data: {
          agent_id: 'agent_demo',
          name: null,
          description: null,
          created_at: null,
          run_url: 'https://api.svc.example.test/api/v1/agents/agent_demo/run',
          mcp_url: 'https://api.svc.example.test/api/v1/agents/agent_demo/mcp',
        },
      }),
      ...errorResponses({ '401': responseRef('Unauthorized'), '404': responseRef('NotFound'), '429': responseRef('TooManyRequests'), '503': responseRef('ServiceUnavailable') }),
    },
  }),
};
