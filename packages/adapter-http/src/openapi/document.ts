import {
  agentListResponseSchema,
  agentResponseSchema,
  agentViewSchema,
  apiIndexSchema,
  connectionListResponseSchema,
  connectionResponseSchema,
  connectionViewSchema,
  DEPRECATION_HEADERS,
  MINIMUM_SUNSET_NOTICE_DAYS,
  filesRunBodySchema,
  fileListSchema,
  fileResponseSchema,
  fileViewSchema,
  prepareFileBodySchema,
  fileReferenceSchema,
  insertRecordBodySchema,
  messageRunBodySchema,
  problemDetailsSchema,
  RATE_LIMIT_HEADERS,
  rowWriteResponseSchema,
  rowWriteResultSchema,
  runResponseSchema,
  runListSchema,
  runStartResponseSchema,
  runStartResultSchema,
  runViewSchema,
  startRunBodySchema,
  updateRecordBodySchema,
  type RateLimitSettings,
} from '@svc/core';
import { stringify } from 'yaml';
import { STATUS_BY_CODE } from '../problem.js';
import type { DocumentContext, Listener, RouteDefinition } from '../route.js';
import { ROUTES } from '../routes/index.js';
import { enforcedLimits, formatBytes } from '../settings.js';
import { component, headerComponents, responseComponents, securitySchemes, type Json, type JsonObject } from './components.js';
import { exampleComponents } from './examples.js';

/** What the OpenAPI document needs to know: the addresses and the limits the server enforces. */
export interface OpenApiSettings {
  /** `{base_url}`, absolute, no trailing slash: `servers[0].url`. */
  readonly baseUrl: string;
  /** `{egress_url}`: the server of the direct stable-egress operations. */
  readonly egressUrl: string;
  /** The rate limits the server enforces (its core `RateLimitPolicy`'s settings). */
  readonly rateLimits: RateLimitSettings;
  /** The largest request body in bytes, after decoding; default `DEFAULT_BODY_LIMIT_BYTES`. */
  readonly bodyLimitBytes?: number;
  /** Operation ids marked deprecated (`deprecated: true` in the document). */
  readonly deprecatedOperations?: readonly string[];
}

/**
 * The answer of a method a path does not serve: it belongs to no operation, so it is said
 * on the path. Source: docs/CONTRACT.md "Envelope and errors" (405).
 */
const METHOD_NOT_ALLOWED =
  'Another method on this path answers 405 `method_not_allowed` (problem details) with `Allow` listing the methods served; `OPTIONS` answers 204 with `Allow`; `HEAD` is served as `GET`.';

/** `:name` segments of a route's path (path-to-regexp syntax) as OpenAPI `{name}` templates. */
const template = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/gu, '{$1}');

/**
 * The files run body with its file references as `$ref`s to `FileReference` (the core
 * inlines the same schema): clients get one named type for both lists.
 */
function withFileReferences(schema: JsonObject): JsonObject {
  const properties = { ...(schema['properties'] as JsonObject) };
  for (const list of ['files', 'background_files']) {
    const property = properties[list] as JsonObject | undefined;
    if (property !== undefined) properties[list] = { ...property, items: { $ref: '#/components/schemas/FileReference' } };
  }
  return { ...schema, properties };
}

/**
 * The schemas: request bodies and answers, all from the core, so the document cannot
 * drift from what the use cases validate and return. `Problem.code` is narrowed to the
 * codes of the adapter's status table (the core's schema allows any snake_case code).
 */
function schemaComponents(): JsonObject {
  const problem = component(problemDetailsSchema) as { properties: JsonObject };
  return {
    InsertRecordRequest: component(insertRecordBodySchema),
    UpdateRecordRequest: component(updateRecordBodySchema),
    FileReference: component(fileReferenceSchema),
    RunWithFiles: withFileReferences(component(filesRunBodySchema) as JsonObject),
    RunWithMessage: component(messageRunBodySchema),
    StartRunRequest: component(startRunBodySchema),
    Problem: {
      ...problem,
      properties: { ...problem.properties, code: { type: 'string', enum: Object.keys(STATUS_BY_CODE), description: 'Machine-readable, snake_case.' } },
    },
    RowWriteResult: component(rowWriteResultSchema),
    RowWriteResponse: component(rowWriteResponseSchema),
    RunStartResult: component(runStartResultSchema),
    RunStartResponse: component(runStartResponseSchema),
    PrepareFileRequest: component(prepareFileBodySchema),
    File: component(fileViewSchema),
    FileResponse: component(fileResponseSchema),
    FileList: component(fileListSchema),
    Run: component(runViewSchema),
    RunResponse: component(runResponseSchema),
    RunList: component(runListSchema),
    ApiIndex: component(apiIndexSchema),
    Agent: component(agentViewSchema),
    AgentResponse: component(agentResponseSchema),
    AgentList: component(agentListResponseSchema),
    Connection: component(connectionViewSchema),
    ConnectionResponse: component(connectionResponseSchema),
    ConnectionList: component(connectionListResponseSchema),
  };
}

/**
 * A deprecated operation: `deprecated: true`, and its success answers list the headers it
 * is sent with (`Deprecation`, `Sunset`, `Link; rel="deprecation"`; docs/CONTRACT.md
 * "Index and versioning").
 */
function deprecatedOperation(operation: JsonObject): JsonObject {
  const responses: { [status: string]: Json } = {};
  for (const [status, response] of Object.entries(operation['responses'] as JsonObject)) {
    const inline = response as JsonObject;
    responses[status] =
      status.startsWith('2') && inline['$ref'] === undefined
        ? { ...inline, headers: { ...(inline['headers'] as JsonObject | undefined), ...DEPRECATION_RESPONSE_HEADERS } }
        : response;
  }
  return { ...operation, deprecated: true, responses };
}

const DEPRECATION_RESPONSE_HEADERS: JsonObject = Object.fromEntries(DEPRECATION_HEADERS.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** The `paths` object: each documented route on each listener it is served on, main first. */
function pathsOf(routes: readonly RouteDefinition[], doc: DocumentContext, deprecated: ReadonlySet<string>): JsonObject {
  const paths: { [path: string]: { [key: string]: Json } } = {};
  for (const listener of ['main', 'egress'] as const satisfies readonly Listener[]) {
    for (const route of routes) {
      const served = route.paths[listener];
      if (route.openapi === undefined || served === undefined) continue;
      // The egress address serves the same operation: deprecated with it (same headers).
      const described = route.openapi(doc, listener) as JsonObject;
      const operation = deprecated.has(route.operationId) ? deprecatedOperation(described) : described;
      for (const path of served) {
        let item = paths[template(path)];
        if (item === undefined) {
          item =
            listener === 'egress'
              ? {
                  servers: [{ url: doc.egressUrl, description: 'Direct stable-egress address' }],
                  description:
                    'Served at the direct stable-egress address: same credentials, bodies and answers as at the base address, always on the egress route. Nothing else is served there (404).',
                }
              : { description: METHOD_NOT_ALLOWED };
          paths[template(path)] = item;
        }
        item[route.method.toLowerCase()] = operation;
      }
    }
  }
  return paths;
}

/**
 * Builds the OpenAPI 3.1 document of the API from the route list (each route's operation
 * object) and the core's JSON Schemas, stating the limits the server enforces.
 * Source: docs/CONTRACT.md "Index and versioning"; OpenAPI 3.1.0.
 */
export function buildOpenApiDocument(settings: OpenApiSettings, routes: readonly RouteDefinition[] = ROUTES): Record<string, unknown> {
  const limits = enforcedLimits(settings.rateLimits, settings);
  const doc: DocumentContext = { baseUrl: settings.baseUrl, egressUrl: settings.egressUrl, limits };
  const { credential, agent, bodyLimitBytes } = limits;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Runs and Connected Data API',
      version: '1.0.0',
      summary: 'Start agent runs and write single rows to connected SQL Server databases.',
      description: [
        'Successful bodies are wrapped in `{"data": ...}`, except `GET /api/v1`. Errors are RFC 9457 problem details (`application/problem+json`) with `status`, `detail`, `title` and a snake_case `code`, never wrapped.',
        `Every authenticated response carries the rate-limit headers of the tightest applicable limit: ${credential.limit} requests / ${credential.windowSeconds} s per credential, plus ${agent.limit} / ${agent.windowSeconds} s per agent on run creation. A request refused with 429 is not charged to any window.`,
        `Every response carries \`X-Request-Id\`. Unknown request body members are refused (400). Bodies are JSON, at most ${formatBytes(bodyLimitBytes)} (${bodyLimitBytes} bytes) once decoded.`,
        'A request the HTTP parser refuses, on any path, gets a problem details answer with `X-Request-Id` and `Connection: close`: 400 `bad_request` (not HTTP/1.1) or `invalid_header` (a malformed header, `Content-Length` or `Transfer-Encoding`), 408 `request_timeout`, 413 `payload_too_large` (chunk extensions), 417 `expectation_failed` (an `Expect` other than `100-continue`), 431 `request_header_fields_too_large`; `CONNECT` answers 405 `method_not_allowed`. Two credentials that disagree (two `Authorization` lines, two `X-API-Key` lines, or `X-API-Key` and another bearer) answer 401 `invalid_credential`; the same credential repeated is accepted.',
        'A resource of another account (agent, connection, run) answers exactly as a missing one: 404 `not_found` with the same detail, headers and length, whatever else is wrong with the request; checks that depend on the resource (such as `writes_not_supported`) come after it is found visible, and lists never show it. Rate-limit windows are per account and credential.',
        'Lists take `limit` (1..100, default 20) and an opaque `cursor`; the next page is at the URL of `Link: <…>; rel="next"` (RFC 8288), absent on the last page. Wrapped lists also give that cursor as `next_cursor` (`null` on the last page); the connection list is a bare array, so `Link` is its only pager.',
        `Deprecated operations answer with ${DEPRECATION_HEADERS.join(', ')} headers; the minimum sunset notice is ${MINIMUM_SUNSET_NOTICE_DAYS} days.`,
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: settings.baseUrl, description: 'Base address' }],
    tags: [
      { name: 'Discovery', description: 'What the caller can use: the index, its agents, connections and runs, paged.' },
      { name: 'Connections', description: 'The caller\'s connections (never their credentials or hosts), and row writes on those that allow them (SQL Server).' },
      { name: 'Agents', description: "The caller's agents and the runs started on them." },
      { name: 'Runs', description: 'Asynchronous agent runs: start one, read its status, list them newest first.' },
      { name: 'MCP', description: "An agent's Model Context Protocol endpoint: the same operations as tools." },
    ],
    paths: pathsOf(routes, doc, new Set(settings.deprecatedOperations ?? [])),
    components: {
      schemas: schemaComponents(),
      responses: responseComponents(limits),
      headers: headerComponents((settings.deprecatedOperations ?? []).length > 0),
      examples: exampleComponents(),
      securitySchemes: securitySchemes(),
    },
    'x-rate-limit-headers': [...RATE_LIMIT_HEADERS],
    'x-limits': {
      credential: { requests: credential.limit, window_seconds: credential.windowSeconds },
      agent: { requests: agent.limit, window_seconds: agent.windowSeconds },
      body_bytes: bodyLimitBytes,
    },
  };
}

/** The document as YAML text (the served form). */
export function openApiYaml(settings: OpenApiSettings, routes: readonly RouteDefinition[] = ROUTES): string {
  return stringify(buildOpenApiDocument(settings, routes), { aliasDuplicateObjects: false, lineWidth: 0 });
}
