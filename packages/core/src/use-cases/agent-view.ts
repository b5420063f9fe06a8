import type { Agent } from '../domain/agent.js';

/**
 * An agent as discovery answers it (`GET /api/v1/agents`, `GET /api/v1/agents/{agent_id}`,
 * and the MCP adapter's tools): every member always present, `null` when the catalog
 * does not know it. Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery:
 * agents and connections".
 */
export interface AgentView {
  /** The agent's id, as in its URLs. */
  readonly agent_id: string;
  /** Human-readable name; `null` when it has none. */
  readonly name: string | null;
  /** What the agent does; `null` when it has none. */
  readonly description: string | null;
  /** RFC 3339 UTC, when it was added; `null` when the catalog does not know (a configuration file). */
  readonly created_at: string | null;
  /** `{base_url}/api/v1/agents/{agent_id}/run`: where runs are started (`POST`). */
  readonly run_url: string;
  /** `{base_url}/api/v1/agents/{agent_id}/mcp`: its MCP endpoint (Streamable HTTP). */
  readonly mcp_url: string;
}

/** `{base_url}/api/v1/agents/{agent_id}`, the id percent-encoded. Source: docs/CONTRACT.md "Discovery". */
export function agentUrlOf(baseUrl: string, agentId: string): string {
  return `${baseUrl}/api/v1/agents/${encodeURIComponent(agentId)}`;
}

/** Renders an agent for the wire; `baseUrl` without a trailing slash. */
export function agentViewOf(agent: Agent, baseUrl: string): AgentView {
  const url = agentUrlOf(baseUrl, agent.agentId);
  return {
    agent_id: agent.agentId,
    name: agent.name ?? null,
    description: agent.description ?? null,
    created_at: agent.createdAt?.toISOString() ?? null,
    run_url: `${url}/run`,
    mcp_url: `${url}/mcp`,
  };
}
