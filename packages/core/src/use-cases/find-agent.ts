import type { Agent } from '../domain/agent.js';
import { domainError, type DomainError } from '../domain/errors.js';
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
 * Finds an agent the caller's account can see: the check a door makes before it serves
 * an agent-scoped endpoint as a whole (the agent's MCP endpoint,
 * `{base_url}/api/v1/agents/{agent_id}/mcp`). Another account's agent answers `not_found`
 * exactly like a missing one (docs/decisions.md "Isolation between accounts"). Charges
 * nothing: the calls made through the endpoint are charged, each once.
 * Source: docs/CONTRACT.md "MCP".
 */
export class FindAgent {
  constructor(private readonly agents: AgentCatalog) {}

  /** @returns the agent, or `not_found`. */
  async execute(input: FindAgentInput): Promise<Result<Agent, DomainError<'not_found'>>> {
    const agent = input.agentId.length <= 128 ? await this.agents.findById(input.agentId) : undefined;
    if (agent === undefined || agent.accountId !== input.principal.accountId) return err(domainError('not_found', 'The agent was not found.'));
    return ok(agent);
  }
}
