import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  fromJsonSchema,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  type McpHandlerRequestOptions,
  type AuthInfo,
  type CallToolResult,
  type JsonSchemaType,
  type jsonSchemaValidator,
  type McpRequestContext,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server';
import {
  DependencyUnavailableError,
  errorTypeOf,
  silentLogger,
  type Authenticate,
  type DomainError,
  type DomainErrorCode,
  type Logger,
  type Principal,
  type RateLimitPolicy,
  type RecordWriteInput,
  type RequestMeter,
  type ValidationIssue,
} from '@svc/core';
import { MCP_TOOLS, type McpTool, type McpToolUseCases } from './tools.js';

/** The use cases the endpoint calls: the tools' use cases, the credential check and the rate-limit policy. */
export interface McpUseCases extends McpToolUseCases {
  /** Authenticates each tool call with the tool's REST operation (kinds and scopes as REST). */
  readonly authenticate: Pick<Authenticate, 'execute'>;
  /** Gives each tool call its meter (`meterFor(principal)`), charged once, as REST does. */
  readonly rateLimits: Pick<RateLimitPolicy, 'meterFor'>;
}

/**
 * The codes a tool error can carry: the core's, plus `service_unavailable` (a lost
 * dependency) and `internal_error` (a bug), as REST answers them.
 */
export type McpProblemCode = DomainErrorCode | 'service_unavailable' | 'internal_error';

/**
 * Builds the problem details body (RFC 9457) REST would answer for `code`, as the HTTP
 * adapter builds it (`problemOf` of `@svc/adapter-http`, passed in by the composition
 * root): `type`, `title`, `status`, `detail`, `code`, `errors`, `request_id`.
 */
export type ProblemBuilder = (
  code: McpProblemCode,
  detail: string,
  extra: { errors?: readonly ValidationIssue[] | undefined; requestId?: string | undefined },
) => object;

/** Settings of {@link createMcpEndpoint}. */
export interface McpEndpointSettings {
  /** `serverInfo.name` (e.g. `svc`). */
  readonly name: string;
  /** `serverInfo.version`. */
  readonly version: string;
  /** Problem details of a tool error: the same JSON REST answers. */
  readonly problemOf: ProblemBuilder;
  /** Where failures of tool calls are logged (type only, never a message); default: nowhere. */
  readonly logger?: Logger;
  /** The tools; default {@link MCP_TOOLS}. */
  readonly tools?: readonly McpTool[];
  /**
   * Largest body in bytes the SDK reads itself, when a door passes no parsed body; default
   * the SDK's (4 MiB). The HTTP adapter always passes the body it read under its own limit.
   */
  readonly maxRequestBodySize?: number;
}

/**
 * One HTTP exchange with an agent's MCP endpoint, after the door (the HTTP adapter)
 * authenticated the credential (401 otherwise), found the agent (404 otherwise) and read
 * the JSON body.
 */
export interface McpExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The agent of the path. */
  readonly agentId: string;
  /** The parsed JSON-RPC message (exact numbers kept as the door's parser keeps them). */
  readonly body: unknown;
  /** Who sent it (identified; each tool call is authorized for its own operation). */
  readonly principal: Principal;
  /** Every `X-API-Key` and `Authorization` line of the request, for each tool call's authentication. */
  readonly credentials: { readonly apiKeys: readonly string[]; readonly authorizations: readonly string[] };
  /** The route of row writes: `egress`, or the raw `X-Svc-Egress` header (as REST passes it). */
  readonly route: NonNullable<RecordWriteInput['route']>;
  /** `X-Request-Id` of the request. */
  readonly requestId?: string;
  /**
   * The request's rate-limit charge: every authenticated request is charged exactly once
   * (docs/CONTRACT.md "Rate limits"). When the body is one tool call
   * ({@link McpEndpoint.isToolCall}) the door leaves it uncharged and the call charges it
   * through its use case (with the agent's window for `start_run`); otherwise the door
   * charged it before the exchange, and each call of a batch gets a meter of its own.
   */
  readonly meter: RequestMeter;
  /** Called once a tool call's meter was charged, before the answer's headers are written (the door adds rate-limit headers). */
  readonly charged?: (meter: RequestMeter) => void;
  /** Called when a tool call met a lost dependency, before the answer's headers are written (the door adds `Retry-After`). */
  readonly unavailable?: () => void;
}

/** The MCP endpoint of every agent: {@link McpEndpoint.handle} serves one exchange. */
export interface McpEndpoint {
  /** Answers one `POST` with the SDK's stateless Streamable HTTP serving. */
  handle(exchange: McpExchange): Promise<void>;
  /**
   * True when `body` is one JSON-RPC `tools/call` (not a batch) of a tool this endpoint
   * serves: the call charges the exchange's meter itself. The door charges every other message.
   */
  isToolCall(body: unknown): boolean;
  /** Aborts exchanges in flight (shutdown). */
  close(): Promise<void>;
}

// The core validates every argument as it validates a REST body (and answers
// `validation_failed` with JSON Pointers as problem details), so the SDK is handed the
// core's JSON Schemas to advertise with a validator that accepts whatever arrives: one
// validation, not two that could disagree (docs/decisions.md "MCP").
const ADVERTISE_ONLY: jsonSchemaValidator = {
  getValidator: () => (data: unknown) => ({ valid: true, data, errorMessage: undefined }) as never,
};

const EXCHANGE = Symbol('svc.mcp.exchange');

function exchangeOf(ctx: McpRequestContext): McpExchange {
  const exchange = ctx.authInfo?.extra?.[EXCHANGE as unknown as string] as McpExchange | undefined;
  if (exchange === undefined) throw new Error('MCP request without its exchange: the endpoint is served only through McpEndpoint.handle');
  return exchange;
}

/**
 * The MCP Streamable HTTP endpoint of every agent (`{base_url}/api/v1/agents/{agent_id}/mcp`),
 * stateless: each request is answered by a fresh server instance, so any instance answers
 * any request and no session id is issued. Both protocol eras are served: 2026-07-28
 * (per-request envelope, `createMcpHandler` of `@modelcontextprotocol/server` 2.x) and the
 * 2025 revisions (`initialize`, `tools/list`, `tools/call` without a session: a per-request
 * `WebStandardStreamableHTTPServerTransport` answering JSON). `GET`/`DELETE` never reach it
 * (the door answers 405).
 *
 * Each `tools/call` is authenticated with its tool's REST operation (an OAuth token needs
 * that operation's scope; row writes take API keys only), charged once to the credential's
 * window (and `start_run` to the agent's), and answered with the REST answer's `data` as
 * structured content, or `isError: true` with the problem details REST would answer.
 * Every other message is charged by the door before the exchange ({@link McpExchange.meter}).
 * Source: docs/CONTRACT.md "MCP".
 */
export function createMcpEndpoint(useCases: McpUseCases, settings: McpEndpointSettings): McpEndpoint {
  const tools = (settings.tools ?? MCP_TOOLS).map((tool) => ({
    tool,
    schema: fromJsonSchema(tool.inputSchema as JsonSchemaType, ADVERTISE_ONLY) as StandardSchemaWithJSON<Record<string, unknown>>,
    // Advertised, not checked here: the data is what the use case answered over REST too.
    output: fromJsonSchema(tool.outputSchema as JsonSchemaType, ADVERTISE_ONLY),
  }));
  const logger = settings.logger ?? silentLogger;
  const toolNames = new Set(tools.map(({ tool }) => tool.name));

  const toolError = (exchange: McpExchange, code: McpProblemCode, detail: string, errors?: readonly ValidationIssue[]): CallToolResult => {
    const problem = settings.problemOf(code, detail, { errors, requestId: exchange.requestId });
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem as Record<string, unknown> };
  };
  const domainToolError = (exchange: McpExchange, error: DomainError): CallToolResult => toolError(exchange, error.code, error.detail, error.errors);

  async function callTool(tool: McpTool, exchange: McpExchange, args: Record<string, unknown>): Promise<CallToolResult> {
    // The request's meter when this call is the request; a call of a batch (whose request
    // the door charged) gets one of its own.
    let meter = exchange.meter;
    try {
      const principal = await useCases.authenticate.execute({ ...exchange.credentials, operation: tool.operation });
      if (meter.charged && principal.ok) meter = useCases.rateLimits.meterFor(principal.value);
      // Refused for this tool (scope, kind): the request is charged all the same, in `finally`.
      if (!principal.ok) return domainToolError(exchange, principal.error);
      const call = { principal: principal.value, meter, agentId: exchange.agentId, route: exchange.route, ...(exchange.requestId !== undefined ? { requestId: exchange.requestId } : {}) };
      const result = await tool.call(useCases, call, args ?? {});
      if (!meter.charged) {
        // A use case that answered without charging (none does today): charged here, once.
        const refused = await meter.charge();
        if (refused !== undefined) return domainToolError(exchange, refused);
      }
      if (!result.ok) return domainToolError(exchange, result.error);
      const data = result.value as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
    } catch (error) {
      if (error instanceof DependencyUnavailableError) {
        logger.warn({ tool: tool.name, error_type: errorTypeOf(error), request_id: exchange.requestId }, 'mcp tool call: dependency unavailable');
        exchange.unavailable?.();
        return toolError(exchange, 'service_unavailable', 'A service this call needs is unavailable; nothing was done. Retry after the Retry-After seconds.');
      }
      logger.error({ tool: tool.name, error_type: errorTypeOf(error), request_id: exchange.requestId }, 'mcp tool call failed');
      return toolError(exchange, 'internal_error', 'The call failed.');
    } finally {
      // Every request is charged once, also when the call was refused or failed before its use case charged.
      if (!meter.charged) await meter.charge().catch(() => undefined);
      exchange.charged?.(meter);
    }
  }

  const factory = (ctx: McpRequestContext): McpServer => {
    const exchange = exchangeOf(ctx);
    const server = new McpServer({ name: settings.name, version: settings.version }, { capabilities: { tools: { listChanged: false } } });
    for (const { tool, schema, output } of tools) {
      server.registerTool(
        tool.name,
        { title: tool.title, description: tool.description, inputSchema: schema, outputSchema: output, annotations: { title: tool.title, ...tool.annotations } },
        (args) => callTool(tool, exchange, args),
      );
    }
    return server;
  };
  const bodyLimit = settings.maxRequestBodySize !== undefined ? { maxRequestBodySize: settings.maxRequestBodySize } : {};
  // The 2026-07-28 era: the SDK's per-request entry (JSON unless a handler streams).
  const modern = createMcpHandler(factory, { legacy: 'reject', ...bodyLimit });
  // The 2025 era, served as the SDK's own stateless fallback does (a fresh instance and
  // transport per request, no session id) but with JSON responses: the answer is written
  // once the tool call is done, so it carries the rate-limit headers of its charge (the
  // SDK's fallback opens an event stream before the tool runs).
  const legacy = async (request: Request, options: McpHandlerRequestOptions): Promise<Response> => {
    const server = factory({ era: 'legacy', ...(options.authInfo !== undefined ? { authInfo: options.authInfo } : {}), requestInfo: request });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, ...bodyLimit });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, options);
    } finally {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  };
  const serve = toNodeHandler(
    { fetch: async (request, options = {}) => ((await isLegacyRequest(request, options.parsedBody, bodyLimit)) ? legacy(request, options) : modern.fetch(request, options)) },
    bodyLimit,
  );

  return {
    async handle(exchange) {
      // The SDK hands `authInfo` through to the factory untouched: the exchange rides in
      // it. No secret in `token`: the SDK never verifies it, the core did.
      const auth: AuthInfo = {
        token: '',
        clientId: exchange.principal.credentialId,
        scopes: [...exchange.principal.scopes],
        extra: { [EXCHANGE as unknown as string]: exchange },
      };
      const req = Object.assign(exchange.req, { auth });
      await serve(req as unknown as Parameters<typeof serve>[0], exchange.res, exchange.body);
    },
    isToolCall(body) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
      const { method, params } = body as { method?: unknown; params?: unknown };
      if (method !== 'tools/call' || typeof params !== 'object' || params === null) return false;
      const name = (params as { name?: unknown }).name;
      return typeof name === 'string' && toolNames.has(name);
    },
    close: () => modern.close(),
  };
}
