import {
  filesRunBodySchema,
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

/**
 * The tools every agent's endpoint serves, in `tools/list` order. `list_runs` and
 * `list_connections` (docs/CONTRACT.md "MCP") join as one entry each once their use
 * cases exist.
 */
export const MCP_TOOLS: readonly McpTool[] = [startRunTool, getRunTool, insertRecordTool, updateRecordTool];
