import type { Agent } from '../domain/agent.js';
import { domainError, type DomainError } from '../domain/errors.js';
import { MAX_RESOURCE_ID_LENGTH } from '../domain/limits.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';

/** Input of {@link FindAgent}. */
export interface FindAgentInput {
  /** The authenticated caller. */
  readonly principal: Principal;
  /** The agent (`agent_id` of the path). */
  readonly agentId: string;
}

/**
 * The agent `agentId` names when the caller's account owns it; otherwise `not_found`
 * with the one detail every operation gives ("The agent was not found."), the same for a
 * missing agent, another account's agent and an id no agent can have (empty or longer
 * than {@link MAX_RESOURCE_ID_LENGTH}: not looked up). The only place agent visibility
 * is decided: {@link FindAgent}, `GetAgent` and `StartRun` all ask it. Charges nothing.
 * Source: docs/CONTRACT.md "Isolation between accounts"; docs/decisions.md "Isolation between accounts".
 *
 * @throws DependencyUnavailableError when the catalog cannot be reached (HTTP 503).
 */
export function visibleAgent(agents: AgentCatalog, principal: Principal, agentId: string): Promise<Result<Agent, DomainError<'not_found'>>> {
  const visible = (agent: Agent | undefined): Result<Agent, DomainError<'not_found'>> =>
    agent === undefined || agent.accountId !== principal.accountId ? err(domainError('not_found', 'The agent was not found.')) : ok(agent);
  if (agentId.length === 0 || agentId.length > MAX_RESOURCE_ID_LENGTH) return Promise.resolve(visible(undefined));
  // `then`, not an async frame: one promise fewer a run start.
  try {
    return agents.findById(agentId).then(visible);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Finds an agent the caller's account can see: the check a door makes before it serves
 * an agent-scoped endpoint as a whole (the agent's MCP endpoint,
 * `{base_url}/api/v1/agents/{agent_id}/mcp`). Another account's agent answers `not_found`
 * exactly like a missing one ({@link visibleAgent}). Charges nothing: the calls made
 * through the endpoint are charged, each once.
 * Source: docs/CONTRACT.md "MCP".
 */
export class FindAgent {
  constructor(private readonly agents: AgentCatalog) {}

  /**
   * @returns the agent, or `not_found`.
   * @throws DependencyUnavailableError when the catalog cannot be reached (HTTP 503).
   */
  execute(input: FindAgentInput): Promise<Result<Agent, DomainError<'not_found'>>> {
    return visibleAgent(this.agents, input.principal, input.agentId);
  }
}
