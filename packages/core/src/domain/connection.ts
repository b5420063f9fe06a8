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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

/**
 * True when `value` has the form of a connection id: a UUID written 8-4-4-4-12 in
 * hexadecimal digits, any case (RFC 9562 §4; no version check). A connection is looked
 * up by the lower-case form; anything else names no connection and is never looked up.
 * Source: docs/api-spec.md "Connection" (identified by a UUID).
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
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
