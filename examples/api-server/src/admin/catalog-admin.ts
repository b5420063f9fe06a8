/**
 * What the admin CLI (`svc-server`) needs from a catalog: the accounts, their credentials
 * (SHA-256 digests only), agents and connections, read and changed one operation at a
 * time. Implementations: `YamlCatalogAdmin` (the configuration file, edited in place) and
 * `PostgresCatalogAdmin` (`catalog.postgres`: issue 13 part 1), selected by the configuration.
 */
import type { SqlServerDetails } from '../settings.js';

/** The two kinds of credential (docs/CONTRACT.md "Authentication"); their ids share one space. */
export type CredentialKind = 'api_key' | 'oauth_token';

/** An account and how much it owns. */
export interface AccountEntry {
  readonly id: string;
  readonly apiKeys: number;
  readonly oauthTokens: number;
  readonly agents: number;
  readonly connections: number;
}

/** A credential as the catalog holds it: never its secret, only the secret's SHA-256 digest. */
export interface CredentialEntry {
  readonly kind: CredentialKind;
  /** Unique across every account and both kinds (docs/CONTRACT.md "Isolation between accounts"). */
  readonly id: string;
  readonly accountId: string;
  /** Lower-case hex SHA-256 digest of the secret (64 characters). */
  readonly sha256: string;
  /** OAuth scopes (`runs:write`, `runs:read`); empty for an API key. */
  readonly scopes: readonly string[];
  /** Absent: the credential does not expire. */
  readonly expiresAt?: Date;
}

/** An agent of an account. */
export interface AgentEntry {
  /** Unique across every account. */
  readonly id: string;
  readonly accountId: string;
  readonly name?: string;
}

/** A connection of an account. */
export interface ConnectionEntry {
  /** A UUID, lower case, unique across every account. */
  readonly id: string;
  readonly accountId: string;
  /** `sqlserver`, `postgresql`, ... */
  readonly type: string;
  /** For `sqlserver`: the database; the password stays in the environment variable it names. Absent: in-memory demo tables. */
  readonly sqlserver?: SqlServerDetails;
}

/** A webhook endpoint of an account, as the admin CLI lists it: never its signing secret. */
export interface WebhookEndpointEntry {
  /** Unique across the whole catalog (docs/CONTRACT.md "Isolation between accounts"). */
  readonly id: string;
  readonly accountId: string;
  /** `http:` or `https:` URL the deliveries are POSTed to. */
  readonly url: string;
  /** Run event types delivered (core's `RUN_EVENT_TYPES`). */
  readonly events: readonly string[];
  /** The environment variable the server reads the secret from; absent: the secret is stored encrypted in the catalog. */
  readonly secretEnv?: string;
}

/** Input of {@link CatalogAdmin.addWebhookEndpoint}. */
export interface NewWebhookEndpointEntry {
  readonly id: string;
  readonly accountId: string;
  readonly url: string;
  /** Absent: core's `FINAL_RUN_EVENT_TYPES`. */
  readonly events?: readonly string[];
  /** `{ env }`: the server's variable holding the secret; `{ value }`: the secret (`whsec_…`), stored encrypted with the catalog key. */
  readonly secret: { readonly env: string } | { readonly value: string };
}

/** What a valid catalog holds, counted. */
export interface CatalogSummary {
  readonly accounts: number;
  readonly apiKeys: number;
  readonly oauthTokens: number;
  readonly agents: number;
  readonly connections: number;
}

/** What {@link CatalogAdmin.migrate} did. */
export interface MigrationReport {
  /** Names of the migrations applied now, in order; empty when there was nothing to do. */
  readonly applied: readonly string[];
}

/**
 * Why a catalog operation failed; the CLI turns each into its exit code.
 * - `not_found`: the id (or the account named) does not exist;
 * - `conflict`: the change would define an id or a digest twice (the message names both
 *   places), the account still owns resources, or the catalog changed under the change;
 * - `invalid`: the catalog, or the catalog after the change, does not validate (the
 *   message names the field);
 * - `unavailable`: the catalog cannot be read or written (file missing or not writable,
 *   database unreachable);
 * - `unsupported`: this catalog does not do that operation (the message says what to do
 *   instead, e.g. edit the YAML file).
 */
export type CatalogAdminErrorKind = 'not_found' | 'conflict' | 'invalid' | 'unavailable' | 'unsupported';

/** A catalog operation that failed for a reason the operator can act on; `message` is one line. */
export class CatalogAdminError extends Error {
  override readonly name = 'CatalogAdminError';

  /**
   * @param kind - why it failed.
   * @param message - one line naming what and where; never a secret.
   */
  constructor(
    readonly kind: CatalogAdminErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The catalog as the admin CLI changes it. Every method is async (a database may stand
 * behind it) and every change is whole or nothing: validated as the server validates its
 * configuration (`loadSettings`), then stored. Ids are unique across the whole catalog
 * (docs/CONTRACT.md "Isolation between accounts"), so the methods that name an existing
 * resource take its id alone.
 *
 * Errors: {@link CatalogAdminError} for what the operator can act on (see
 * {@link CatalogAdminErrorKind}); anything else thrown is a bug.
 */
export interface CatalogAdmin {
  /** What the catalog is, for messages: e.g. `the YAML file /etc/svc/config.yaml`. */
  readonly description: string;

  /** Every account, in catalog order. */
  listAccounts(): Promise<readonly AccountEntry[]>;
  /** Adds an empty account. @throws CatalogAdminError `conflict` when the id exists. */
  addAccount(id: string): Promise<void>;
  /**
   * Removes an account. Without `cascade`, an account that still owns credentials, agents or
   * connections is refused (`conflict`); with it they go too, so its credentials stop working.
   * @throws CatalogAdminError `not_found`, `conflict`.
   */
  removeAccount(id: string, options: { readonly cascade: boolean }): Promise<void>;

  /** Credentials of `kind`, of one account or (absent) all. @throws CatalogAdminError `not_found` for an unknown account. */
  listCredentials(kind: CredentialKind, accountId?: string): Promise<readonly CredentialEntry[]>;
  /** Adds a credential (its digest only). @throws CatalogAdminError `not_found` (account), `conflict` (id or digest exists). */
  addCredential(credential: CredentialEntry): Promise<void>;
  /**
   * Replaces a credential's digest, keeping its id, account and scopes (its rate-limit window
   * is keyed by id, so it carries over): the old secret stops working, the new one works.
   * `expiresAt` given replaces the expiry; absent keeps it.
   * @returns the credential as stored now.
   * @throws CatalogAdminError `not_found` (no credential of `kind` with this id), `conflict` (digest exists).
   */
  rotateCredential(kind: CredentialKind, id: string, sha256: string, expiresAt?: Date): Promise<CredentialEntry>;
  /**
   * Revokes a credential: it authenticates nothing afterwards.
   * @returns the credential revoked.
   * @throws CatalogAdminError `not_found` (no credential of `kind` with this id).
   */
  revokeCredential(kind: CredentialKind, id: string): Promise<CredentialEntry>;

  /** Agents of one account or (absent) all. @throws CatalogAdminError `not_found` for an unknown account. */
  listAgents(accountId?: string): Promise<readonly AgentEntry[]>;
  /** @throws CatalogAdminError `not_found` (account), `conflict` (id exists). */
  addAgent(agent: AgentEntry): Promise<void>;
  /** @returns the agent removed. @throws CatalogAdminError `not_found`. */
  removeAgent(id: string): Promise<AgentEntry>;

  /** Connections of one account or (absent) all. @throws CatalogAdminError `not_found` for an unknown account. */
  listConnections(accountId?: string): Promise<readonly ConnectionEntry[]>;
  /** @throws CatalogAdminError `not_found` (account), `conflict` (id exists, in any letter case). */
  addConnection(connection: ConnectionEntry): Promise<void>;
  /** @returns the connection removed. @throws CatalogAdminError `not_found`. */
  removeConnection(id: string): Promise<ConnectionEntry>;

  /**
   * Webhook endpoints of one account or (absent) all, never their secrets.
   * @throws CatalogAdminError `not_found` for an unknown account; `unsupported` where the catalog does not hold endpoints this way.
   */
  listWebhookEndpoints(accountId?: string): Promise<readonly WebhookEndpointEntry[]>;
  /**
   * Adds a webhook endpoint (docs/decisions.md "Webhooks").
   * @throws CatalogAdminError `not_found` (account), `conflict` (id exists, naming its holder),
   *   `invalid` (a bad field named; the catalog key missing for a secret to encrypt), `unsupported`.
   */
  addWebhookEndpoint(endpoint: NewWebhookEndpointEntry): Promise<void>;
  /** @returns the endpoint removed. @throws CatalogAdminError `not_found`, `unsupported`. */
  removeWebhookEndpoint(id: string): Promise<WebhookEndpointEntry>;

  /**
   * Validates the whole configuration as the server does at start.
   * @throws CatalogAdminError `invalid` (a duplicate id or digest too), `unavailable`.
   */
  validate(): Promise<CatalogSummary>;
  /**
   * Brings the catalog's storage up to date (database migrations; explicit, never at start).
   * A catalog without a schema has nothing to do and applies nothing.
   */
  migrate(): Promise<MigrationReport>;
  /** Releases what the catalog holds (connections). */
  close(): Promise<void>;
}
