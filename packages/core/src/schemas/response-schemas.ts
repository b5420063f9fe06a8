/**
 * JSON Schemas (2020-12, as used by OpenAPI 3.1) of the bodies the API answers with,
 * next to the request schemas, so that the OpenAPI document states what the use cases
 * return from the same place that states what they accept. Each has an `$id`; bare
 * `$ref`s name another schema's `$id`. Source: docs/api-spec.md (the operations' responses,
 * "API index object", "Errors"); docs/CONTRACT.md "Envelope and errors".
 */
import { MAX_PAGE_LIMIT } from '../domain/page.js';
import { MAX_PROGRESS_MESSAGE_LENGTH, MAX_RUN_OUTPUT_BYTES, RUN_STATUSES } from '../domain/run.js';

const str = (description: string, extra: Readonly<Record<string, string>> = {}) => ({ type: 'string', description, ...extra }) as const;

/** `{"data": <name>}`: the envelope of every successful body except the index. */
const dataOf = <I extends string, R extends string>($id: I, of: R) =>
  ({ $id, type: 'object', required: ['data'], properties: { data: { $ref: of } } }) as const;

/** The result of a row write (`RowWriteResult` of the record-write use cases). */
export const rowWriteResultSchema = {
  $id: 'RowWriteResult',
  type: 'object',
  required: ['rows_affected'],
  properties: { rows_affected: { type: 'integer', minimum: 0, description: 'Rows the statement affected: 1 for an insert, 0 or 1 for an update.' } },
} as const;

/** `{"data": RowWriteResult}`: the 201 of an insert and the 200 of an update. */
export const rowWriteResponseSchema = dataOf('RowWriteResponse', 'RowWriteResult');

/** The result of a run start (`RunStartResult` of `StartRun`). */
export const runStartResultSchema = {
  $id: 'RunStartResult',
  type: 'object',
  required: ['run_id', 'workflow_run_id', 'status', 'status_url', 'message'],
  properties: {
    run_id: str('Identifier of the run (UUID).'),
    workflow_run_id: str('Identifier of the workflow run (UUID).'),
    status: { type: 'string', const: 'queued' },
    status_url: str('`{base_url}/api/v1/runs/{run_id}`, also sent as `Location`.', { format: 'uri' }),
    message: str('Human-readable text.'),
  },
} as const;

/** `{"data": RunStartResult}`: the 202 of a run start. */
export const runStartResponseSchema = dataOf('RunStartResponse', 'RunStartResult');

/** A run as `GetRun` shows it (`RunView`). */
export const runViewSchema = {
  $id: 'Run',
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
    progress: {
      type: 'object',
      description: 'The last progress the agent runtime reported while the run was `running`; kept once the run is final. Absent when none was reported.',
      required: ['updated_at'],
      additionalProperties: false,
      properties: {
        percent: { type: 'number', minimum: 0, maximum: 100, description: 'Done so far, in percent; absent when the runtime cannot tell.' },
        message: { type: 'string', maxLength: MAX_PROGRESS_MESSAGE_LENGTH, description: 'The step the runtime is at.' },
        updated_at: str('RFC 3339, UTC: when it was reported.', { format: 'date-time' }),
      },
    },
    output: { description: `What the agent runtime returned with a \`succeeded\` run: any JSON value, at most ${MAX_RUN_OUTPUT_BYTES} bytes as JSON. Absent when it returned none.` },
    cancel_requested_at: str('RFC 3339, UTC: when a cancel was first asked for (`POST …/cancel`). A `running` run that has it is stopping; it ends `cancelled`. Absent when no cancel was asked for.', { format: 'date-time' }),
  },
} as const;

/** `{"data": Run}`: the 200 of a run read. */
export const runResponseSchema = dataOf('RunResponse', 'Run');

/** `string`, or `null` when unknown (discovery's members are always present). */
const nullableStr = (description: string, extra: Readonly<Record<string, string>> = {}) => ({ type: ['string', 'null'], description, ...extra }) as const;

/** An agent as discovery shows it (`AgentView` of `ListAgents` and `GetAgent`). Source: docs/CONTRACT.md "Discovery". */
export const agentViewSchema = {
  $id: 'Agent',
  type: 'object',
  description: 'Every member is always present; `null` when unknown.',
  required: ['agent_id', 'name', 'description', 'created_at', 'run_url', 'mcp_url'],
  properties: {
    agent_id: str('Identifier of the agent, as in its URLs.'),
    name: nullableStr('Human-readable name; `null` when it has none.'),
    description: nullableStr('What the agent does; `null` when it has none.'),
    created_at: nullableStr('RFC 3339, UTC: when it was added; `null` when the catalog does not record it (a configuration file).', { format: 'date-time' }),
    run_url: str('`{base_url}/api/v1/agents/{agent_id}/run`: start a run here (`POST`).', { format: 'uri' }),
    mcp_url: str('`{base_url}/api/v1/agents/{agent_id}/mcp`: the agent\'s MCP endpoint (Streamable HTTP).', { format: 'uri' }),
  },
} as const;

/** `{"data": Agent}`: the 200 of an agent read. */
export const agentResponseSchema = dataOf('AgentResponse', 'Agent');

/** `{"data": [Agent], "next_cursor": string | null}`: the 200 of the agent list. */
export const agentListResponseSchema = {
  $id: 'AgentList',
  type: 'object',
  required: ['data', 'next_cursor'],
  properties: {
    data: { type: 'array', items: { $ref: 'Agent' }, description: 'The caller\'s agents, in ascending `agent_id` order.' },
    next_cursor: nullableStr('Opaque cursor of the next page (also in `Link: rel="next"`); `null` on the last page.'),
  },
} as const;

/** A connection as discovery shows it (`ConnectionView`): never a password, user name or host. Source: docs/CONTRACT.md "Discovery". */
export const connectionViewSchema = {
  $id: 'Connection',
  type: 'object',
  description: 'Every member is always present; `null` when unknown. Never a password, user name or host.',
  required: ['connection_id', 'type', 'name', 'writable', 'egress_source_address', 'records_url', 'created_at'],
  properties: {
    connection_id: str('Identifier of the connection (UUID, lower case).', { format: 'uuid' }),
    type: str('Connection type, e.g. `sqlserver` or `postgresql`.'),
    name: nullableStr('Human-readable name; `null` when it has none.'),
    writable: { type: 'boolean', description: 'True when row inserts and updates are allowed: only for type `sqlserver`.' },
    egress_source_address: nullableStr(
      'The IP address the service\'s database traffic leaves from on the egress route (`X-Svc-Egress: true`, or the direct stable-egress address): allowlist it in your firewall. The same for every connection; `null` when the server has none configured.',
    ),
    records_url: str('`{base_url}/api/v1/connections/{connection_id}/records`: insert (`POST`) and update (`PATCH`) rows.', { format: 'uri' }),
    created_at: nullableStr('RFC 3339, UTC: when it was added; `null` when the catalog does not record it (a configuration file).', { format: 'date-time' }),
  },
} as const;

/** `{"data": Connection}`: the 200 of a connection read. */
export const connectionResponseSchema = dataOf('ConnectionResponse', 'Connection');

/** `[Connection]`, unwrapped (docs/api-spec.md convention 3): the 200 of the connection list; the next page is only in `Link`. */
export const connectionListResponseSchema = {
  $id: 'ConnectionList',
  type: 'array',
  description: 'The caller\'s connections, in ascending `connection_id` order, returned directly without the `data` wrapper; the next page is in `Link: rel="next"` only.',
  items: { $ref: 'Connection' },
} as const;

/**
 * `{"data": [Run], "next_cursor": string | null}`: the 200 of the run list (`ListRuns`).
 * Source: docs/CONTRACT.md "Discovery".
 */
export const runListSchema = {
  $id: 'RunList',
  type: 'object',
  required: ['data', 'next_cursor'],
  properties: {
    data: { type: 'array', maxItems: MAX_PAGE_LIMIT, items: { $ref: 'Run' }, description: 'At most `limit` runs, newest first (`created_at` descending, then `run_id`); each as `GET {status_url}` answers it.' },
    next_cursor: {
      type: ['string', 'null'],
      description: 'The `cursor` of the next page (also in `Link: <...>; rel="next"`), or null on the last page. Opaque. A page may hold fewer than `limit` runs, even none, while this is not null: follow it until it is null.',
    },
  },
} as const;

const stringArray = { type: 'array', items: { type: 'string' } } as const;

/** The API index (`ApiIndex` of `DescribeApi`), returned without the `data` envelope. */
export const apiIndexSchema = {
  $id: 'ApiIndex',
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
              headers: stringArray,
              self_serve: { type: 'boolean' },
              credential_creation: { type: 'string', const: 'available_after_account_access' },
              account_access: { type: 'string', const: 'invite_required' },
              flow: { type: 'string' },
              metadata_url: { type: 'string' },
              scopes_supported: stringArray,
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
        response_headers: stringArray,
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
        deprecation_headers: stringArray,
        minimum_sunset_notice_days: { type: 'integer' },
        documentation_url: { type: 'string' },
      },
    },
    resources: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Absolute URL per top-level resource, path templates included.',
    },
    description: { type: 'string' },
    llms_txt_url: { type: 'string' },
    clients: {
      type: 'object',
      required: ['cli', 'cli_documentation_url'],
      properties: { cli: { type: 'string' }, cli_documentation_url: { type: 'string' } },
    },
    webhooks_documentation_url: { type: 'string' },
  },
} as const;

/**
 * An RFC 9457 problem details body, as every error of the API is sent
 * (`application/problem+json`). `code` is any snake_case code here: the core knows its
 * domain codes, a transport adds its own (the HTTP adapter narrows it to the codes of its
 * status table). Source: docs/CONTRACT.md "Envelope and errors"; RFC 9457 §3.
 */
export const problemDetailsSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'RFC 9457 problem details; never wrapped in `data`. Further members may be added.',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: str('`about:blank`: the status and `code` say what happened.'),
    title: str('The HTTP reason phrase of `status`.'),
    status: { type: 'integer', description: 'HTTP status code.' },
    detail: str('Human-readable failure detail; names the offending field where there is one.'),
    code: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', description: 'Machine-readable, snake_case.' },
    errors: {
      type: 'array',
      description: 'Validation failures (code `validation_failed`).',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: str('JSON Pointer (RFC 6901) into the request body, or `/<name>` of a query parameter (list operations).'), message: str('The rule that failed.') },
      },
    },
    request_id: str('The `X-Request-Id` of the request, to quote in support requests.'),
  },
} as const;
