import type { CredentialKind, RunEventType, StoredCredential } from '@svc/core';
import type { AccountRecord, CatalogAgent, ConnectionRecord, CredentialRecord, IssuedSecret, WebhookEndpointRecord } from './records.js';

/** Input of {@link CatalogAdmin.createApiKey}. */
export interface NewApiKey {
  readonly accountId: string;
  /** Id of the key (unique across the catalog). Default `key_` + 16 random base64url characters. */
  readonly id?: string;
}

/** Input of {@link CatalogAdmin.createAccessToken}. */
export interface NewAccessToken {
  readonly accountId: string;
  /** One or more of core's `SUPPORTED_SCOPES` (`runs:write`, `runs:read`). */
  readonly scopes: readonly string[];
  /** End of validity, in the future; absent: never expires. */
  readonly expiresAt?: Date;
  /** Id of the token (unique across the catalog). Default `tok_` + 16 random base64url characters. */
  readonly id?: string;
}

/** Input of {@link CatalogAdmin.addAgent}. */
export interface NewAgent {
  readonly accountId: string;
  /** Id used in `/api/v1/agents/{agent_id}/…`: no `/`, `?`, `#` or whitespace. Default `agent_` + 16 random base64url characters. */
  readonly id?: string;
  readonly name?: string;
  readonly description?: string;
}

/** Where a new connection's password comes from: an environment variable's name, or the password itself (stored encrypted). */
export type NewPassword = { readonly env: string } | { readonly value: string };

/** SQL Server details of {@link NewConnection}. */
export interface NewSqlServerDetails {
  readonly host: string;
  /** TCP port, 1..65535. Default 1433. */
  readonly port?: number;
  readonly database: string;
  readonly user: string;
  /**
   * `{ env: 'NAME' }`: the API server reads the password from that environment variable
   * (as the YAML configuration's `password_env`). `{ value: '…' }`: stored encrypted with
   * AES-256-GCM under the catalog key (`SVC_CATALOG_KEY`); the clear password is never stored.
   */
  readonly password: NewPassword;
  /** Ask for TLS. Default true. */
  readonly encrypt?: boolean;
  /** Accept the server's certificate without checking its chain. Default false. */
  readonly trustServerCertificate?: boolean;
}

/** Input of {@link CatalogAdmin.addConnection}. */
export interface NewConnection {
  readonly accountId: string;
  /** UUID of the connection. Default: a random one (UUID v4). */
  readonly id?: string;
  /** Connection type, e.g. `sqlserver` or `postgresql` (only `sqlserver` allows writes). */
  readonly type: string;
  readonly name?: string;
  /** For `sqlserver`: the database written to. Absent: in-memory demo tables (development). */
  readonly sqlserver?: NewSqlServerDetails;
}

/**
 * Where a new webhook endpoint's signing secret comes from: an environment variable of the
 * API server (and worker) holding it, or the secret itself (`whsec_` + base64 of 24..64
 * bytes), stored encrypted with AES-256-GCM under the catalog key.
 */
export type NewWebhookSecret = { readonly env: string } | { readonly value: string };

/** Input of {@link CatalogAdmin.addWebhookEndpoint}. */
export interface NewWebhookEndpoint {
  readonly accountId: string;
  /** Id (unique across the catalog): no `/`, `?`, `#` or whitespace. Default `whep_` + 16 random base64url characters. */
  readonly id?: string;
  /** `http:` or `https:` URL, at most 2048 characters. */
  readonly url: string;
  /** Absent: a new secret (`whsec_` + base64 of 32 random bytes) is made, stored encrypted and returned once. */
  readonly secret?: NewWebhookSecret;
  /** Event types delivered (core's `RUN_EVENT_TYPES`). Default core's `FINAL_RUN_EVENT_TYPES`. */
  readonly events?: readonly RunEventType[];
}

/** What {@link CatalogAdmin.addWebhookEndpoint} stored, and the secret it made (if it made one). */
export interface AddedWebhookEndpoint {
  readonly endpoint: WebhookEndpointRecord;
  /** The signing secret made by the catalog: print it once, it is never listed. Absent when the input named one. */
  readonly secret?: string;
}

/** What {@link CatalogAdmin.removeAccount} removed with the account. */
export interface RemovedAccount {
  readonly accountId: string;
  /** Credentials removed (revoked ones included), agents, connections and webhook endpoints. */
  readonly removed: { readonly credentials: number; readonly agents: number; readonly connections: number; readonly webhookEndpoints: number };
}

/** Input of {@link CatalogAdmin.replaceCredentialDigest}. */
export interface ReplacedDigest {
  /** `api_key` or `oauth` (the core's `CredentialKind`). */
  readonly kind: CredentialKind;
  readonly id: string;
  /** Lower-case hex SHA-256 digest of the new secret. */
  readonly sha256: string;
  /** A new expiry; absent keeps the current one. */
  readonly expiresAt?: Date;
}

/** An account with what it owns, as {@link CatalogAdmin.listAccounts} lists it. */
export interface AccountSummary extends AccountRecord {
  /** Live (not revoked) API keys. */
  readonly apiKeys: number;
  /** Live access tokens. */
  readonly accessTokens: number;
  readonly agents: number;
  readonly connections: number;
}

/** A filter of the administration's lists. */
export interface AccountFilter {
  /** Only this account's entries; absent: every account's. */
  readonly accountId?: string;
}

/**
 * The administration of a `PostgresCatalog` (`catalog.admin`): the operations of the
 * admin CLI (`accounts | keys | tokens | agents | connections`). Every change is one
 * transaction; every statement is bounded by the catalog's `timeoutMs` (pg
 * `statement_timeout` and `query_timeout`); the change reaches every instance's cache
 * through the triggers' NOTIFY, and this process's cache at once.
 *
 * Ids of accounts, API keys, access tokens, agents and connections are unique across the
 * whole catalog, and so are credential digests: a duplicate is refused with
 * `CatalogDuplicateError` naming the entry and account that hold it (docs/CONTRACT.md
 * "Isolation between accounts"). Secrets are returned once by the calls that mint them;
 * only their SHA-256 digests are stored.
 *
 * Every method may also reject with the core's `DependencyUnavailableError('catalog')`
 * when the database cannot be reached or does not answer in time.
 */
export interface CatalogAdmin {
  /**
   * Adds an account.
   * @param accountId - its id (unique across the catalog). Default `acct_` + 16 random base64url characters.
   * @throws CatalogDuplicateError when the id is taken; CatalogInvalidError for a bad id.
   */
  addAccount(accountId?: string): Promise<AccountRecord>;
  /** Every account, oldest first, with how much it owns. */
  listAccounts(): Promise<AccountSummary[]>;
  /**
   * Removes an account. Without `cascade` it refuses while the account owns agents,
   * connections or live credentials (its revoked credentials go with it); with `cascade`
   * everything the account owns is removed with it, in one transaction.
   * @throws CatalogNotFoundError for an unknown account; CatalogInUseError when it owns
   *   things and `cascade` is not set.
   */
  removeAccount(accountId: string, options?: { readonly cascade?: boolean }): Promise<RemovedAccount>;

  /**
   * Mints an API key for an account: the secret (`svc-` + 43 base64url characters, 32
   * random bytes) is returned once; only its SHA-256 digest is stored.
   * @throws CatalogNotFoundError for an unknown account; CatalogDuplicateError when the id is taken.
   */
  createApiKey(input: NewApiKey): Promise<IssuedSecret>;
  /**
   * API keys (live and revoked, with `revokedAt`), by account then age: ids and digests,
   * never secrets. @throws CatalogNotFoundError for an unknown account in `filter`.
   */
  listApiKeys(filter?: AccountFilter): Promise<CredentialRecord[]>;
  /**
   * Revokes an API key: from then on its secret is refused on every instance (within a
   * second). Revoking a revoked key changes nothing and returns it.
   * @throws CatalogNotFoundError when no API key has that id.
   */
  revokeApiKey(id: string): Promise<CredentialRecord>;
  /**
   * Gives a live API key a new secret under the same id (its rate-limit windows and log
   * identity stay); the old secret stops working. The new secret is returned once.
   * @throws CatalogNotFoundError when no API key has that id; CatalogInvalidError when it is revoked.
   */
  rotateApiKey(id: string): Promise<IssuedSecret>;

  /**
   * Mints an OAuth access token for an account: the secret (`svcpt_` + 43 base64url
   * characters) is returned once; only its digest is stored.
   * @throws CatalogInvalidError for no scope, an unknown scope or an expiry not in the
   *   future; CatalogNotFoundError for an unknown account; CatalogDuplicateError when the id is taken.
   */
  createAccessToken(input: NewAccessToken): Promise<IssuedSecret>;
  /**
   * OAuth access tokens (live and revoked), by account then age: ids, scopes, expiry and
   * digests, never secrets. @throws CatalogNotFoundError for an unknown account in `filter`.
   */
  listAccessTokens(filter?: AccountFilter): Promise<CredentialRecord[]>;
  /**
   * Revokes an access token, as {@link CatalogAdmin.revokeApiKey}.
   * @throws CatalogNotFoundError when no access token has that id.
   */
  revokeAccessToken(id: string): Promise<CredentialRecord>;

  /**
   * Gives a live credential of `kind` the digest of a secret minted elsewhere (by a CLI
   * that prints it), keeping its id, account and scopes; `expiresAt` given replaces the
   * expiry. The old secret stops working on every instance. For API keys,
   * {@link CatalogAdmin.rotateApiKey} mints the secret itself.
   * @throws CatalogNotFoundError when no credential of `kind` has that id;
   *   CatalogInvalidError for a malformed digest or a revoked credential;
   *   CatalogDuplicateError when the digest is taken.
   */
  replaceCredentialDigest(input: ReplacedDigest): Promise<CredentialRecord>;

  /**
   * Stores a credential known by its digest only (e.g. moved from the YAML configuration,
   * which holds digests), as given: an expiry in the past included.
   * @throws CatalogInvalidError for a malformed digest, an unknown kind or an unknown
   *   scope of a token; CatalogNotFoundError for an unknown account; CatalogDuplicateError
   *   when the id or the digest is taken.
   */
  importCredential(credential: StoredCredential): Promise<CredentialRecord>;

  /**
   * Adds an agent to an account.
   * @throws CatalogNotFoundError for an unknown account; CatalogDuplicateError when the id
   *   is taken; CatalogInvalidError for a bad id, name (1..200 characters) or description (1..2000).
   */
  addAgent(input: NewAgent): Promise<CatalogAgent>;
  /** Agents, by account then age. @throws CatalogNotFoundError for an unknown account in `filter`. */
  listAgents(filter?: AccountFilter): Promise<CatalogAgent[]>;
  /** Removes an agent. @returns the agent removed. @throws CatalogNotFoundError when there is none with that id. */
  removeAgent(id: string): Promise<CatalogAgent>;

  /**
   * Adds a connection to an account. A `sqlserver` connection may carry the database's
   * details; its password is never stored in clear (an environment variable's name, or
   * encrypted with the catalog key).
   * @throws CatalogInvalidError for a bad UUID, type, name, port or environment variable
   *   name, or details on a type other than `sqlserver`; CatalogError (`key`) when a
   *   password value is given and the catalog key is missing or malformed;
   *   CatalogNotFoundError for an unknown account; CatalogDuplicateError when the id is taken.
   */
  addConnection(input: NewConnection): Promise<ConnectionRecord>;
  /** Connections with their SQL Server details (never the password), by account then age. @throws CatalogNotFoundError for an unknown account in `filter`. */
  listConnections(filter?: AccountFilter): Promise<ConnectionRecord[]>;
  /** Removes a connection. @returns the connection removed. @throws CatalogNotFoundError when there is none with that UUID. */
  removeConnection(id: string): Promise<ConnectionRecord>;

  /**
   * Adds a webhook endpoint to an account (docs/decisions.md "Webhooks"). Its secret is
   * never stored in clear: an environment variable's name, or encrypted with the catalog
   * key; with no secret given, one is made and returned once.
   * @throws CatalogInvalidError for a bad id, URL, event type, environment variable name or
   *   secret format; CatalogError (`key`) when the secret is to be encrypted and the catalog
   *   key is missing or malformed; CatalogNotFoundError for an unknown account;
   *   CatalogDuplicateError when the id is taken by any entry of the catalog (it names it).
   */
  addWebhookEndpoint(input: NewWebhookEndpoint): Promise<AddedWebhookEndpoint>;
  /** Webhook endpoints (never their secrets), by account then age. @throws CatalogNotFoundError for an unknown account in `filter`. */
  listWebhookEndpoints(filter?: AccountFilter): Promise<WebhookEndpointRecord[]>;
  /** Removes a webhook endpoint: no more deliveries go to it. @returns the endpoint removed. @throws CatalogNotFoundError when there is none with that id. */
  removeWebhookEndpoint(id: string): Promise<WebhookEndpointRecord>;
}
