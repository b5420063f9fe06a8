/**
 * A connected data system as the core sees it.
 *
 * Source: docs/api-spec.md "Connection" (identified by a UUID, has a type) and docs/CONTRACT.md
 * "Authentication" (belongs to exactly one account). Connection details (host, user,
 * password) are the writer adapter's business, never the core's.
 */
export interface Connection {
  /** UUID of the connection. */
  readonly connectionId: string;
  /** Account that owns it; other accounts see 404. */
  readonly accountId: string;
  /** Connection type, e.g. `sqlserver` or `postgresql`. */
  readonly type: string;
  /** Human-readable name, optional (shown by discovery, `GET /api/v1/connections`). */
  readonly name?: string;
  /** When it was added to the catalog; absent when the catalog does not know (a configuration file). */
  readonly createdAt?: Date;
}

/**
 * The only connection type that allows row writes.
 * Source: docs/api-spec.md "Connection", docs/CONTRACT.md "Row writes".
 */
export const WRITABLE_CONNECTION_TYPE = 'sqlserver';

/** True when row writes are allowed on connections of this type. */
export function allowsWrites(type: string): boolean {
  return type === WRITABLE_CONNECTION_TYPE;
}
