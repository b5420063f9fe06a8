import {
  connectionViewSchema,
  filesRunBodySchema,
  MAX_PAGE_LIMIT,
  RUN_STATUSES,
  insertRecordBodySchema,
  messageRunBodySchema,
  rowWriteResultSchema,
  runStartResultSchema,
  runViewSchema,
  updateRecordBodySchema,
  validationFailed,
  wireBody,
  type DomainError,
  type GetRun,
  type InsertRecord,
  type ListConnections,
  type ListPage,
  type ListRuns,
  type OperationId,
  type Principal,
  type RecordWriteInput,
  type RequestMeter,
  type Result,
  type StartRun,
  type UpdateRecord,
} from '@svc/core';

/** A JSON value as a tool's schema holds it. */
export type JsonObject = { readonly [key: string]: unknown };

/** The use cases the tools call (any object with the same `execute`). */
export interface McpToolUseCases {
  readonly startRun: Pick<StartRun, 'execute'>;
  readonly getRun: Pick<GetRun, 'execute'>;
  readonly insertRecord: Pick<InsertRecord, 'execute'>;
  readonly updateRecord: Pick<UpdateRecord, 'execute'>;
  readonly listRuns: Pick<ListRuns, 'execute'>;
  readonly listConnections: Pick<ListConnections, 'execute'>;
}

/** Who calls a tool, and where: what the REST door passes to the same use case. */
export interface ToolCall {
  /** The caller, authenticated for the tool's operation. */
  readonly principal: Principal;
  /** This call's rate-limit charge, charged exactly once (by the use case or by the tool). */
  readonly meter: RequestMeter;
  /** The agent of the endpoint (`agent_id` of `…/agents/{agent_id}/mcp`). */
  readonly agentId: string;
  /** The route of row writes: the raw `X-Svc-Egress` header of the request, as REST passes it. */
  readonly route: NonNullable<RecordWriteInput['route']>;
  /** The HTTP request's `X-Request-Id` (a run started by the call keeps it). */
  readonly requestId?: string;
}

/** Hints for clients (MCP `ToolAnnotations`). */
export interface ToolHints {
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/**
 * One MCP tool: a second door to one core use case, never a second implementation. Its
 * input is the REST body plus the REST path parameters as properties; its structured
 * output is the REST answer's `data`. Adding a tool is adding one entry to
 * {@link MCP_TOOLS}. Source: docs/CONTRACT.md "MCP".
 */
export interface McpTool {
  /** The tool name (`start_run`). */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /**
   * The REST operation whose credential rules apply (kinds, OAuth scope): the call is
   * authenticated with it, as the REST request would be.
   */
  readonly operation: OperationId;
  /** JSON Schema (2020-12) of the arguments: the core's schema of the REST body, with the path parameters added. */
  readonly inputSchema: JsonObject;
  /** JSON Schema of the structured output: the core's schema of the REST answer's `data`. */
  readonly outputSchema: JsonObject;
  readonly annotations: ToolHints;
  /**
   * Calls the use case with `args` (unvalidated: the use case validates them as it
   * validates a REST body, so errors name the same JSON Pointers).
   * @returns the REST answer's `data`, or the domain error.
   */
  readonly call: (useCases: McpToolUseCases, call: ToolCall, args: Record<string, unknown>) => Promise<Result<unknown, DomainError>>;
}

/** A schema without its `$id` and `title`, to be embedded in another. */
function embedded(schema: JsonObject): JsonObject {
  const { $id: _id, title: _title, ...rest } = schema;
  return rest;
}

const connectionIdProperty = {
  type: 'string',
  format: 'uuid',
  description: 'The connection (`connection_id` of `POST /api/v1/connections/{connection_id}/records`).',
} as const;

/** A row write's arguments: `connection_id` plus the members of the REST body. */
function recordWriteSchema(body: JsonObject & { readonly required: readonly string[]; readonly properties: JsonObject }): JsonObject {
  return {
    ...embedded(body),
    required: ['connection_id', ...body.required],
    properties: { connection_id: connectionIdProperty, ...body.properties },
  };
}

/**
 * Splits a path parameter from the arguments: the string, or `undefined` when it is
 * missing or not a string (then the tool charges the call and answers `validation_failed`
 * naming it, like a body member).
 */
function pathArgument(args: Record<string, unknown>, name: string): { value: string | undefined; rest: Record<string, unknown> } {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(args)) {
    if (key !== name) Object.defineProperty(rest, key, { value: args[key], enumerable: true, writable: true, configurable: true });
  }
  const value = args[name];
  return { value: typeof value === 'string' ? value : undefined, rest };
}

async function missingArgument(meter: RequestMeter, name: string, value: unknown): Promise<Result<never, DomainError>> {
  const refused = meter.charged ? undefined : await meter.charge();
  if (refused !== undefined) return { ok: false, error: refused };
  return { ok: false, error: validationFailed([{ path: `/${name}`, message: value === undefined ? 'is required' : 'must be a string' }]) };
}

/** `start_run`: core `StartRun` for the endpoint's agent; `data` of `POST /api/v1/agents/{agent_id}/run`. */
export const startRunTool: McpTool = {
  name: 'start_run',
  title: 'Start a run',
  description:
    "Starts an asynchronous run of this endpoint's agent, with uploaded files (Option 1: `files`, optional `message`, `process_together`, `notification_email`, `background_files`) or a message only (Option 2: `message`). Answers the run id and its `status_url` (read it with `get_run`). Same rules and limits as `POST /api/v1/agents/{agent_id}/run`; charged to the credential and to the agent.",
  operation: 'startRun',
  inputSchema: { type: 'object', oneOf: [embedded(filesRunBodySchema), embedded(messageRunBodySchema)] },
  outputSchema: embedded(runStartResultSchema),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  call: async ({ startRun }, call, args) =>
    startRun.execute({ principal: call.principal, meter: call.meter, agentId: call.agentId, body: wireBody(args), ...(call.requestId !== undefined ? { requestId: call.requestId } : {}) }),
};

/** `get_run`: core `GetRun`; `data` of `GET /api/v1/runs/{run_id}`. */
export const getRunTool: McpTool = {
  name: 'get_run',
  title: 'Read a run',
  description: 'Reads a run of your account by `run_id`: status (queued, running, succeeded, failed, cancelled), progress, output, failure reason. Same answer as `GET /api/v1/runs/{run_id}` (its `status_url`).',
  operation: 'getRun',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['run_id'],
    properties: { run_id: { type: 'string', minLength: 1, description: 'The run id (`run_id` of `start_run`).' } },
  },
  outputSchema: embedded(runViewSchema),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  call: async ({ getRun }, call, args) => {
    const { value: runId } = pathArgument(args, 'run_id');
    if (runId === undefined) return missingArgument(call.meter, 'run_id', args['run_id']);
    return getRun.execute({ principal: call.principal, meter: call.meter, runId });
  },
};

/** `insert_record`: core `InsertRecord`; `data` of `POST /api/v1/connections/{connection_id}/records`. */
export const insertRecordTool: McpTool = {
  name: 'insert_record',
  title: 'Insert a row',
  description:
    'Inserts one row into `entity` (`schema.table`) of a SQL Server connection of your account. Same rules as `POST /api/v1/connections/{connection_id}/records`: identifiers quoted, values bound as parameters, numbers written exactly or refused. API keys only.',
  operation: 'insertRecord',
  inputSchema: recordWriteSchema(insertRecordBodySchema),
  outputSchema: embedded(rowWriteResultSchema),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  call: async ({ insertRecord }, call, args) => {
    const { value: connectionId, rest } = pathArgument(args, 'connection_id');
    if (connectionId === undefined) return missingArgument(call.meter, 'connection_id', args['connection_id']);
    return insertRecord.execute({ principal: call.principal, meter: call.meter, connectionId, body: wireBody(rest), route: call.route });
  },
};

/** `update_record`: core `UpdateRecord`; `data` of `PATCH /api/v1/connections/{connection_id}/records`. */
export const updateRecordTool: McpTool = {
  name: 'update_record',
  title: 'Update a row',
  description:
    'Updates the row of `entity` whose `key_column` equals `key_value`, on a SQL Server connection of your account. Same rules as `PATCH /api/v1/connections/{connection_id}/records`. API keys only.',
  operation: 'updateRecord',
  inputSchema: recordWriteSchema(updateRecordBodySchema),
  outputSchema: embedded(rowWriteResultSchema),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  call: async ({ updateRecord }, call, args) => {
    const { value: connectionId, rest } = pathArgument(args, 'connection_id');
    if (connectionId === undefined) return missingArgument(call.meter, 'connection_id', args['connection_id']);
    return updateRecord.execute({ principal: call.principal, meter: call.meter, connectionId, body: wireBody(rest), route: call.route });
  },
};

/** `limit` and `cursor` of a list tool: the REST query parameters, `limit` a JSON integer. */
const pagingProperties = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: 20, description: `Items per page, 1..${MAX_PAGE_LIMIT} (default 20).` },
  cursor: { type: 'string', description: 'The `next_cursor` of the previous page, as given; absent: the first page.' },
} as const;

/**
 * A list tool's structured output: `{data: [item], next_cursor}`. MCP structured content
 * is a JSON object, so the list is always wrapped here, also where REST answers a bare
 * array (the connection list), and the next page's cursor, which REST gives in
 * `Link: rel="next"` (and `next_cursor` where its body is wrapped), is `next_cursor`.
 * Source: docs/decisions.md "MCP".
 */
function listOutputSchema(item: JsonObject, order: string): JsonObject {
  return {
    type: 'object',
    required: ['data', 'next_cursor'],
    properties: {
      data: { type: 'array', maxItems: MAX_PAGE_LIMIT, items: embedded(item), description: order },
      next_cursor: { type: ['string', 'null'], description: 'Pass it as `cursor` for the next page; `null` on the last page.' },
    },
  };
}

/**
 * The query arguments of a list tool as the use case reads them: each a string when
 * given (`limit` a number), else `validation_failed` naming it after charging the call.
 */
async function queryArguments<N extends string>(meter: RequestMeter, args: Record<string, unknown>, names: readonly N[]): Promise<Result<Partial<Record<N, string>>, DomainError>> {
  const out: Partial<Record<N, string>> = {};
  for (const name of names) {
    const value = args[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') return missingArgument(meter, name, value);
    out[name] = value;
  }
  return { ok: true, value: out };
}

/** `limit` as sent: a JSON number as it is, anything else as text; the use case refuses all but a whole 1..100 naming `/limit`. */
function limitArgument(args: Record<string, unknown>): { readonly limit?: number | string } {
  const limit = args['limit'];
  return limit === undefined ? {} : { limit: typeof limit === 'number' ? limit : String(limit) };
}

function listAnswer<T>(result: Result<ListPage<T>, DomainError>): Result<unknown, DomainError> {
  return result.ok ? { ok: true, value: { data: result.value.items, next_cursor: result.value.nextCursor ?? null } } : result;
}

/** `list_runs`: core `ListRuns`; `GET /api/v1/runs?agent_id=&status=&limit=&cursor=` as `{data, next_cursor}`. */
export const listRunsTool: McpTool = {
  name: 'list_runs',
  title: 'List runs',
  description:
    "Lists your account's runs, newest first, each as `get_run` shows it; `agent_id` (e.g. this endpoint's agent) and `status` filter them. Page with `limit` (1..100, default 20) and the previous page's `next_cursor` as `cursor` until it is null; a page may be short while it is not. Same rules as `GET /api/v1/runs`; takes OAuth tokens with `runs:read`.",
  operation: 'listRuns',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      agent_id: { type: 'string', description: "Only this agent's runs; one your account does not have gives an empty list." },
      status: { type: 'string', enum: [...RUN_STATUSES], description: 'Only runs with this status, as each page is read.' },
      ...pagingProperties,
    },
  },
  outputSchema: listOutputSchema(runViewSchema, 'Runs, newest first (`created_at` descending, then `run_id`).'),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  call: async ({ listRuns }, call, args) => {
    const query = await queryArguments(call.meter, args, ['agent_id', 'status', 'cursor'] as const);
    if (!query.ok) return query;
    const { agent_id: agentId, status, cursor } = query.value;
    const page = { ...limitArgument(args), ...(cursor !== undefined ? { cursor } : {}) };
    return listAnswer(await listRuns.execute({ principal: call.principal, meter: call.meter, page, ...(agentId !== undefined ? { agentId } : {}), ...(status !== undefined ? { status } : {}) }));
  },
};

/** `list_connections`: core `ListConnections`; `GET /api/v1/connections` as `{data, next_cursor}`. */
export const listConnectionsTool: McpTool = {
  name: 'list_connections',
  title: 'List connections',
  description:
    "Lists your account's connections in ascending `connection_id` order: type, name, whether rows can be written (`writable`, SQL Server only), the `egress_source_address` to allowlist, and `records_url`; never a host, user name or password. Page with `limit` and `cursor` (the previous page's `next_cursor`). Same rules as `GET /api/v1/connections`; API keys only.",
  operation: 'listConnections',
  inputSchema: { type: 'object', additionalProperties: false, properties: { ...pagingProperties } },
  outputSchema: listOutputSchema(connectionViewSchema, 'Connections, in ascending `connection_id` order.'),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  call: async ({ listConnections }, call, args) => {
    const query = await queryArguments(call.meter, args, ['cursor'] as const);
    if (!query.ok) return query;
    const { cursor } = query.value;
    return listAnswer(await listConnections.execute({ principal: call.principal, meter: call.meter, page: { ...limitArgument(args), ...(cursor !== undefined ? { cursor } : {}) } }));
  },
};

/** The tools every agent's endpoint serves, in `tools/list` order (docs/CONTRACT.md "MCP"). */
export const MCP_TOOLS: readonly McpTool[] = [startRunTool, getRunTool, listRunsTool, listConnectionsTool, insertRecordTool, updateRecordTool];
