import type { Agent } from '../domain/agent.js';

/**
 * Knows the agents of every account.
 *
 * Contract: `findById` resolves `undefined` for an unknown id; the use case checks the
 * account (another account's agent answers 404 like a missing one).
 */
export interface AgentCatalog {
  /**
   * @param agentId - agent id from the path.
   * @returns the agent, or `undefined` when there is none with that id.
   */
  findById(agentId: string): Promise<Agent | undefined>;
}
