import type { Agent, Connection, CredentialKind, RunEventType, StoredCredential } from '@svc/core';

/** An account of the catalog. */
export interface AccountRecord {
  readonly accountId: string;
  readonly createdAt: Date;
}

/**
 * A credential as the catalog holds it: the core's {@link StoredCredential} (the SHA-256
 * digest, never the secret) with its timestamps.
 */
export interface CredentialRecord extends StoredCredential {
  readonly createdAt: Date;
  /** When it was revoked; absent while it is live. A revoked credential is never found by digest. */
  readonly revokedAt?: Date;
}

/** A secret minted by the catalog, shown once: only its digest is stored. */
export interface IssuedSecret {
  /** The stored credential (its digest, not the secret). */
  readonly credential: CredentialRecord;
  /** The secret itself (`svc-…` or `svcpt_…`): print it once, it cannot be read back. */
  readonly secret: string;
}

/** An agent as the catalog holds it: the core's {@link Agent} with a description and its creation time. */
export interface CatalogAgent extends Agent {
  readonly description?: string;
  readonly createdAt: Date;
}

/** A connection as the catalog serves it to lookups: the core's {@link Connection}, never its database details. */
export interface CatalogConnection extends Connection {
  /** Human-readable name, optional. */
  readonly name?: string;
  readonly createdAt: Date;
}

/**
 * Where a connection's database password comes from: the name of an environment
 * variable of the API server, or the catalog (stored encrypted with AES-256-GCM).
 */
export type PasswordSource = { readonly env: string } | { readonly encrypted: true };

/** The SQL Server details of a connection as an administrator sees them: never the password. */
export interface SqlServerDetailsView {
  readonly host: string;
  /** TCP port, 1..65535. */
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: PasswordSource;
  readonly encrypt: boolean;
  readonly trustServerCertificate: boolean;
}

/** A connection as an administrator sees it: with its SQL Server details, never its password. */
export interface ConnectionRecord extends CatalogConnection {
  /** Present for a `sqlserver` connection to a real database; absent: in-memory demo tables. */
  readonly sqlserver?: SqlServerDetailsView;
}

/**
 * The SQL Server details of a connection with the password resolved, for the record
 * writer that opens its pool (the shape of adapter-sqlserver's
 * `SqlServerConnectionSettings`). Never log it, never send it.
 */
export interface SqlServerConnectionDetails {
  readonly host: string;
  /** TCP port, 1..65535. */
  readonly port: number;
  readonly database: string;
  readonly user: string;
  /** The password in clear (read from its environment variable, or decrypted). */
  readonly password: string;
  readonly encrypt: boolean;
  readonly trustServerCertificate: boolean;
}

/** A `credentials` row. */
export interface CredentialRow {
  id: string;
  account_id: string;
  kind: CredentialKind;
  sha256: string;
  scopes: string[];
  expires_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
}

/** An `agents` row. */
export interface AgentRow {
  id: string;
  account_id: string;
  name: string | null;
  description: string | null;
  created_at: Date;
}

/** A `connections` row. */
export interface ConnectionRow {
  id: string;
  account_id: string;
  type: string;
  name: string | null;
  created_at: Date;
  host: string | null;
  port: number | null;
  database: string | null;
  user_name: string | null;
  password_env: string | null;
  password_encrypted: string | null;
  encrypt: boolean | null;
  trust_server_certificate: boolean | null;
}

/** Columns of `connections` that lookups read (no details). */
export const CONNECTION_COLUMNS = ['id', 'account_id', 'type', 'name', 'created_at'] as const;

/** A frozen {@link CredentialRecord} of a row (answers are shared through the cache). */
export function credentialOf(row: CredentialRow): CredentialRecord {
  return Object.freeze({
    credentialId: row.id,
    accountId: row.account_id,
    kind: row.kind,
    sha256: row.sha256,
    scopes: Object.freeze([...row.scopes]),
    ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
    createdAt: row.created_at,
    ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at }),
  });
}

/** A frozen {@link CatalogAgent} of a row. */
export function agentOf(row: AgentRow): CatalogAgent {
  return Object.freeze({
    agentId: row.id,
    accountId: row.account_id,
    ...(row.name === null ? {} : { name: row.name }),
    ...(row.description === null ? {} : { description: row.description }),
    createdAt: row.created_at,
  });
}

/** A frozen {@link CatalogConnection} of a row. */
export function connectionOf(row: Pick<ConnectionRow, (typeof CONNECTION_COLUMNS)[number]>): CatalogConnection {
  return Object.freeze({
    connectionId: row.id,
    accountId: row.account_id,
    type: row.type,
    ...(row.name === null ? {} : { name: row.name }),
    createdAt: row.created_at,
  });
}

/** A frozen {@link ConnectionRecord} of a row: details without the password. */
export function connectionRecordOf(row: ConnectionRow): ConnectionRecord {
  const base = connectionOf(row);
  if (row.host === null) return base;
  const password: PasswordSource = row.password_env !== null ? { env: row.password_env } : { encrypted: true };
  return Object.freeze({
    ...base,
    sqlserver: Object.freeze({
      host: row.host,
      port: row.port ?? 0,
      database: row.database ?? '',
      user: row.user_name ?? '',
      password: Object.freeze(password),
      encrypt: row.encrypt ?? true,
      trustServerCertificate: row.trust_server_certificate ?? false,
    }),
  });
}

/**
 * A webhook endpoint as an administrator sees it: never its signing secret, only where it
 * comes from. Source: docs/decisions.md "Webhooks" (endpoints in the PostgreSQL catalog).
 */
export interface WebhookEndpointRecord {
  /** Unique across the whole catalog (docs/CONTRACT.md "Isolation between accounts"). */
  readonly endpointId: string;
  readonly accountId: string;
  /** `http:` or `https:` URL the deliveries are POSTed to. */
  readonly url: string;
  /** Event types delivered to it; never empty. */
  readonly events: readonly RunEventType[];
  /** `{ env }`: the server reads the secret from that variable; `{ encrypted: true }`: AES-256-GCM in the catalog. */
  readonly secret: PasswordSource;
  readonly createdAt: Date;
}

/** A `webhook_endpoints` row. */
export interface WebhookEndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret_env: string | null;
  secret_encrypted: string | null;
  events: RunEventType[];
  created_at: Date;
}

/** A frozen {@link WebhookEndpointRecord} of a row: the secret's source, never the secret. */
export function webhookEndpointRecordOf(row: WebhookEndpointRow): WebhookEndpointRecord {
  const secret: PasswordSource = row.secret_env !== null ? { env: row.secret_env } : { encrypted: true };
  return Object.freeze({
    endpointId: row.id,
    accountId: row.account_id,
    url: row.url,
    events: Object.freeze([...row.events]),
    secret: Object.freeze(secret),
    createdAt: row.created_at,
  });
}
