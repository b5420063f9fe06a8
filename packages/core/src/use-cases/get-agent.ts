import { domainError, type DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import { agentViewOf, type AgentView } from './agent-view.js';
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

/** Longest agent id looked up; a longer one cannot exist (the catalogs allow 1..128 characters). */
const MAX_AGENT_ID_LENGTH = 128;

/**
 * Reads one of the caller's agents: `GET /api/v1/agents/{agent_id}`. Charges the request
 * first; another account's agent answers `not_found` exactly like a missing one (same
 * detail, the one run start gives).
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
    const agent = input.agentId.length > 0 && input.agentId.length <= MAX_AGENT_ID_LENGTH ? await this.agents.findById(input.agentId) : undefined;
    if (agent === undefined || agent.accountId !== input.principal.accountId) return err(domainError('not_found', 'The agent was not found.'));
    return ok(agentViewOf(agent, this.settings.baseUrl));
  }
}
