import type { Connection } from '../domain/connection.js';
import type { Page, PageRequest } from '../domain/page.js';

/**
 * Knows the connections of every account.
 *
 * Contract: `findById` resolves `undefined` for an unknown id; visibility to the caller
 * is checked by the use case (another account's connection answers 404 exactly like a
 * missing one, docs/CONTRACT.md "Authentication"). `listByAccount` answers only that
 * account's connections. Both reject only when the catalog itself cannot be reached (the
 * core's `DependencyUnavailableError`: HTTP 503).
 */
export interface ConnectionCatalog {
  /**
   * @param connectionId - UUID from the path.
   * @returns the connection, or `undefined` when there is none with that id.
   */
  findById(connectionId: string): Promise<Connection | undefined>;

  /**
   * One page of the connections of `accountId`, in ascending order of the lower-case
   * `connectionId` (UUIDs: the same as their byte order). `page.after` is such a
   * lower-case UUID: the page starts with the first connection after it (it need not
   * exist any more). `next` is the lower-case id of the page's last connection when more
   * follow, absent on the last page. Connection details (host, user, password) are never
   * part of a {@link Connection}.
   * Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery: agents and connections".
   *
   * @param accountId - the caller's account; an account without connections (or unknown) gives an empty page.
   * @param page - at most `page.limit` connections, after `page.after`.
   */
  listByAccount(accountId: string, page: PageRequest): Promise<Page<Connection>>;
}
