import type { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import { agentViewOf, type AgentView } from './agent-view.js';
import { visibleAgent } from './find-agent.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link GetAgent}. */
export interface GetAgentInput {
  /** The authenticated caller (an API key). */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** `agent_id` from the path. */
  readonly agentId: string;
}

/** Codes {@link GetAgent} can produce. */
export type GetAgentErrorCode = 'not_found' | 'rate_limited';

/**
 * Reads one of the caller's agents: `GET /api/v1/agents/{agent_id}`. Charges the request
 * first, then finds the agent as `FindAgent` does ({@link visibleAgent}: another account's
 * agent answers `not_found` exactly like a missing one, with the detail run start gives).
 * Source: docs/CONTRACT.md "Discovery", "Isolation between accounts".
 *
 * @throws DependencyUnavailableError when the catalog cannot be reached (HTTP 503).
 */
export class GetAgent {
  constructor(
    private readonly agents: AgentCatalog,
    private readonly settings: { readonly baseUrl: string },
  ) {}

  /** @returns the agent view (answered 200), or an error with its code. */
  async execute(input: GetAgentInput): Promise<Result<AgentView, DomainError<GetAgentErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const agent = await visibleAgent(this.agents, input.principal, input.agentId);
    return agent.ok ? ok(agentViewOf(agent.value, this.settings.baseUrl)) : agent;
  }
}
