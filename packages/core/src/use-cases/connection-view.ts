import { allowsWrites, type Connection } from '../domain/connection.js';

/**
 * A connection as discovery answers it (`GET /api/v1/connections`,
 * `GET /api/v1/connections/{connection_id}`, and the MCP adapter's tools): every member
 * always present, `null` when unknown. Never a password, user name or host: the core's
 * {@link Connection} holds none. Source: docs/CONTRACT.md "Discovery"; docs/decisions.md
 * "Discovery: agents and connections".
 */
export interface ConnectionView {
  /** The connection's UUID, lower case. */
  readonly connection_id: string;
  /** Its type, e.g. `sqlserver` or `postgresql`. */
  readonly type: string;
  /** Human-readable name; `null` when it has none. */
  readonly name: string | null;
  /** True when row writes are allowed: only for type `sqlserver` (docs/api-spec.md "Connection"). */
  readonly writable: boolean;
  /**
   * The address the service's database traffic leaves from on the egress route
   * (`X-Svc-Egress: true`, or the `{egress_url}` listener), for the customer's firewall
   * allowlist: the server's configured egress source address, the same for every
   * connection; `null` when none is configured (the operating system picks one).
   */
  readonly egress_source_address: string | null;
  /** `{base_url}/api/v1/connections/{connection_id}/records`: row insert (`POST`) and update (`PATCH`). */
  readonly records_url: string;
  /** RFC 3339 UTC, when it was added; `null` when the catalog does not know (a configuration file). */
  readonly created_at: string | null;
}

/** What a {@link ConnectionView} needs beyond the connection: the server's settings. */
export interface ConnectionViewSettings {
  /** `{base_url}`, without a trailing slash. */
  readonly baseUrl: string;
  /** The configured egress source address (an IP address); absent: none configured. */
  readonly egressSourceAddress?: string;
}

/** Renders a connection for the wire. */
export function connectionViewOf(connection: Connection, settings: ConnectionViewSettings): ConnectionView {
  const id = connection.connectionId.toLowerCase();
  return {
    connection_id: id,
    type: connection.type,
    name: connection.name ?? null,
    writable: allowsWrites(connection.type),
    egress_source_address: settings.egressSourceAddress ?? null,
    records_url: `${settings.baseUrl}/api/v1/connections/${id}/records`,
    created_at: connection.createdAt?.toISOString() ?? null,
  };
}
