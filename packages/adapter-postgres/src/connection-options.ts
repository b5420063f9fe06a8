import knex, { type Knex } from 'knex';
import type { ClientConfig } from 'pg';
import { CatalogInvalidError } from './errors.js';

/**
 * Where the catalog database is: a `postgres://user:password@host:port/database`
 * connection string, or its parts. Fields left out fall back to libpq's environment
 * variables as pg reads them (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`).
 * Never logged and never part of an error message.
 */
export type PostgresConnection =
  | string
  | {
      readonly host?: string;
      /** TCP port, 1..65535 (PostgreSQL's default 5432). */
      readonly port?: number;
      readonly database?: string;
      readonly user?: string;
      readonly password?: string;
    };

/**
 * The default bound of every catalog call, in milliseconds: the API's default
 * `dependency_timeout_ms` (docs/CONTRACT.md "Dependencies and faults": a lost
 * dependency answers 503 within it).
 */
export const DEFAULT_CATALOG_TIMEOUT_MS = 2_000;

/** `application_name` of the pool's connections (seen in `pg_stat_activity`). */
export const POOL_APPLICATION_NAME = 'svc-catalog';
/** `application_name` of the LISTEN connection. */
export const LISTENER_APPLICATION_NAME = 'svc-catalog-listener';

/** Checks an option that is a positive safe integer (a bound in milliseconds, a size). @throws CatalogInvalidError naming `field`. */
export function positiveInteger(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new CatalogInvalidError(field, 'must be a positive integer');
  return value;
}

/**
 * pg client settings with every timeout bounded by `timeoutMs` (milliseconds):
 * - `connectionTimeoutMillis`: TCP connect + startup + login;
 * - `query_timeout`: pg gives up waiting for an answer (a silent, paused server);
 * - `statement_timeout`: the server cancels a statement running longer (a lock wait);
 * - `keepAlive`: the kernel notices a peer that vanished without a FIN on idle sockets.
 */
export function pgClientConfig(connection: PostgresConnection, timeoutMs: number, applicationName: string): ClientConfig {
  const base: ClientConfig = typeof connection === 'string' ? { connectionString: connection } : { ...connection };
  if (typeof connection !== 'string' && connection.port !== undefined && (!Number.isInteger(connection.port) || connection.port < 1 || connection.port > 65_535)) {
    throw new CatalogInvalidError('connection.port', 'must be an integer 1..65535');
  }
  return {
    ...base,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    keepAlive: true,
    application_name: applicationName,
  };
}

// knex's own warnings may quote driver messages, which name the host and user: this
// package reports failures itself, safely (errors.ts).
const quietKnexLog: Knex.Logger = {
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  deprecate: () => undefined,
};

/**
 * A knex instance on the `pg` driver whose every wait is bounded by `timeoutMs`
 * (milliseconds): pool acquire (a full pool, or a connection being made), connection
 * creation, and each query ({@link pgClientConfig}). `poolMax` connections at most, none
 * kept open before the first query.
 */
export function createKnex(connection: PostgresConnection, timeoutMs: number, poolMax: number): Knex {
  return knex({
    client: 'pg',
    connection: pgClientConfig(connection, timeoutMs, POOL_APPLICATION_NAME) as Knex.PgConnectionConfig,
    pool: {
      min: 0,
      max: poolMax,
      // A connection idle for 30 s is closed: the catalog is mostly served from the cache.
      idleTimeoutMillis: 30_000,
      createTimeoutMillis: timeoutMs,
      acquireTimeoutMillis: timeoutMs,
      // Closing a connection to a silent server must not hold close() for tarn's 5 s default.
      destroyTimeoutMillis: Math.min(timeoutMs, 1_000),
      propagateCreateError: true,
      // A connection still waiting for the answer to a query abandoned at its timeout (a
      // silent server) would make the next query wait behind it: it is closed instead of
      // handed out again. `readyForQuery` is pg's own flag (pg 8.23 client.js).
      validate: (connection: unknown) => (connection as { readyForQuery?: unknown }).readyForQuery !== false,
    },
    acquireConnectionTimeout: timeoutMs,
    log: quietKnexLog,
  });
}
