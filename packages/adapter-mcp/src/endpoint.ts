import type { CallToolResult } from '@modelcontextprotocol/server';
import { DependencyUnavailableError, errorTypeOf, silentLogger, type DomainError, type ValidationIssue } from '@svc/core';
import type { McpEndpointSettings, McpExchange, McpProblemCode, McpUseCases } from './exchange.js';
import type { Serving } from './serving.js';
import { MCP_TOOLS, type McpTool } from './tools.js';

export type { McpEndpointSettings, McpExchange, McpProblemCode, McpUseCases, ProblemBuilder } from './exchange.js';

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
  const tools = settings.tools ?? MCP_TOOLS;
  const logger = settings.logger ?? silentLogger;
  const toolNames = new Set(tools.map((tool) => tool.name));

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

  // The MCP SDK (and zod, which it loads) is imported at the first exchange, not with the
  // package: a server whose agents are never reached over MCP does not hold it (~14 MiB of
  // RSS at start; bench/BENCHMARKS.md "RSS idle").
  let serving: Promise<Serving> | undefined;
  const servingOf = (): Promise<Serving> => (serving ??= import('./serving.js').then(({ createServing }) => createServing(tools, settings, callTool)));

  return {
    async handle(exchange) {
      await (await servingOf()).handle(exchange);
    },
    isToolCall(body) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
      const { method, params } = body as { method?: unknown; params?: unknown };
      if (method !== 'tools/call' || typeof params !== 'object' || params === null) return false;
      const name = (params as { name?: unknown }).name;
      return typeof name === 'string' && toolNames.has(name);
    },
    close: async () => {
      if (serving !== undefined) await (await serving).close();
    },
  };
}
