/**
 * `@svc/adapter-postgres`: the catalog of the svc core on PostgreSQL (knex + pg) —
 * accounts, credentials (SHA-256 digests only), agents, connections and webhook endpoints, shared by every
 * instance of the API server and kept current in each by LISTEN/NOTIFY.
 */
export { PostgresCatalog, CATALOG_DEFAULTS, type PostgresCatalogOptions, type CatalogStats } from './postgres-catalog.js';
export type {
  CatalogAdmin,
  NewApiKey,
  NewAccessToken,
  NewAgent,
  NewConnection,
  NewSqlServerDetails,
  NewPassword,
  RemovedAccount,
  AccountFilter,
  AccountSummary,
  ReplacedDigest,
  NewWebhookEndpoint,
  NewWebhookSecret,
  AddedWebhookEndpoint,
} from './catalog-admin.js';
export {
  migrateCatalog,
  CATALOG_MIGRATIONS,
  DEFAULT_MIGRATE_TIMEOUT_MS,
  type MigrateCatalogOptions,
  type MigrationOutcome,
} from './migrations.js';
export { DEFAULT_CATALOG_TIMEOUT_MS, type PostgresConnection } from './settings.js';
export { DEFAULT_CATALOG_SCHEMA, channelOf } from './schema.js';
export { CATALOG_KEY_ENV, newSecret, type EncryptionKeySource } from './secrets.js';
export {
  CATALOG_DEPENDENCY,
  CatalogError,
  CatalogNotFoundError,
  CatalogDuplicateError,
  CatalogInUseError,
  CatalogInvalidError,
  CatalogNotMigratedError,
  CatalogSchemaTooNewError,
  type CatalogErrorCode,
  type CatalogEntity,
  type CatalogOwner,
  type OwnedEntries,
} from './errors.js';
export type {
  AccountRecord,
  CredentialRecord,
  IssuedSecret,
  CatalogAgent,
  CatalogConnection,
  ConnectionRecord,
  PasswordSource,
  SqlServerDetailsView,
  SqlServerConnectionDetails,
  WebhookEndpointRecord,
} from './records.js';
