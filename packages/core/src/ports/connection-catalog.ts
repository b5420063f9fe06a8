import type { Connection } from '../domain/connection.js';

/**
 * Knows the connections of every account.
 *
 * Contract: `findById` resolves `undefined` for an unknown id; visibility to the caller
 * is checked by the use case (another account's connection answers 404 exactly like a
 * missing one, docs/CONTRACT.md "Authentication").
 */
export interface ConnectionCatalog {
  /**
   * @param connectionId - UUID from the path.
   * @returns the connection, or `undefined` when there is none with that id.
   */
  findById(connectionId: string): Promise<Connection | undefined>;
}
