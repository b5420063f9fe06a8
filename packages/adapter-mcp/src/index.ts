/**
 * `@svc/adapter-mcp`: an agent's MCP endpoint (Streamable HTTP, stateless) whose tools are
 * the core's use cases. Source: docs/CONTRACT.md "MCP"; docs/decisions.md "MCP".
 */
export * from './endpoint.js';
export * from './tools.js';
