import type { DomainError } from '../domain/errors.js';
import type { ListPage, PageCursors, PageQuery } from '../domain/page.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import { connectionViewOf, type ConnectionView, type ConnectionViewSettings } from './connection-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link ListConnections}. */
export interface ListConnectionsInput {
  /** The authenticated caller (an API key: OAuth tokens are refused before, docs/CONTRACT.md "Authentication"). */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** `limit` and `cursor` as sent; absent: the first page, of 20 connections (`DEFAULT_PAGE_LIMIT`). */
  readonly page?: PageQuery;
}

/** Codes {@link ListConnections} can produce. */
export type ListConnectionsErrorCode = 'validation_failed' | 'invalid_cursor' | 'rate_limited';

/**
 * Lists the caller's connections: `GET /api/v1/connections`. Charges the request first,
 * then reads `limit` (1..100, default 20) and `cursor` (400 `validation_failed` or, for a
 * cursor not signed for this list and account, `invalid_cursor`, naming the parameter),
 * then one page of the account's connections in ascending `connection_id` order, never
 * their database details. Another account's connections are never listed. `nextCursor` is
 * the signed cursor of the catalog's position of the page's last connection when more
 * follow (the HTTP adapter puts it in `Link: rel="next"`: the answer is an unwrapped
 * array, docs/api-spec.md convention 3, so it has no `next_cursor`).
 * Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery: agents and connections".
 *
 * @throws DependencyUnavailableError when the catalog cannot be reached (HTTP 503).
 */
export class ListConnections {
  constructor(
    private readonly connections: ConnectionCatalog,
    private readonly settings: ConnectionViewSettings,
    private readonly cursors: PageCursors,
  ) {}

  /** @returns a page of connection views, or an error with its code. */
  async execute(input: ListConnectionsInput): Promise<Result<ListPage<ConnectionView>, DomainError<ListConnectionsErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const binding = JSON.stringify(['connections', input.principal.accountId]);
    const page = this.cursors.read(input.page ?? {}, binding);
    if (!page.ok) return page;
    const found = await this.connections.listByAccount(input.principal.accountId, page.value);
    return ok(this.cursors.pageOf(found, binding, (connection) => connectionViewOf(connection, this.settings)));
  }
}
