import { isIP } from 'node:net';
import type { Logger } from '@svc/core';

/**
 * How to reach one customer database (one `sqlserver` connection of the catalog).
 *
 * Source: docs/CONTRACT.md "Row writes" (only `sqlserver` connections are written to) and
 * docs/api-spec.md "Connection" (connection details are not part of the public API: they
 * live in the server's configuration, never in a response or a log line).
 */
export interface SqlServerConnectionSettings {
  /** Host name or IP address of the SQL Server. Never logged, never sent to a client. */
  readonly host: string;
  /** TCP port of the SQL Server instance, 1..65535 (usually 1433). */
  readonly port: number;
  /** Database the writes go to (the login's default is not relied on). */
  readonly database: string;
  /** SQL Server login name (SQL authentication). Never logged. */
  readonly user: string;
  /** Password of {@link user}. Never logged, never part of an error. */
  readonly password: string;
  /** Ask for TLS (TDS 7.4 PRELOGIN encryption). */
  readonly encrypt: boolean;
  /** Accept the server's certificate without checking its chain (self-signed servers). */
  readonly trustServerCertificate: boolean;
}

/** Bounds of the pool of one (connection, route) pair. */
export interface SqlServerPoolSettings {
  /** Most TCP connections open at once to one database on one route. Default 10. */
  readonly max?: number;
  /** A connection unused for this many milliseconds is closed. Default 30000 ms. */
  readonly idleTimeoutMs?: number;
}

/**
 * Settings of {@link SqlServerRecordWriter}, parsed once at start by the composition
 * root (docs/ARCHITECTURE.md "Rules").
 */
export interface SqlServerRecordWriterSettings {
  /**
   * Connection id (UUID, compared case-insensitively) → how to reach its database. A
   * write to a connection id missing here is a bug of the composition root: the writer
   * rejects it.
   */
  readonly connections: ReadonlyMap<string, SqlServerConnectionSettings> | Readonly<Record<string, SqlServerConnectionSettings>>;
  /**
   * IPv4 or IPv6 address of this host that `route: 'egress'` traffic leaves from, the
   * stable address customers allowlist (docs/CONTRACT.md "Row writes", `X-Svc-Egress`).
   * Absent: egress traffic leaves from the operating system's default source address
   * (a warning is logged once), like the default route, but on its own pool.
   */
  readonly egressSourceAddress?: string;
  /** Time allowed to open a TCP connection and log in, in milliseconds. Default 15000 ms. */
  readonly connectTimeoutMs?: number;
  /** Time allowed for one statement batch to answer, in milliseconds. Default 30000 ms. */
  readonly requestTimeoutMs?: number;
  /** Pool bounds, applied to every (connection, route) pool. */
  readonly pool?: SqlServerPoolSettings;
  /** Where failures are logged (no host, user, password or SQL text). Default: silent. */
  readonly logger?: Logger;
}

/** Settings with every default applied and every bound checked (internal to the package). */
export interface ResolvedSqlServerSettings {
  /** Lower-cased connection id → how to reach its database. */
  readonly connections: ReadonlyMap<string, SqlServerConnectionSettings>;
  /** Source address of the egress route; `undefined`: the OS default. */
  readonly egressSourceAddress: string | undefined;
  /** Milliseconds. */
  readonly connectTimeoutMs: number;
  /** Milliseconds. */
  readonly requestTimeoutMs: number;
  /** Connections per (connection, route) pool. */
  readonly poolMax: number;
  /** Milliseconds. */
  readonly poolIdleTimeoutMs: number;
}

/** Default of {@link SqlServerRecordWriterSettings.connectTimeoutMs}, in milliseconds. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
/** Default of {@link SqlServerRecordWriterSettings.requestTimeoutMs}, in milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Default of {@link SqlServerPoolSettings.max}. */
export const DEFAULT_POOL_MAX = 10;
/** Default of {@link SqlServerPoolSettings.idleTimeoutMs}, in milliseconds. */
export const DEFAULT_POOL_IDLE_TIMEOUT_MS = 30_000;

function positiveInteger(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${field} must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * Applies defaults and checks bounds.
 *
 * @throws RangeError naming the field (never its value when it is a secret) when a
 *   number is out of range, a port is not 1..65535 or the egress address is not an IP.
 */
export function resolveSettings(settings: SqlServerRecordWriterSettings): ResolvedSqlServerSettings {
  const entries = settings.connections instanceof Map ? [...settings.connections.entries()] : Object.entries(settings.connections);
  const connections = new Map<string, SqlServerConnectionSettings>();
  for (const [id, connection] of entries) {
    if (!Number.isInteger(connection.port) || connection.port < 1 || connection.port > 65_535) {
      throw new RangeError(`connections[${id}].port must be an integer 1..65535`);
    }
    connections.set(id.toLowerCase(), connection);
  }
  const egress = settings.egressSourceAddress;
  if (egress !== undefined && isIP(egress) === 0) throw new RangeError('egressSourceAddress must be an IPv4 or IPv6 address');
  return {
    connections,
    egressSourceAddress: egress,
    connectTimeoutMs: positiveInteger(settings.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs'),
    requestTimeoutMs: positiveInteger(settings.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, 'requestTimeoutMs'),
    poolMax: positiveInteger(settings.pool?.max, DEFAULT_POOL_MAX, 'pool.max'),
    poolIdleTimeoutMs: positiveInteger(settings.pool?.idleTimeoutMs, DEFAULT_POOL_IDLE_TIMEOUT_MS, 'pool.idleTimeoutMs'),
  };
}
