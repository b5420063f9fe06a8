/**
 * `@svc/adapter-sqlserver`: the core's `RecordWriter` on SQL Server (knex pools, tedious
 * connections), with the egress route and the SQL Server error mapping.
 * Its tests run tedious against the scripted TDS server of `@svc/tds-server` (tools/tds-server).
 */
export { SqlServerRecordWriter, type SqlServerPoolStats } from './sqlserver-record-writer.js';
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_POOL_IDLE_TIMEOUT_MS,
  DEFAULT_POOL_MAX,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type SqlServerConnectionSettings,
  type SqlServerPoolSettings,
  type SqlServerRecordWriterSettings,
} from './sqlserver-settings.js';
export { UnmappedSqlServerError, SQL_ERROR } from './error-mapping.js';
export { quoteIdentifier } from './statements.js';
