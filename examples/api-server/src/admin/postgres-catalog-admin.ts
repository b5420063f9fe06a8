/**
 * The admin CLI's {@link CatalogAdmin} on a PostgreSQL catalog (`catalog.postgres` in the
 * configuration; issue 13 parts 1 and 3): every operation delegates to
 * `@svc/adapter-postgres`'s own administration (`PostgresCatalog.admin`), `migrate` to its
 * `migrateCatalog`. Changes reach every running instance through the catalog's
 * LISTEN/NOTIFY (within a second, README "A catalog for several instances (PostgreSQL)").
 */
import {
  CatalogError,
  migrateCatalog,
  PostgresCatalog,
  type ConnectionRecord,
  type CredentialRecord,
  type CatalogAgent,
  type WebhookEndpointRecord,
} from '@svc/adapter-postgres';
import { DependencyUnavailableError, type CredentialKind as CoreCredentialKind, type RunEventType } from '@svc/core';
import type { PostgresCatalogSettings } from '../settings.js';
import {
  CatalogAdminError,
  type AccountEntry,
  type AgentEntry,
  type CatalogAdmin,
  type CatalogAdminErrorKind,
  type CatalogSummary,
  type ConnectionEntry,
  type CredentialEntry,
  type CredentialKind,
  type MigrationReport,
  type NewWebhookEndpointEntry,
  type WebhookEndpointEntry,
} from './catalog-admin.js';

/**
 * What `connections list` shows as `password_env` for a password the catalog holds
 * encrypted (`SVC_CATALOG_KEY`): this CLI adds only environment variable references, but
 * another tool may have stored one.
 */
export const ENCRYPTED_PASSWORD = '(encrypted in the catalog)';

/**
 * The adapter's refusals as the CLI's kinds (its exit codes): duplicate and in use are
 * conflicts (5); a catalog not migrated, or migrated by a newer version, is unavailable (69)
 * to this CLI until it is migrated or upgraded; a missing or bad catalog key, or a password
 * variable that is not set, is invalid (3).
 */
const KIND_OF_CODE = {
  not_found: 'not_found',
  duplicate: 'conflict',
  in_use: 'conflict',
  invalid: 'invalid',
  not_migrated: 'unavailable',
  schema_too_new: 'unavailable',
  key: 'invalid',
  secret_unavailable: 'invalid',
} as const satisfies Record<CatalogError['code'], CatalogAdminErrorKind>;

/** The CLI's kind of credential as the core's: `oauth_token` here is `oauth` there. */
const coreKind = (kind: CredentialKind): CoreCredentialKind => (kind === 'oauth_token' ? 'oauth' : 'api_key');

function entryOf(c: CredentialRecord): CredentialEntry {
  return {
    kind: c.kind === 'oauth' ? 'oauth_token' : 'api_key',
    id: c.credentialId,
    accountId: c.accountId,
    sha256: c.sha256,
    scopes: c.scopes,
    ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }),
  };
}

const agentOf = (g: CatalogAgent): AgentEntry => ({ id: g.agentId, accountId: g.accountId, ...(g.name === undefined ? {} : { name: g.name }) });

function connectionOf(k: ConnectionRecord): ConnectionEntry {
  const d = k.sqlserver;
  return {
    id: k.connectionId,
    accountId: k.accountId,
    type: k.type,
    ...(d === undefined
      ? {}
      : {
          sqlserver: {
            host: d.host,
            port: d.port,
            database: d.database,
            user: d.user,
            passwordEnv: 'env' in d.password ? d.password.env : ENCRYPTED_PASSWORD,
            encrypt: d.encrypt,
            trustServerCertificate: d.trustServerCertificate,
          },
        }),
  };
}

const endpointOf = (w: WebhookEndpointRecord): WebhookEndpointEntry => ({
  id: w.endpointId,
  accountId: w.accountId,
  url: w.url,
  events: w.events,
  ...('env' in w.secret ? { secretEnv: w.secret.env } : {}),
});

/**
 * Runs `operation`, turning the adapter's failures into {@link CatalogAdminError}s whose
 * message is one line and never names a host, user or password: `CatalogError`s by
 * {@link KIND_OF_CODE}, a lost or silent database (`DependencyUnavailableError`) as
 * `unavailable`. Anything else is a bug and is rethrown.
 */
async function mapped<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof CatalogError) throw new CatalogAdminError(KIND_OF_CODE[error.code], error.message);
    if (error instanceof DependencyUnavailableError) {
      throw new CatalogAdminError('unavailable', 'the PostgreSQL catalog cannot be reached or did not answer in time');
    }
    throw error;
  }
}

/**
 * The admin CLI's catalog on PostgreSQL. The catalog is opened on the first operation
 * (`migrate` does not open it: it must work on a schema that is not migrated yet), with no
 * lookup cache and no LISTEN connection (a one-shot command), each statement bounded by
 * `catalog.postgres.timeout_ms`.
 */
export class PostgresCatalogAdmin implements CatalogAdmin {
  readonly description: string;
  private opening: Promise<PostgresCatalog> | undefined;

  /**
   * @param settings - `catalog.postgres` of the configuration.
   * @param env - where the catalog URL's variable (`url_env`) is read.
   */
  constructor(
    private readonly settings: PostgresCatalogSettings,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.description = `the PostgreSQL catalog (schema ${settings.schema})`;
  }

  /** The catalog URL from the environment. @throws CatalogAdminError `unavailable` when the variable is not set. */
  private url(): string {
    const url = this.env[this.settings.urlEnv];
    if (url === undefined || url === '') {
      throw new CatalogAdminError('unavailable', `catalog.postgres.url_env: environment variable ${this.settings.urlEnv} (the catalog database URL) is not set`);
    }
    return url;
  }

  private catalog(): Promise<PostgresCatalog> {
    this.opening ??= mapped(() => PostgresCatalog.open({ connection: this.url(), schema: this.settings.schema, timeoutMs: this.settings.timeoutMs, cache: false }));
    return this.opening;
  }

  private admin<T>(work: (catalog: PostgresCatalog) => Promise<T>): Promise<T> {
    return mapped(async () => work(await this.catalog()));
  }

  listAccounts(): Promise<readonly AccountEntry[]> {
    return this.admin(async (c) =>
      (await c.admin.listAccounts()).map((a) => ({ id: a.accountId, apiKeys: a.apiKeys, oauthTokens: a.accessTokens, agents: a.agents, connections: a.connections })),
    );
  }

  addAccount(id: string): Promise<void> {
    return this.admin(async (c) => void (await c.admin.addAccount(id)));
  }

  removeAccount(id: string, options: { readonly cascade: boolean }): Promise<void> {
    return this.admin(async (c) => void (await c.admin.removeAccount(id, { cascade: options.cascade })));
  }

  /** Live credentials only: a revoked one authenticates nothing, as one removed from the YAML file. */
  listCredentials(kind: CredentialKind, accountId?: string): Promise<readonly CredentialEntry[]> {
    const filter = accountId === undefined ? {} : { accountId };
    return this.admin(async (c) => {
      const found = kind === 'api_key' ? await c.admin.listApiKeys(filter) : await c.admin.listAccessTokens(filter);
      return found.filter((k) => k.revokedAt === undefined).map(entryOf);
    });
  }

  addCredential(credential: CredentialEntry): Promise<void> {
    return this.admin(async (c) => {
      await c.admin.importCredential({
        credentialId: credential.id,
        accountId: credential.accountId,
        kind: coreKind(credential.kind),
        sha256: credential.sha256,
        scopes: credential.scopes,
        ...(credential.expiresAt === undefined ? {} : { expiresAt: credential.expiresAt }),
      });
    });
  }

  rotateCredential(kind: CredentialKind, id: string, sha256: string, expiresAt?: Date): Promise<CredentialEntry> {
    return this.admin(async (c) => entryOf(await c.admin.replaceCredentialDigest({ kind: coreKind(kind), id, sha256, ...(expiresAt === undefined ? {} : { expiresAt }) })));
  }

  revokeCredential(kind: CredentialKind, id: string): Promise<CredentialEntry> {
    return this.admin(async (c) => entryOf(kind === 'api_key' ? await c.admin.revokeApiKey(id) : await c.admin.revokeAccessToken(id)));
  }

  listAgents(accountId?: string): Promise<readonly AgentEntry[]> {
    return this.admin(async (c) => (await c.admin.listAgents(accountId === undefined ? {} : { accountId })).map(agentOf));
  }

  addAgent(agent: AgentEntry): Promise<void> {
    return this.admin(async (c) => void (await c.admin.addAgent({ id: agent.id, accountId: agent.accountId, ...(agent.name === undefined ? {} : { name: agent.name }) })));
  }

  removeAgent(id: string): Promise<AgentEntry> {
    return this.admin(async (c) => agentOf(await c.admin.removeAgent(id)));
  }

  listConnections(accountId?: string): Promise<readonly ConnectionEntry[]> {
    return this.admin(async (c) => (await c.admin.listConnections(accountId === undefined ? {} : { accountId })).map(connectionOf));
  }

  addConnection(connection: ConnectionEntry): Promise<void> {
    const d = connection.sqlserver;
    return this.admin(async (c) => {
      await c.admin.addConnection({
        id: connection.id,
        accountId: connection.accountId,
        type: connection.type,
        ...(d === undefined
          ? {}
          : {
              sqlserver: {
                host: d.host,
                port: d.port,
                database: d.database,
                user: d.user,
                password: { env: d.passwordEnv },
                encrypt: d.encrypt,
                trustServerCertificate: d.trustServerCertificate,
              },
            }),
      });
    });
  }

  removeConnection(id: string): Promise<ConnectionEntry> {
    return this.admin(async (c) => connectionOf(await c.admin.removeConnection(id)));
  }

  listWebhookEndpoints(accountId?: string): Promise<readonly WebhookEndpointEntry[]> {
    return this.admin(async (c) => (await c.admin.listWebhookEndpoints(accountId === undefined ? {} : { accountId })).map(endpointOf));
  }

  /** A secret value is encrypted with the catalog key (`SVC_CATALOG_KEY` in this process's environment). */
  addWebhookEndpoint(endpoint: NewWebhookEndpointEntry): Promise<void> {
    return this.admin(async (c) => {
      await c.admin.addWebhookEndpoint({
        id: endpoint.id,
        accountId: endpoint.accountId,
        url: endpoint.url,
        secret: endpoint.secret,
        // Checked by the adapter (CatalogInvalidError naming `events`).
        ...(endpoint.events === undefined ? {} : { events: endpoint.events as readonly RunEventType[] }),
      });
    });
  }

  removeWebhookEndpoint(id: string): Promise<WebhookEndpointEntry> {
    return this.admin(async (c) => endpointOf(await c.admin.removeWebhookEndpoint(id)));
  }

  /** The catalog answers (`ping`) and is migrated (opening it checks), and what it holds, counted. */
  validate(): Promise<CatalogSummary> {
    return this.admin(async (c) => {
      await c.ping();
      const accounts = await c.admin.listAccounts();
      const sum = (f: (a: (typeof accounts)[number]) => number): number => accounts.reduce((n, a) => n + f(a), 0);
      return { accounts: accounts.length, apiKeys: sum((a) => a.apiKeys), oauthTokens: sum((a) => a.accessTokens), agents: sum((a) => a.agents), connections: sum((a) => a.connections) };
    });
  }

  /** `migrateCatalog`: makes the schema and applies the pending migrations (each step bounded by the adapter's default 30 s: DDL may wait for locks). */
  migrate(): Promise<MigrationReport> {
    return mapped(async () => ({ applied: (await migrateCatalog({ connection: this.url(), schema: this.settings.schema })).applied }));
  }

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    if (opening === undefined) return;
    const catalog = await opening.catch(() => undefined);
    await catalog?.close();
  }
}
