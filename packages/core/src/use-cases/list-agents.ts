import type { DomainError } from '../domain/errors.js';
import type { ListPage, PageCursors, PageQuery } from '../domain/page.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import { agentViewOf, type AgentView } from './agent-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link ListAgents}. */
export interface ListAgentsInput {
  /** The authenticated caller (an API key: OAuth tokens are refused before, docs/CONTRACT.md "Authentication"). */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** `limit` and `cursor` as sent; absent: the first page, of 20 agents (`DEFAULT_PAGE_LIMIT`). */
  readonly page?: PageQuery;
}

/** Codes {@link ListAgents} can produce. */
export type ListAgentsErrorCode = 'validation_failed' | 'invalid_cursor' | 'rate_limited';

/**
 * Lists the caller's agents: `GET /api/v1/agents`. Charges the request first, then reads
 * `limit` (1..100, default 20) and `cursor` (400 `validation_failed` or, for a cursor not
 * signed for this list and account, `invalid_cursor`, naming the parameter), then one page
 * of the account's agents in ascending `agent_id` order. Another account's agents are
 * never listed. `nextCursor` is the signed cursor of the catalog's position of the page's
 * last agent when more follow (the HTTP adapter puts it in `Link: rel="next"` and
 * `next_cursor`).
 * Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery: agents and connections".
 *
 * @throws DependencyUnavailableError when the catalog cannot be reached (HTTP 503).
 */
export class ListAgents {
  constructor(
    private readonly agents: AgentCatalog,
    private readonly settings: { readonly baseUrl: string },
    private readonly cursors: PageCursors,
  ) {}

  /** @returns a page of agent views, or an error with its code. */
  async execute(input: ListAgentsInput): Promise<Result<ListPage<AgentView>, DomainError<ListAgentsErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const binding = JSON.stringify(['agents', input.principal.accountId]);
    const page = this.cursors.read(input.page ?? {}, binding);
    if (!page.ok) return page;
    const found = await this.agents.listByAccount(input.principal.accountId, page.value);
    return ok(this.cursors.pageOf(found, binding, (agent) => agentViewOf(agent, this.settings.baseUrl)));
  }
}
