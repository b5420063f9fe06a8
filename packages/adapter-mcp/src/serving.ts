/**
 * The MCP SDK's side of `createMcpEndpoint`: a fresh `McpServer` per exchange with the
 * tools registered, served in both protocol eras. Imported by the endpoint at its first
 * exchange (the SDK and zod are not loaded before). Internal to the package.
 * Source: docs/CONTRACT.md "MCP"; docs/decisions.md "MCP".
 */
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  fromJsonSchema,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type CallToolResult,
  type JsonSchemaType,
  type jsonSchemaValidator,
  type McpHandlerRequestOptions,
  type McpRequestContext,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server';
import type { McpEndpointSettings, McpExchange } from './exchange.js';
import type { McpTool } from './tools.js';

/** Serves exchanges with the SDK ({@link createServing}). */
export interface Serving {
  /** Answers one exchange (see `McpEndpoint.handle`). */
  handle(exchange: McpExchange): Promise<void>;
  /** Aborts exchanges in flight. */
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
 * The SDK serving of `tools`, each call answered by `callTool` (the endpoint's: credential,
 * charge, use case, problem details).
 */
export function createServing(
  toolList: readonly McpTool[],
  settings: McpEndpointSettings,
  callTool: (tool: McpTool, exchange: McpExchange, args: Record<string, unknown>) => Promise<CallToolResult>,
): Serving {
  const tools = toolList.map((tool) => ({
    tool,
    schema: fromJsonSchema(tool.inputSchema as JsonSchemaType, ADVERTISE_ONLY) as StandardSchemaWithJSON<Record<string, unknown>>,
    // Advertised, not checked here: the data is what the use case answered over REST too.
    output: fromJsonSchema(tool.outputSchema as JsonSchemaType, ADVERTISE_ONLY),
  }));
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
    close: () => modern.close(),
  };
}
