import { RUN_EXAMPLE } from '../openapi/examples.js';
import { domainError } from '@svc/core';
import { contentEncodingParameter, egressHeaderParameter, errorResponses, headerRef, problemResponse, responseRef } from '../openapi/components.js';
import { authenticate, credentialLines } from '../pipeline/authenticate.js';
import { jsonBody } from '../pipeline/json-body.js';
import { sendError } from '../pipeline/problem-details.js';
import { meteredRoute } from '../pipeline/rate-limit.js';
import { RETRY_AFTER_SECONDS } from '../pipeline/request-context.js';
import { setRateLimitHeaders } from '../rate-limit-headers.js';
import { pathParam, requestHeader, type PublicRoute } from '../route.js';

/**
 * `{base_url}/.well-known/oauth-protected-resource/api/v1/agents/{agent_id}/mcp`: where
 * the RFC 9728 metadata of an agent's MCP endpoint is (RFC 9728 §3.1: the well-known
 * segment inserted before the resource's path). The id is percent-encoded, so the URL
 * can go in a quoted header parameter whatever the path held.
 */
export function mcpResourceMetadataUrl(baseUrl: string, agentId: string): string {
  return `${baseUrl}/.well-known/oauth-protected-resource/api/v1/agents/${encodeURIComponent(agentId)}/mcp`;
}

const RUN = RUN_EXAMPLE;

/** A `tools/call` answer of `get_run`: the run as text content and as structured content. */
const MCP_TOOL_RESULT = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: JSON.stringify(RUN) }], structuredContent: RUN } };

/**
 * `POST /api/v1/agents/{agent_id}/mcp`: the agent's MCP endpoint (Streamable HTTP,
 * stateless), served by the MCP door the composition root plugs in (`settings.mcp`,
 * adapter-mcp). In the order of every operation (docs/decisions.md "Isolation between
 * accounts"): the credential is identified (401 with `WWW-Authenticate: Bearer …,
 * resource_metadata="…"`), the JSON body read (415, 413, 400 `invalid_json`), the agent
 * found (404, the same for another account's agent), then the exchange is handed over
 * with the raw Node request and response. Every request is charged once by the
 * rate-limit stage, except one `tools/call`, which its use case charges (the door's
 * `isToolCall`); scopes and domain errors belong to each `tools/call`. `GET` and `DELETE` (sessions and server-sent streams of stateful
 * servers) answer 405. Source: docs/CONTRACT.md "MCP"; docs/decisions.md "MCP".
 */
export const mcpEndpointRoute: PublicRoute = {
  kind: 'public',
  operationId: 'callMcp',
  method: 'POST',
  paths: { main: ['/api/v1/agents/:agent_id/mcp'] },
  handler: ({ useCases, settings, limits }) => {
    const { authenticate: authenticator, rateLimits, findAgent } = useCases;
    return async (ctx) => {
      const agentId = pathParam(ctx, 'agent_id');
      const caller = await authenticate(ctx, authenticator, rateLimits, undefined, mcpResourceMetadataUrl(settings.baseUrl, agentId));
      if (caller === undefined) return;
      const door = settings.mcp;
      let body: unknown;
      let found = false;
      // Every authenticated request is charged once (docs/CONTRACT.md "Rate limits"): an
      // unreadable body, a missing agent, a lost catalog and every message but a tool
      // call are charged here by the rate-limit stage, with its headers (429 over the limit).
      await meteredRoute(ctx, caller, async () => {
        body = await jsonBody(ctx, limits.bodyLimitBytes);
        const agent = await findAgent.execute({ principal: caller.principal, agentId });
        if (!agent.ok || door === undefined) {
          sendError(ctx, agent.ok ? domainError('not_found', 'The agent was not found.') : agent.error);
          return;
        }
        found = true;
        // One tool call charges the request itself, through its use case, after this stage.
      }, () => found && door !== undefined && door.isToolCall(body));
      if (!found || door === undefined || caller.meter.decision?.allowed === false) return;
      // The door writes the answer on the raw response: Koa stays out of it.
      ctx.respond = false;
      const res = ctx.res;
      await door.handle({
        req: ctx.req,
        res,
        agentId,
        body,
        principal: caller.principal,
        credentials: credentialLines(ctx.req.rawHeaders),
        route: { egressHeader: requestHeader(ctx, 'x-svc-egress') },
        requestId: caller.requestId,
        meter: caller.meter,
        charged: (meter) => {
          if (meter.decision !== undefined && !res.headersSent) setRateLimitHeaders(res, meter.decision);
        },
        unavailable: () => {
          if (!res.headersSent) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
        },
      });
    };
  },
  openapi: ({ limits, baseUrl }) => ({
    operationId: 'callMcp',
    tags: ['MCP'],
    summary: "Call the agent's MCP endpoint",
    description: [
      'Model Context Protocol, Streamable HTTP transport, stateless: no `Mcp-Session-Id` is issued or needed, and any server instance answers any request. The body is one JSON-RPC 2.0 message; a request is answered with `application/json` (or `text/event-stream` when the client accepts only that), a notification or response with 202. Both protocol eras are served: 2026-07-28 and the 2025 revisions (`initialize`, then `tools/list` and `tools/call`).',
      "Tools: `start_run` (this agent), `get_run`, `list_runs`, `list_connections`, `insert_record`, `update_record`; their input schemas are the REST bodies' JSON Schemas plus the path and query parameters (`connection_id`, `run_id`, `agent_id`, `status`, `limit`, `cursor`), their output schemas the core's schemas of the REST answer's `data` (`RunStartResult`, `Run`, `RowWriteResult`; a list as `{data: [Run | Connection], next_cursor}`), which is their structured output. A domain error is a tool result with `isError: true` whose content (and `structuredContent`) is the problem details REST would answer.",
      `Credentials and scopes as REST, per tool: \`start_run\` accepts an access token with \`runs:write\`, \`get_run\` with \`runs:read\`, the row writes only API keys; a token without the tool's scope gets a tool error \`insufficient_scope\`. \`list_runs\` with \`runs:read\`, \`list_connections\` only API keys. Every request is charged once to the credential's window (${limits.credential.limit} / ${limits.credential.windowSeconds} s) and answers with the rate-limit headers of that charge; a \`start_run\` call also to the agent's (${limits.agent.limit} / ${limits.agent.windowSeconds} s). Over a limit, a tool call's result is \`rate_limited\` (HTTP 200), any other message an HTTP 429. A tool call that meets a lost dependency is a \`service_unavailable\` tool result with \`Retry-After\`. Row writes take the egress route with \`X-Svc-Egress: true\`.`,
      `A missing or invalid credential answers 401 with \`WWW-Authenticate: Bearer realm="svc", resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/api/v1/agents/{agent_id}/mcp"\` (RFC 9728).`,
    ].join('\n\n'),
    security: [{ ApiKey: [] }, { BearerApiKey: [] }, { AccessToken: ['runs:write'] }, { AccessToken: ['runs:read'] }],
    parameters: [
      { name: 'agent_id', in: 'path', required: true, description: 'Agent id.', schema: { type: 'string', minLength: 1 } },
      egressHeaderParameter('`true` routes the row writes of this request (`insert_record`, `update_record`) through the stable egress route.', 'a row-write tool answers `invalid_header` (`isError: true`)'),
      contentEncodingParameter(limits),
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            description: 'One JSON-RPC 2.0 message of MCP (request, notification or response).',
            required: ['jsonrpc'],
            properties: { jsonrpc: { const: '2.0' }, id: { type: ['string', 'integer'] }, method: { type: 'string' }, params: { type: 'object' } },
          },
          examples: {
            tools_call: { summary: 'Call the tool get_run', value: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_run', arguments: { run_id: '570b6c23-d987-478f-8769-d40f8a571099' } } } },
          },
        },
      },
    },
    responses: {
      '200': {
        description: 'The JSON-RPC response: a result (a tool result, `isError: true` for a domain error) or a JSON-RPC error.',
        headers: { 'X-Request-Id': headerRef('X-Request-Id') },
        content: {
          'application/json': {
            schema: { type: 'object', description: 'JSON-RPC 2.0 response.', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' }, id: { type: ['string', 'integer', 'null'] }, result: { type: 'object' }, error: { type: 'object' } } },
            examples: { tool_result: { summary: 'The result of get_run: the run as structured content', value: MCP_TOOL_RESULT } },
          },
          'text/event-stream': {
            schema: { type: 'string', description: 'Server-sent events, each `data` a JSON-RPC message.' },
            examples: { tool_result: { summary: 'The same result as one server-sent event', value: `event: message\ndata: ${JSON.stringify(MCP_TOOL_RESULT)}\n\n` } },
          },
        },
      },
      '202': { description: 'A notification or a response was accepted; no body.', headers: { 'X-Request-Id': headerRef('X-Request-Id') } },
      '406': { description: 'The `Accept` header admits neither `application/json` nor `text/event-stream` (answered by the MCP SDK).' },
      ...errorResponses({
        '400': responseRef('BadRequestMcp'),
        '401': problemResponse(
          'Missing, invalid, expired or unsupported credential; `WWW-Authenticate` names the resource metadata (RFC 9728 §5.1). Never charged: no rate-limit headers.',
          ['missing_credential', 'invalid_credential', 'expired_credential', 'unsupported_credential'],
          {
            headers: {
              'X-Request-Id': headerRef('X-Request-Id'),
              'WWW-Authenticate': { description: '`Bearer realm="svc", resource_metadata="<url>"`, with `error="invalid_token"` for a credential that was sent.', schema: { type: 'string' } },
            },
          },
        ),
        '404': responseRef('NotFound'),
        '413': responseRef('PayloadTooLarge'),
        '415': responseRef('UnsupportedMediaType'),
        '429': responseRef('TooManyRequests'),
        '503': responseRef('ServiceUnavailable'),
      }),
    },
  }),
};

/**
 * `GET /.well-known/oauth-protected-resource/api/v1/agents/{agent_id}/mcp`: the OAuth 2.0
 * protected resource metadata (RFC 9728 §3) of an agent's MCP endpoint, named in its 401
 * challenges. Public and the same for every id (it tells nothing about which agents
 * exist); cacheable.
 */
export const mcpResourceMetadataRoute: PublicRoute = {
  kind: 'public',
  operationId: 'mcpProtectedResourceMetadata',
  method: 'GET',
  paths: { main: ['/.well-known/oauth-protected-resource/api/v1/agents/:agent_id/mcp'] },
  handler: ({ settings, index, cacheMaxAgeSeconds }) => {
    const scopes = index.authentication.methods[0]?.scopes_supported ?? [];
    return (ctx) => {
      const agentId = pathParam(ctx, 'agent_id');
      ctx.set('Cache-Control', `public, max-age=${cacheMaxAgeSeconds}`);
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify({
        // RFC 9728 §3.3: the resource identifier is the URL the metadata was derived from.
        resource: `${settings.baseUrl}/api/v1/agents/${encodeURIComponent(agentId)}/mcp`,
        scopes_supported: scopes,
        bearer_methods_supported: ['header'],
        resource_name: `${index.name} MCP endpoint of agent ${agentId}`,
        resource_documentation: index.documentation_url,
      });
    };
  },
  openapi: () => ({
    operationId: 'mcpProtectedResourceMetadata',
    tags: ['MCP'],
    summary: "OAuth protected resource metadata of an agent's MCP endpoint (RFC 9728)",
    description: 'Public, the same for any `agent_id`: `resource` (the endpoint URL), `scopes_supported`, `bearer_methods_supported` (`header`), `resource_name`, `resource_documentation`. Named by `resource_metadata` in the endpoint\'s 401 challenges.',
    security: [],
    parameters: [{ name: 'agent_id', in: 'path', required: true, description: 'Agent id.', schema: { type: 'string', minLength: 1 } }],
    responses: {
      '200': {
        description: 'The metadata document.',
        headers: { 'X-Request-Id': headerRef('X-Request-Id'), 'Cache-Control': { description: '`public, max-age=<seconds>`.', schema: { type: 'string' } } },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['resource', 'scopes_supported', 'bearer_methods_supported'],
              properties: {
                resource: { type: 'string', format: 'uri' },
                scopes_supported: { type: 'array', items: { type: 'string' } },
                bearer_methods_supported: { type: 'array', items: { type: 'string' } },
                resource_name: { type: 'string' },
                resource_documentation: { type: 'string', format: 'uri' },
              },
            },
            examples: {
              metadata: {
                summary: 'The metadata of agent_demo',
                value: {
                  resource: 'https://api.svc.example.test/api/v1/agents/agent_demo/mcp',
                  scopes_supported: ['runs:write', 'runs:read'],
                  bearer_methods_supported: ['header'],
                  resource_name: 'Agent Runs and Connected Data API MCP endpoint of agent agent_demo',
                  resource_documentation: 'https://api.svc.example.test/docs',
                },
              },
            },
          },
        },
      },
      ...errorResponses(),
    },
  }),
};
