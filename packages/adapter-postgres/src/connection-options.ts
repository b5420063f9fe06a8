import knex, { type Knex } from 'knex';
import type { ClientConfig } from 'pg';
import { CatalogInvalidError } from './errors.js';
import { POOL_APPLICATION_NAME, type PostgresConnection } from './settings.js';

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
