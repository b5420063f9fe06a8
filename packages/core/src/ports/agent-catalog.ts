import type { Agent } from '../domain/agent.js';
import type { Page, PageRequest } from '../domain/page.js';

/**
 * Knows the agents of every account.
 *
 * Contract: `findById` resolves `undefined` for an unknown id; the use case checks the
 * account (another account's agent answers 404 like a missing one). `listByAccount`
 * answers only that account's agents. Both reject only when the catalog itself cannot
 * be reached (the core's `DependencyUnavailableError`: HTTP 503).
 */
export interface AgentCatalog {
  /**
   * @param agentId - agent id from the path.
   * @returns the agent, or `undefined` when there is none with that id.
   */
  findById(agentId: string): Promise<Agent | undefined>;

  /**
   * One page of the agents of `accountId`, in ascending order of `agentId` (compared as
   * JavaScript compares strings, UTF-16 code unit by code unit: for the ASCII ids of a
   * catalog, byte order). `page.after` is an `agentId`: the page starts with the first
   * agent whose id sorts after it (it need not exist any more). `next` is the id of the
   * page's last agent when more follow, absent on the last page.
   * Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery: agents and connections".
   *
   * @param accountId - the caller's account; an account without agents (or unknown) gives an empty page.
   * @param page - at most `page.limit` agents, after `page.after`.
   */
  listByAccount(accountId: string, page: PageRequest): Promise<Page<Agent>>;
}
