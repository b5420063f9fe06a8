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

