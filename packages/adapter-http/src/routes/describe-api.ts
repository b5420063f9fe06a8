import { DEPRECATION_HEADERS, RATE_LIMIT_HEADERS } from '@svc/core';
import { errorResponses, header, headerRef, schemaRef, type Json } from '../openapi/components.js';
import { cachedAnswer } from '../pipeline/fixed-answer.js';
import { JSON_CONTENT_TYPE } from '../pipeline/problem-details.js';
import type { FixedRoute } from '../route.js';

/** A real answer of `GET /api/v1` (default settings, base URL `https://api.svc.example.test`). */
const INDEX_EXAMPLE: Json = {
  name: 'Agent Runs and Connected Data API',
  version: 'v1',
  base_url: 'https://api.svc.example.test',
  documentation_url: 'https://api.svc.example.test/docs',
  openapi_url: 'https://api.svc.example.test/openapi.yaml',
  developers_url: 'https://api.svc.example.test/docs/developers',
  authentication: {
    methods: [
      {
        type: 'api_key',
        documentation_url: 'https://api.svc.example.test/docs/authentication',
        headers: ['X-API-Key', 'Authorization'],
        self_serve: false,
        credential_creation: 'available_after_account_access',
        account_access: 'invite_required',
        flow: 'Send an API key (svc-...) in X-API-Key or as Authorization: Bearer. Run operations also accept an OAuth access token (svcpt_...) as Authorization: Bearer, with scope runs:write to start a run (also through an agent\'s MCP endpoint) and runs:read to read or list runs.',
        metadata_url: 'https://api.svc.example.test/.well-known/oauth-protected-resource',
        scopes_supported: ['runs:write', 'runs:read'],
      },
    ],
  },
  onboarding: {
    account_access: 'invite_required',
    access_request_url: 'https://api.svc.example.test/docs/access',
    trial: { available: false, duration_days: 0, invite_required: true },
    public_sandbox_available: false,
  },
  rate_limits: {
    requests: 600,
    window_seconds: 60,
    response_headers: [...RATE_LIMIT_HEADERS],
    scope: 'credential',
    documentation_url: 'https://api.svc.example.test/docs/rate-limits',
  },
  versioning: {
    strategy: 'url_path',
    current_version: 'v1',
    deprecation_headers: [...DEPRECATION_HEADERS],
    minimum_sunset_notice_days: 180,
    documentation_url: 'https://api.svc.example.test/docs/versioning',
  },
  resources: {
    index: 'https://api.svc.example.test/api/v1',
    openapi: 'https://api.svc.example.test/openapi.yaml',
    connection_records: 'https://api.svc.example.test/api/v1/connections/{connection_id}/records',
    egress_connection_records: 'https://egress.svc.example.test/v1/connections/{connection_id}/records',
    agent_runs: 'https://api.svc.example.test/api/v1/agents/{agent_id}/run',
    runs: 'https://api.svc.example.test/api/v1/runs/{run_id}',
    agents: 'https://api.svc.example.test/api/v1/agents',
    agent: 'https://api.svc.example.test/api/v1/agents/{agent_id}',
    connections: 'https://api.svc.example.test/api/v1/connections',
    connection: 'https://api.svc.example.test/api/v1/connections/{connection_id}',
    run_list: 'https://api.svc.example.test/api/v1/runs',
    agent_mcp: 'https://api.svc.example.test/api/v1/agents/{agent_id}/mcp',
  },
  description: 'Starts asynchronous agent runs with uploaded files or a message, and writes single rows to connected SQL Server databases.',
  llms_txt_url: 'https://api.svc.example.test/llms.txt',
  clients: { cli: 'svc (from a clone of the repository: pnpm svc --help; installed elsewhere from its packed tarballs, see cli_documentation_url)', cli_documentation_url: 'https://api.svc.example.test/docs/cli' },
  webhooks_documentation_url: 'https://api.svc.example.test/docs/webhooks',
};

/**
 * `GET /api/v1`: the API index, without a credential and without the `data` envelope;
 * computed once, cacheable (`ETag`, 304). Source: docs/api-spec.md "GET /api/v1"; docs/CONTRACT.md
 * "Index and versioning".
 */
export const describeApiRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'describeApi',
  method: 'GET',
  paths: { main: ['/api/v1'] },
  answer: ({ index, cacheMaxAgeSeconds }, deprecation) => cachedAnswer(JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(index)), cacheMaxAgeSeconds, deprecation),
  openapi: () => ({
    operationId: 'describeApi',
    tags: ['Discovery'],
    summary: 'The API index',
    description: 'No credential needed. Returned directly (no `data` wrapper). Cacheable: `ETag` and `Cache-Control`; `If-None-Match` answers 304.',
    security: [{}],
    responses: {
      '200': {
        description: 'The index.',
        headers: { 'X-Request-Id': headerRef('X-Request-Id'), ETag: header('Entity tag of the index.', 'string'), 'Cache-Control': header('Caching policy.', 'string') },
        content: { 'application/json': { schema: schemaRef('ApiIndex'), examples: { ApiIndex: { summary: 'The index of a server whose base URL is https://api.svc.example.test.', value: INDEX_EXAMPLE } } } },
      },
      '304': { description: 'Not modified (`If-None-Match` matched).' },
      ...errorResponses(),
    },
  }),
};
