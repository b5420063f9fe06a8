import {
  DEPRECATION_HEADERS,
  filesRunBodySchema,
  fileReferenceSchema,
  insertRecordBodySchema,
  messageRunBodySchema,
  RATE_LIMIT_HEADERS,
  RUN_STATUSES,
  startRunBodySchema,
  SUPPORTED_SCOPES,
  updateRecordBodySchema,
  MAX_FILES_PER_RUN,
  MAX_BACKGROUND_FILES_PER_RUN,
} from '@svc/core';
import { stringify } from 'yaml';
import { STATUS_BY_CODE } from './problem.js';

/** What the OpenAPI document needs to know. */
export interface OpenApiSettings {
  /** `{base_url}`, absolute, no trailing slash: `servers[0].url`. */
  readonly baseUrl: string;
  /** `{egress_url}`: the server of the direct stable-egress operations. */
  readonly egressUrl: string;
  /** The per-credential limit, stated in the descriptions. */
  readonly credentialLimit: { readonly limit: number; readonly windowSeconds: number };
  /** Operation ids marked deprecated (`deprecated: true` in the document). */
  readonly deprecatedOperations?: readonly string[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Turns a core JSON Schema into an OpenAPI component: drops `$id` (components are named
 * by their key) and points bare `$ref`s at `#/components/schemas/`.
 */
function component(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(component);
  if (schema === null || typeof schema !== 'object') return schema as Json;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) out[key] = `#/components/schemas/${value}`;
    else out[key] = component(value);
  }
  return out;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const dataOf = (name: string): Json => ({
  type: 'object',
  required: ['data'],
  properties: { data: ref(name) },
});
const str = (description: string, extra: { [key: string]: Json } = {}): Json => ({ type: 'string', description, ...extra });

function responseSchemas(): { [key: string]: Json } {
  const urlMap: Json = { type: 'object', additionalProperties: { type: 'string' } };
  return {
    Problem: {
      type: 'object',
      description: 'RFC 9457 problem details; never wrapped in `data`. Further members may be added.',
      required: ['type', 'title', 'status', 'detail', 'code'],
      properties: {
        type: str('`about:blank`: the status and `code` say what happened.'),
        title: str('The HTTP reason phrase of `status`.'),
        status: { type: 'integer', description: 'HTTP status code.' },
        detail: str('Human-readable failure detail; names the offending field where there is one.'),
        code: { type: 'string', enum: Object.keys(STATUS_BY_CODE), description: 'Machine-readable, snake_case.' },
        errors: {
          type: 'array',
          description: 'Validation failures (code `validation_failed`).',
          items: {
            type: 'object',
            required: ['path', 'message'],
            properties: { path: str('JSON Pointer (RFC 6901) into the request body.'), message: str('The rule that failed.') },
          },
        },
        request_id: str('The `X-Request-Id` of the request, to quote in support requests.'),
      },
    },
    RowWriteResult: {
      type: 'object',
      required: ['rows_affected'],
      properties: { rows_affected: { type: 'integer', minimum: 0, description: 'Rows the statement affected: 1 for an insert, 0 or 1 for an update.' } },
    },
    RowWriteResponse: dataOf('RowWriteResult'),
    RunStartResult: {
      type: 'object',
      required: ['run_id', 'workflow_run_id', 'status', 'status_url', 'message'],
      properties: {
        run_id: str('Identifier of the run (UUID).'),
        workflow_run_id: str('Identifier of the workflow run (UUID).'),
        status: { type: 'string', const: 'queued' },
        status_url: str('`{base_url}/api/v1/runs/{run_id}`, also sent as `Location`.', { format: 'uri' }),
        message: str('Human-readable text.'),
      },
    },
    RunStartResponse: dataOf('RunStartResult'),
    Run: {
      type: 'object',
      required: ['run_id', 'workflow_run_id', 'agent_id', 'status', 'created_at', 'updated_at', 'status_url', 'attempts'],
      properties: {
        run_id: str('Identifier of the run.'),
        workflow_run_id: str('Identifier of the workflow run.'),
        agent_id: str('Agent the run belongs to.'),
        status: { type: 'string', enum: [...RUN_STATUSES], description: 'queued → running → succeeded | failed; cancelled.' },
        created_at: str('RFC 3339, UTC.', { format: 'date-time' }),
        updated_at: str('RFC 3339, UTC: last status change.', { format: 'date-time' }),
        status_url: str('This resource.', { format: 'uri' }),
        attempts: { type: 'integer', minimum: 0, description: 'Processing attempts so far.' },
        failure_reason: str('Why a `failed` run failed.'),
      },
    },
    RunResponse: dataOf('Run'),
    ApiIndex: {
      type: 'object',
      description: 'The API index: returned directly, without the `data` wrapper.',
      required: [
        'name', 'version', 'base_url', 'documentation_url', 'openapi_url', 'developers_url', 'authentication', 'onboarding',
        'rate_limits', 'versioning', 'resources', 'description', 'llms_txt_url', 'clients', 'webhooks_documentation_url',
      ],
      properties: {
        name: { type: 'string' },
        version: { type: 'string', const: 'v1' },
        base_url: { type: 'string', format: 'uri' },
        documentation_url: { type: 'string' },
        openapi_url: { type: 'string' },
        developers_url: { type: 'string' },
        authentication: {
          type: 'object',
          required: ['methods'],
          properties: {
            methods: {
              type: 'array',
              items: {
                type: 'object',
                required: ['type', 'documentation_url', 'headers', 'self_serve', 'credential_creation', 'account_access', 'flow', 'metadata_url', 'scopes_supported'],
                properties: {
                  type: { type: 'string', const: 'api_key' },
                  documentation_url: { type: 'string' },
                  headers: { type: 'array', items: { type: 'string' } },
                  self_serve: { type: 'boolean' },
                  credential_creation: { type: 'string', const: 'available_after_account_access' },
                  account_access: { type: 'string', const: 'invite_required' },
                  flow: { type: 'string' },
                  metadata_url: { type: 'string' },
                  scopes_supported: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
        },
        onboarding: {
          type: 'object',
          required: ['account_access', 'access_request_url', 'trial', 'public_sandbox_available'],
          properties: {
            account_access: { type: 'string', const: 'invite_required' },
            access_request_url: { type: 'string' },
            trial: {
              type: 'object',
              required: ['available', 'duration_days', 'invite_required'],
              properties: { available: { type: 'boolean' }, duration_days: { type: 'integer' }, invite_required: { type: 'boolean' } },
            },
            public_sandbox_available: { type: 'boolean' },
          },
        },
        rate_limits: {
          type: 'object',
          required: ['requests', 'window_seconds', 'response_headers', 'scope', 'documentation_url'],
          properties: {
            requests: { type: 'integer' },
            window_seconds: { type: 'integer' },
            response_headers: { type: 'array', items: { type: 'string' } },
            scope: { type: 'string' },
            documentation_url: { type: 'string' },
          },
        },
        versioning: {
          type: 'object',
          required: ['strategy', 'current_version', 'deprecation_headers', 'minimum_sunset_notice_days', 'documentation_url'],
          properties: {
            strategy: { type: 'string', const: 'url_path' },
            current_version: { type: 'string' },
            deprecation_headers: { type: 'array', items: { type: 'string' } },
            minimum_sunset_notice_days: { type: 'integer' },
            documentation_url: { type: 'string' },
          },
        },
        resources: { ...(urlMap as object), description: 'Absolute URL per top-level resource, path templates included.' },
        description: { type: 'string' },
        llms_txt_url: { type: 'string' },
        clients: {
          type: 'object',
          required: ['cli', 'cli_documentation_url'],
          properties: { cli: { type: 'string' }, cli_documentation_url: { type: 'string' } },
        },
        webhooks_documentation_url: { type: 'string' },
      },
    },
  };
}

const header = (description: string, type: 'integer' | 'string' = 'integer'): Json => ({ description, schema: { type } });

function headerComponents(): { [key: string]: Json } {
  return {
    'RateLimit-Limit': header('Requests allowed in the current window (of the tightest applicable limit).'),
    'RateLimit-Remaining': header('Requests remaining in the current window.'),
    'RateLimit-Reset': header('Seconds until the window resets (a delta).'),
    'Retry-After': header('Seconds to wait before retrying.'),
    'x-ratelimit-limit': header('Legacy alias of RateLimit-Limit.'),
    'x-ratelimit-remaining': header('Legacy alias of RateLimit-Remaining.'),
    'x-ratelimit-reset': header('Unix timestamp in seconds at which the window resets.', 'string'),
    'X-Request-Id': header('Request id: a valid incoming one is echoed, else one is made.', 'string'),
    Location: header('The run status URL.', 'string'),
    'Accept-Encoding': header('On a 415 for a content coding: the codings a request body may use (RFC 9110 §15.5.16).', 'string'),
    Deprecation: header('RFC 9745: present when the operation is deprecated (`@<unix seconds>`).', 'string'),
    Sunset: header('RFC 8594: when a deprecated operation stops working (HTTP-date).', 'string'),
    Link: header('`<url>; rel="deprecation"` on deprecated operations.', 'string'),
  };
}

const hdr = (name: string): Json => ({ $ref: `#/components/headers/${name}` });
const RL = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
function rateLimited(withRetry: boolean): { [key: string]: Json } {
  const out: { [key: string]: Json } = { 'X-Request-Id': hdr('X-Request-Id') };
  for (const h of RL) out[h] = hdr(h);
  if (withRetry) out['Retry-After'] = hdr('Retry-After');
  return out;
}

function problem(description: string, headers: { [key: string]: Json } = { 'X-Request-Id': hdr('X-Request-Id') }): Json {
  return { description, headers, content: { 'application/problem+json': { schema: ref('Problem') } } };
}

function responseComponents(): { [key: string]: Json } {
  return {
    BadRequest: problem(
      'Invalid request: `validation_failed` (with `errors`: also more columns than parameters allow, or two column names equal case-insensitively); `invalid_json` (not JSON, not UTF-8, a member name given twice — the detail names its JSON Pointer —, or a coded body that is corrupt or truncated); `invalid_header`; `invalid_value` with `errors` naming each number in `values` or `key_value` that cannot be written exactly (an integer beyond bigint and 38 digits, more than 38 digits, or more than 38 after the point); or a row-write refusal (`writes_not_supported`, `unknown_entity`, `unknown_column`, `constraint_violation`, `invalid_value`).',
      rateLimited(false),
    ),
    Unauthorized: problem('Missing, invalid, expired or unsupported credential; with `WWW-Authenticate`.', {
      'X-Request-Id': hdr('X-Request-Id'),
      'WWW-Authenticate': header('`Bearer realm="svc"`, with `error="invalid_token"` for a bad credential (RFC 6750).', 'string'),
    }),
    Forbidden: problem('`insufficient_scope`: a valid OAuth access token without the scope (RFC 6750 §3.1).', {
      'X-Request-Id': hdr('X-Request-Id'),
      'WWW-Authenticate': header('`Bearer realm="svc", error="insufficient_scope", scope="..."`.', 'string'),
    }),
    NotFound: problem('`not_found`: unknown, or not visible to the caller\'s account (never tells which).', rateLimited(false)),
    Conflict: problem('`ambiguous_key`: the key selects more than one row; nothing was changed.', rateLimited(false)),
    PayloadTooLarge: problem('`payload_too_large`: the body is over 1 MiB, counted after decoding its `Content-Encoding` (a compressed body that inflates past 1 MiB is refused without being inflated further).', rateLimited(false)),
    UnsupportedMediaType: problem(
      '`unsupported_media_type`: the body must be `application/json` in UTF-8, sent as is or with `Content-Encoding` `gzip`, `deflate` or `br`; any other coding, or two stacked codings, is refused naming it. Every 415 carries `Accept-Encoding: gzip, deflate, br`.',
      { ...rateLimited(false), 'Accept-Encoding': hdr('Accept-Encoding') },
    ),
    TooManyRequests: problem('`rate_limited`: over the credential limit or, on run creation, the per-agent limit (30 / 60 s).', rateLimited(true)),
    BadGateway: problem('`connection_unavailable`: the customer\'s database cannot be reached or refused the login.', rateLimited(false)),
    ServiceUnavailable: problem(
      '`service_unavailable`: a dependency of this service (Redis: the run queue and the run store; rate limits then fall back to in-memory limits) is lost, failing or paused; answered within the server\'s `dependency_timeout_ms` (default 2 s). Nothing was done: on run start the run was not created (its record and job are written in one transaction, withdrawn when that transaction got no answer), with one exception, a Redis that applied the run and died before answering: that run exists and runs once. Retry after `Retry-After` seconds.',
      { 'X-Request-Id': hdr('X-Request-Id'), 'Retry-After': hdr('Retry-After') },
    ),
    GatewayTimeout: problem(
      '`connection_timeout`: the customer\'s database did not answer within the server\'s `request_timeout_ms`; answered then, whether or not the database acknowledged the cancel. The write may or may not have applied; it is never reported as a success and never resent.',
      rateLimited(false),
    ),
    RequestTimeout: problem('`request_timeout`: the request was not received completely in time; the connection is closed.'),
    ExpectationFailed: problem('`expectation_failed`: an `Expect` other than `100-continue`; the connection is closed.'),
    RequestHeaderFieldsTooLarge: problem('`request_header_fields_too_large`: the header section is over 16 KiB; the connection is closed.'),
  };
}

const responseRef = (name: string): Json => ({ $ref: `#/components/responses/${name}` });

/** Builds the OpenAPI 3.1 document of the API from the core's JSON Schemas. */
export function buildOpenApiDocument(settings: OpenApiSettings): Record<string, unknown> {
  const deprecated = new Set(settings.deprecatedOperations ?? []);
  const { limit, windowSeconds } = settings.credentialLimit;
  const connectionId: Json = {
    name: 'connection_id', in: 'path', required: true, description: 'Connection UUID.', schema: { type: 'string', format: 'uuid' },
  };
  const egressHeader: Json = {
    name: 'X-Svc-Egress',
    in: 'header',
    required: false,
    description: '`true` routes the database traffic through the stable egress IP address that can be allowlisted; `false` or absent: the default route. Any other value: 400 `invalid_header`. Case-insensitive.',
    schema: { type: 'string', enum: ['true', 'false', 'TRUE', 'FALSE', 'True', 'False'] },
  };
  const contentEncoding: Json = {
    name: 'Content-Encoding',
    in: 'header',
    required: false,
    description:
      'Coding of the request body (RFC 9110 §8.4): `gzip` (or `x-gzip`), `deflate` (zlib format) or `br`, any case; `identity` or absent: none. The 1 MiB limit applies to the decoded body (413). Any other coding, or more than one: 415.',
    schema: { type: 'string', examples: ['gzip', 'br'] },
  };
  const authed = { 'X-Request-Id': hdr('X-Request-Id'), ...Object.fromEntries(RL.map((h) => [h, hdr(h)])) } as { [key: string]: Json };
  const dep = (id: string): { [key: string]: Json } => (deprecated.has(id) ? { deprecated: true } : {});
  const writeErrors = (extra: { [key: string]: Json } = {}): { [key: string]: Json } => ({
    '400': responseRef('BadRequest'),
    '401': responseRef('Unauthorized'),
    '404': responseRef('NotFound'),
    ...extra,
    '413': responseRef('PayloadTooLarge'),
    '415': responseRef('UnsupportedMediaType'),
    '429': responseRef('TooManyRequests'),
    '502': responseRef('BadGateway'),
    '503': responseRef('ServiceUnavailable'),
    '504': responseRef('GatewayTimeout'),
  });
  const apiKeyOnly: Json = [{ ApiKey: [] }, { BearerApiKey: [] }];
  const insert = (operationId: string, egress: boolean): Json => ({
    operationId,
    tags: ['Connections'],
    summary: 'Insert a single row',
    description:
      'Inserts one new row into `entity`. Only for `sqlserver` connections; other types answer 400 `writes_not_supported` before any database is touched. Identifiers are quoted, values are bound as parameters.' +
      (egress ? ' This address always uses the stable egress route.' : ''),
    // The egress address serves the same operation: deprecated with it (same headers).
    ...dep('insertRecord'),
    security: apiKeyOnly,
    parameters: egress ? [connectionId, contentEncoding] : [connectionId, egressHeader, contentEncoding],
    requestBody: { required: true, content: { 'application/json': { schema: ref('InsertRecordRequest') } } },
    responses: {
      '201': { description: 'Inserted.', headers: authed, content: { 'application/json': { schema: ref('RowWriteResponse') } } },
      ...writeErrors(),
    },
  });
  const update = (operationId: string, egress: boolean): Json => ({
    operationId,
    tags: ['Connections'],
    summary: 'Update the single row selected by a key',
    description:
      'Updates the row where `key_column = key_value`, in one transaction: 0 rows → `rows_affected: 0`; more than one → 409 `ambiguous_key` and nothing is changed. Only for `sqlserver` connections.' +
      (egress ? ' This address always uses the stable egress route.' : ''),
    ...dep('updateRecord'),
    security: apiKeyOnly,
    parameters: egress ? [connectionId, contentEncoding] : [connectionId, egressHeader, contentEncoding],
    requestBody: { required: true, content: { 'application/json': { schema: ref('UpdateRecordRequest') } } },
    responses: {
      '200': { description: 'Updated (0 or 1 row).', headers: authed, content: { 'application/json': { schema: ref('RowWriteResponse') } } },
      ...writeErrors({ '409': responseRef('Conflict') }),
    },
  });

  const schemas: { [key: string]: Json } = {
    InsertRecordRequest: component(insertRecordBodySchema),
    UpdateRecordRequest: component(updateRecordBodySchema),
    FileReference: component(fileReferenceSchema),
    RunWithFiles: component(filesRunBodySchema),
    RunWithMessage: component(messageRunBodySchema),
    StartRunRequest: component(startRunBodySchema),
    ...responseSchemas(),
  };

  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Runs and Connected Data API',
      version: '1.0.0',
      summary: 'Start agent runs and write single rows to connected SQL Server databases.',
      description: [
        'Successful bodies are wrapped in `{"data": ...}`, except `GET /api/v1`. Errors are RFC 9457 problem details (`application/problem+json`) with `status`, `detail`, `title` and a snake_case `code`, never wrapped.',
        `Every authenticated response carries the rate-limit headers of the tightest applicable limit: ${limit} requests / ${windowSeconds} s per credential, plus 30 / 60 s per agent on run creation. A request refused with 429 is not charged to any window.`,
        'Every response carries `X-Request-Id`. Unknown request body members are refused (400). Bodies are JSON, at most 1 MiB.',
        'A request the HTTP parser refuses, on any path, gets a problem details answer with `X-Request-Id` and `Connection: close`: 400 `bad_request` (not HTTP/1.1) or `invalid_header` (a malformed header, `Content-Length` or `Transfer-Encoding`), 408 `request_timeout`, 413 `payload_too_large` (chunk extensions), 417 `expectation_failed` (an `Expect` other than `100-continue`), 431 `request_header_fields_too_large`; `CONNECT` answers 405 `method_not_allowed`. Two credentials that disagree (two `Authorization` lines, two `X-API-Key` lines, or `X-API-Key` and another bearer) answer 401 `invalid_credential`; the same credential repeated is accepted.',
        `Deprecated operations answer with ${DEPRECATION_HEADERS.join(', ')} headers; the minimum sunset notice is 180 days.`,
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: settings.baseUrl, description: 'Base address' }],
    tags: [
      { name: 'Discovery' },
      { name: 'Connections', description: 'Row writes on connections that allow them (SQL Server).' },
      { name: 'Agents' },
      { name: 'Runs' },
    ],
    paths: {
      '/api/v1': {
        get: {
          operationId: 'describeApi',
          tags: ['Discovery'],
          summary: 'The API index',
          description: 'No credential needed. Returned directly (no `data` wrapper). Cacheable: `ETag` and `Cache-Control`; `If-None-Match` answers 304.',
          ...dep('describeApi'),
          security: [{}],
          responses: {
            '200': {
              description: 'The index.',
              headers: { 'X-Request-Id': hdr('X-Request-Id'), ETag: header('Entity tag of the index.', 'string'), 'Cache-Control': header('Caching policy.', 'string') },
              content: { 'application/json': { schema: ref('ApiIndex') } },
            },
            '304': { description: 'Not modified (`If-None-Match` matched).' },
          },
        },
      },
      '/api/v1/connections/{connection_id}/records': {
        post: insert('insertRecord', false),
        patch: update('updateRecord', false),
      },
      '/api/v1/agents/{agent_id}/run': {
        post: {
          operationId: 'startRun',
          tags: ['Agents', 'Runs'],
          summary: 'Start an asynchronous run',
          description: `Starts a run with uploaded files (Option 1: 1..${MAX_FILES_PER_RUN} files, optional message, \`process_together\`, \`notification_email\`, up to ${MAX_BACKGROUND_FILES_PER_RUN} background files) or a message only (Option 2). The option is chosen by the presence of \`files\` or another Option 1 member. Limited to 30 requests per 60 seconds per agent, in addition to the credential limit. Accepts OAuth access tokens with scope \`runs:write\`.`,
          ...dep('startRun'),
          security: [{ ApiKey: [] }, { BearerApiKey: [] }, { AccessToken: ['runs:write'] }],
          parameters: [{ name: 'agent_id', in: 'path', required: true, description: 'Agent id.', schema: { type: 'string', minLength: 1 } }, contentEncoding],
          requestBody: { required: true, content: { 'application/json': { schema: ref('StartRunRequest') } } },
          responses: {
            '202': {
              description: 'Accepted: the run is queued; follow `Location` (= `status_url`).',
              headers: { ...authed, Location: hdr('Location') },
              content: { 'application/json': { schema: ref('RunStartResponse') } },
            },
            '400': responseRef('BadRequest'),
            '401': responseRef('Unauthorized'),
            '403': responseRef('Forbidden'),
            '404': responseRef('NotFound'),
            '413': responseRef('PayloadTooLarge'),
            '415': responseRef('UnsupportedMediaType'),
            '429': responseRef('TooManyRequests'),
            '503': responseRef('ServiceUnavailable'),
          },
        },
      },
      '/api/v1/runs/{run_id}': {
        get: {
          operationId: 'getRun',
          tags: ['Runs'],
          summary: 'Read a run (its status_url)',
          description: 'Statuses: queued, running, succeeded, failed, cancelled. Accepts OAuth access tokens with scope `runs:read`.',
          ...dep('getRun'),
          security: [{ ApiKey: [] }, { BearerApiKey: [] }, { AccessToken: ['runs:read'] }],
          parameters: [{ name: 'run_id', in: 'path', required: true, description: 'Run id.', schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The run.', headers: authed, content: { 'application/json': { schema: ref('RunResponse') } } },
            '401': responseRef('Unauthorized'),
            '403': responseRef('Forbidden'),
            '404': responseRef('NotFound'),
            '429': responseRef('TooManyRequests'),
            '503': responseRef('ServiceUnavailable'),
          },
        },
      },
      '/v1/connections/{connection_id}/records': {
        servers: [{ url: settings.egressUrl, description: 'Direct stable-egress address' }],
        description: 'The row writes at the direct stable-egress address: same credentials, bodies and answers, always on the egress route. Nothing else is served there (404).',
        post: insert('insertRecordViaEgress', true),
        patch: update('updateRecordViaEgress', true),
      },
    },
    components: {
      schemas,
      responses: responseComponents(),
      headers: headerComponents(),
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key `svc-...`.' },
        BearerApiKey: { type: 'http', scheme: 'bearer', description: 'API key `svc-...` as a bearer token.' },
        AccessToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svcpt_',
          description: `OAuth access token \`svcpt_...\`; accepted on run operations only. Scopes: ${SUPPORTED_SCOPES.join(', ')}.`,
        },
      },
    },
    'x-rate-limit-headers': [...RATE_LIMIT_HEADERS],
  };
}

/** The document as YAML text (the served form). */
export function openApiYaml(settings: OpenApiSettings): string {
  return stringify(buildOpenApiDocument(settings), { aliasDuplicateObjects: false, lineWidth: 0 });
}
