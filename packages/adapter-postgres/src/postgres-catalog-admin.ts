import { randomBytes, randomUUID } from 'node:crypto';
import {
  ACCESS_TOKEN_PREFIX,
  API_KEY_PREFIX,
  FINAL_RUN_EVENT_TYPES,
  isRunEventType,
  isUuid,
  isWebhookSecret,
  RUN_EVENT_TYPES,
  sha256Hex,
  SUPPORTED_SCOPES,
  WEBHOOK_SECRET_PREFIX,
  type CredentialKind,
  type RunEventType,
  type StoredCredential,
} from '@svc/core';
import type { Knex } from 'knex';
import {
  catalogUnavailable,
  CatalogDuplicateError,
  CatalogInUseError,
  CatalogInvalidError,
  CatalogNotFoundError,
  isCatalogUnavailable,
  type CatalogEntity,
  type CatalogOwner,
} from './errors.js';
import type {
  AccountFilter,
  AccountSummary,
  AddedWebhookEndpoint,
  CatalogAdmin,
  NewAccessToken,
  NewAgent,
  NewApiKey,
  NewConnection,
  NewSqlServerDetails,
  NewWebhookEndpoint,
  RemovedAccount,
  ReplacedDigest,
} from './catalog-admin.js';
import type { CatalogContext } from './context.js';
import {
  agentOf,
  connectionRecordOf,
  credentialOf,
  type AccountRecord,
  type AgentRow,
  type CatalogAgent,
  type ConnectionRecord,
  type ConnectionRow,
  type CredentialRecord,
  type CredentialRow,
  type IssuedSecret,
  type WebhookEndpointRecord,
  type WebhookEndpointRow,
  webhookEndpointRecordOf,
} from './records.js';
import { quoted } from './schema.js';
import { newSecret } from './secrets.js';

// Ids appear in URL paths, log lines and CLI output: printable, no path or query delimiters.
const ID = /^[^/?#\s\p{Cc}]{1,128}$/u;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/u;
const DIGEST = /^[0-9a-f]{64}$/u;

function checkId(field: string, id: string): string {
  if (!ID.test(id)) throw new CatalogInvalidError(field, 'must be 1..128 characters without /, ?, #, whitespace or control characters');
  return id;
}

function generatedId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('base64url')}`;
}

function checkText(field: string, value: string | undefined, max: number): void {
  if (value !== undefined && (value.length === 0 || value.length > max)) throw new CatalogInvalidError(field, `must be 1..${max} characters`);
}

function checkScopes(scopes: readonly string[]): string[] {
  const known = new Set<string>(SUPPORTED_SCOPES);
  const unique = [...new Set(scopes)];
  if (unique.length === 0) throw new CatalogInvalidError('scopes', `must name at least one of ${SUPPORTED_SCOPES.join(', ')}`);
  const unknown = unique.filter((s) => !known.has(s));
  if (unknown.length > 0) throw new CatalogInvalidError('scopes', `unknown scope(s) ${unknown.join(', ')}; supported: ${SUPPORTED_SCOPES.join(', ')}`);
  return unique;
}

/** The kind of a credential as the catalog's errors name it. */
function entityOfKind(kind: CredentialKind): CatalogEntity {
  return kind === 'api_key' ? 'api_key' : 'access_token';
}

/** `23505` unique_violation, `23503` foreign_key_violation, `23514` check_violation. */
interface PgError {
  readonly code?: string;
  readonly constraint?: string;
}

/** The {@link CatalogAdmin} of a PostgresCatalog (internal: the public type is the interface). */
export class PostgresCatalogAdmin implements CatalogAdmin {
  /** Made by `PostgresCatalog.open`. */
  constructor(private readonly context: CatalogContext) {}

  private table(db: Knex | Knex.Transaction, name: string): Knex.QueryBuilder {
    return db.withSchema(this.context.schema).from(name);
  }

  /** Runs a change in a transaction, maps the database's refusals, and forgets the local cache after it. */
  private async change<T>(work: (trx: Knex.Transaction) => Promise<T>, duplicate?: { id?: string; digest?: string }): Promise<T> {
    try {
      const result = await this.context.db.transaction(work);
      this.context.changed();
      return result;
    } catch (error) {
      throw await this.mapError(error, duplicate);
    }
  }

  private async read<T>(work: (db: Knex) => Promise<T>): Promise<T> {
    try {
      return await work(this.context.db);
    } catch (error) {
      throw await this.mapError(error, undefined);
    }
  }

  private async mapError(error: unknown, duplicate: { id?: string; digest?: string } | undefined): Promise<unknown> {
    if (isCatalogUnavailable(error)) return catalogUnavailable(error);
    const { code, constraint } = (error ?? {}) as PgError;
    if (code === '23505' && duplicate !== undefined) {
      if (constraint === 'credentials_sha256_key' && duplicate.digest !== undefined) {
        return new CatalogDuplicateError('digest', duplicate.digest, await this.ownerOfDigest(duplicate.digest));
      }
      if (duplicate.id !== undefined) return new CatalogDuplicateError('id', duplicate.id, await this.ownerOfId(duplicate.id));
    }
    return error;
  }

  private async ownerOfId(id: string): Promise<CatalogOwner | undefined> {
    try {
      const row = (await this.table(this.context.db, 'catalog_ids').where({ id }).first()) as { entity: string; account_id: string } | undefined;
      if (row === undefined) return undefined;
      let entity: CatalogEntity = row.entity === 'credential' ? 'api_key' : (row.entity as CatalogEntity);
      if (row.entity === 'credential') {
        const credential = (await this.table(this.context.db, 'credentials').where({ id }).first('kind')) as { kind: CredentialKind } | undefined;
        entity = entityOfKind(credential?.kind ?? 'api_key');
      }
      return { entity, id, accountId: row.account_id };
    } catch {
      return undefined;
    }
  }

  private async ownerOfDigest(digest: string): Promise<CatalogOwner | undefined> {
    try {
      const row = (await this.table(this.context.db, 'credentials').where({ sha256: digest }).first('id', 'kind', 'account_id')) as
        | { id: string; kind: CredentialKind; account_id: string }
        | undefined;
      return row === undefined ? undefined : { entity: entityOfKind(row.kind), id: row.id, accountId: row.account_id };
    } catch {
      return undefined;
    }
  }

  /**
   * The rows of `table` a list filtered by account reads: an unknown account is a typo,
   * not an empty list. (Wrapped in an object: a knex builder is a thenable, and resolving
   * an async function with it would run it.)
   */
  private async filtered(db: Knex, table: string, filter: AccountFilter): Promise<{ readonly query: Knex.QueryBuilder }> {
    const query = this.table(db, table);
    if (filter.accountId === undefined) return { query };
    const account = await this.table(db, 'accounts').where({ id: filter.accountId }).first('id');
    if (account === undefined) throw new CatalogNotFoundError('account', filter.accountId);
    return { query: query.where({ account_id: filter.accountId }) };
  }

  private async requireAccount(trx: Knex.Transaction, accountId: string): Promise<void> {
    const row = await this.table(trx, 'accounts').where({ id: accountId }).forShare().first('id');
    if (row === undefined) throw new CatalogNotFoundError('account', accountId);
  }

  // ----- accounts -----

  /** See {@link CatalogAdmin.addAccount}. */
  async addAccount(accountId: string = generatedId('acct_')): Promise<AccountRecord> {
    checkId('accountId', accountId);
    return this.change(
      async (trx) => {
        const [row] = (await this.table(trx, 'accounts').insert({ id: accountId }).returning(['id', 'created_at'])) as { id: string; created_at: Date }[];
        return { accountId: row?.id ?? accountId, createdAt: row?.created_at ?? new Date() };
      },
      { id: accountId },
    );
  }

  /** See {@link CatalogAdmin.listAccounts}. */
  listAccounts(): Promise<AccountSummary[]> {
    const s = quoted(this.context.schema);
    return this.read(async (db) => {
      const result = await db.raw<{ rows: { id: string; created_at: Date; api_keys: number; access_tokens: number; agents: number; connections: number }[] }>(`
        select a.id, a.created_at,
          (select count(*)::int from ${s}.credentials c where c.account_id = a.id and c.kind = 'api_key' and c.revoked_at is null) as api_keys,
          (select count(*)::int from ${s}.credentials c where c.account_id = a.id and c.kind = 'oauth' and c.revoked_at is null) as access_tokens,
          (select count(*)::int from ${s}.agents g where g.account_id = a.id) as agents,
          (select count(*)::int from ${s}.connections n where n.account_id = a.id) as connections
        from ${s}.accounts a
        order by a.created_at, a.id`);
      return result.rows.map((r) => ({
        accountId: r.id,
        createdAt: r.created_at,
        apiKeys: r.api_keys,
        accessTokens: r.access_tokens,
        agents: r.agents,
        connections: r.connections,
      }));
    });
  }

  /** See {@link CatalogAdmin.removeAccount}. */
  async removeAccount(accountId: string, options: { readonly cascade?: boolean } = {}): Promise<RemovedAccount> {
    return this.change(async (trx) => {
      const account = await this.table(trx, 'accounts').where({ id: accountId }).forUpdate().first('id');
      if (account === undefined) throw new CatalogNotFoundError('account', accountId);
      const count = async (table: string, live = false): Promise<number> => {
        const query = this.table(trx, table).where({ account_id: accountId });
        if (live) query.whereNull('revoked_at');
        const [row] = (await query.count({ n: '*' })) as { n: string | number }[];
        return Number(row?.n ?? 0);
      };
      const owned = {
        credentials: await count('credentials', true),
        agents: await count('agents'),
        connections: await count('connections'),
        webhookEndpoints: await count('webhook_endpoints'),
      };
      if (options.cascade !== true && owned.credentials + owned.agents + owned.connections + owned.webhookEndpoints > 0) throw new CatalogInUseError(accountId, owned);
      const removed = {
        credentials: await this.table(trx, 'credentials').where({ account_id: accountId }).delete(),
        agents: await this.table(trx, 'agents').where({ account_id: accountId }).delete(),
        connections: await this.table(trx, 'connections').where({ account_id: accountId }).delete(),
        webhookEndpoints: await this.table(trx, 'webhook_endpoints').where({ account_id: accountId }).delete(),
      };
      await this.table(trx, 'accounts').where({ id: accountId }).delete();
      return { accountId, removed };
    });
  }

  // ----- credentials -----

  private async insertCredential(
    values: { id: string; accountId: string; kind: CredentialKind; sha256: string; scopes: readonly string[]; expiresAt?: Date },
  ): Promise<CredentialRecord> {
    return this.change(
      async (trx) => {
        await this.requireAccount(trx, values.accountId);
        const [row] = (await this.table(trx, 'credentials')
          .insert({
            id: values.id,
            account_id: values.accountId,
            kind: values.kind,
            sha256: values.sha256,
            scopes: [...values.scopes],
            expires_at: values.expiresAt ?? null,
          })
          .returning('*')) as CredentialRow[];
        if (row === undefined) throw new Error('insert returned no row');
        return credentialOf(row);
      },
      { id: values.id, digest: values.sha256 },
    );
  }

  /** See {@link CatalogAdmin.createApiKey}. */
  async createApiKey(input: NewApiKey): Promise<IssuedSecret> {
    const id = checkId('id', input.id ?? generatedId('key_'));
    const secret = newSecret(API_KEY_PREFIX);
    const credential = await this.insertCredential({ id, accountId: input.accountId, kind: 'api_key', sha256: sha256Hex(secret), scopes: [] });
    return { credential, secret };
  }

  /** See {@link CatalogAdmin.createAccessToken}. */
  async createAccessToken(input: NewAccessToken): Promise<IssuedSecret> {
    const id = checkId('id', input.id ?? generatedId('tok_'));
    const scopes = checkScopes(input.scopes);
    if (input.expiresAt !== undefined && !(input.expiresAt.getTime() > Date.now())) throw new CatalogInvalidError('expiresAt', 'must be a date in the future');
    const secret = newSecret(ACCESS_TOKEN_PREFIX);
    const credential = await this.insertCredential({
      id,
      accountId: input.accountId,
      kind: 'oauth',
      sha256: sha256Hex(secret),
      scopes,
      ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
    });
    return { credential, secret };
  }

  /** See {@link CatalogAdmin.importCredential}. */
  async importCredential(credential: StoredCredential): Promise<CredentialRecord> {
    checkId('credentialId', credential.credentialId);
    const sha256 = credential.sha256.toLowerCase();
    if (!DIGEST.test(sha256)) throw new CatalogInvalidError('sha256', 'must be 64 hexadecimal characters (a SHA-256 digest)');
    if (credential.kind !== 'api_key' && credential.kind !== 'oauth') throw new CatalogInvalidError('kind', 'must be api_key or oauth');
    const scopes = credential.kind === 'oauth' ? checkScopes(credential.scopes) : [...new Set(credential.scopes)];
    if (credential.expiresAt !== undefined && Number.isNaN(credential.expiresAt.getTime())) throw new CatalogInvalidError('expiresAt', 'must be a valid date');
    return this.insertCredential({
      id: credential.credentialId,
      accountId: credential.accountId,
      kind: credential.kind,
      sha256,
      scopes,
      ...(credential.expiresAt === undefined ? {} : { expiresAt: credential.expiresAt }),
    });
  }

  private listCredentials(kind: CredentialKind, filter: AccountFilter): Promise<CredentialRecord[]> {
    return this.read(async (db) => {
      const query = (await this.filtered(db, 'credentials', filter)).query.andWhere({ kind });
      const rows = (await query.orderBy([{ column: 'account_id' }, { column: 'created_at' }, { column: 'id' }])) as CredentialRow[];
      return rows.map(credentialOf);
    });
  }

  /** See {@link CatalogAdmin.listApiKeys}. */
  listApiKeys(filter: AccountFilter = {}): Promise<CredentialRecord[]> {
    return this.listCredentials('api_key', filter);
  }

  /** See {@link CatalogAdmin.listAccessTokens}. */
  listAccessTokens(filter: AccountFilter = {}): Promise<CredentialRecord[]> {
    return this.listCredentials('oauth', filter);
  }

  private revoke(kind: CredentialKind, id: string): Promise<CredentialRecord> {
    return this.change(async (trx) => {
      const [updated] = (await this.table(trx, 'credentials').where({ id, kind }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() }).returning('*')) as CredentialRow[];
      if (updated !== undefined) return credentialOf(updated);
      const existing = (await this.table(trx, 'credentials').where({ id, kind }).first()) as CredentialRow | undefined;
      if (existing === undefined) throw new CatalogNotFoundError(entityOfKind(kind), id);
      return credentialOf(existing);
    });
  }

  /** See {@link CatalogAdmin.revokeApiKey}. */
  revokeApiKey(id: string): Promise<CredentialRecord> {
    return this.revoke('api_key', id);
  }

  /** See {@link CatalogAdmin.revokeAccessToken}. */
  revokeAccessToken(id: string): Promise<CredentialRecord> {
    return this.revoke('oauth', id);
  }

  /** See {@link CatalogAdmin.rotateApiKey}. */
  async rotateApiKey(id: string): Promise<IssuedSecret> {
    const secret = newSecret(API_KEY_PREFIX);
    const sha256 = sha256Hex(secret);
    const credential = await this.change(
      async (trx) => {
        const existing = (await this.table(trx, 'credentials').where({ id, kind: 'api_key' }).forUpdate().first()) as CredentialRow | undefined;
        if (existing === undefined) throw new CatalogNotFoundError('api_key', id);
        if (existing.revoked_at !== null) throw new CatalogInvalidError('id', `api key "${id}" is revoked; create a new one`);
        const [row] = (await this.table(trx, 'credentials').where({ id }).update({ sha256 }).returning('*')) as CredentialRow[];
        if (row === undefined) throw new Error('update returned no row');
        return credentialOf(row);
      },
      { digest: sha256 },
    );
    return { credential, secret };
  }

  /** See {@link CatalogAdmin.replaceCredentialDigest}. */
  async replaceCredentialDigest(input: ReplacedDigest): Promise<CredentialRecord> {
    const sha256 = input.sha256.toLowerCase();
    if (!DIGEST.test(sha256)) throw new CatalogInvalidError('sha256', 'must be 64 hexadecimal characters (a SHA-256 digest)');
    if (input.expiresAt !== undefined && Number.isNaN(input.expiresAt.getTime())) throw new CatalogInvalidError('expiresAt', 'must be a valid date');
    return this.change(
      async (trx) => {
        const existing = (await this.table(trx, 'credentials').where({ id: input.id, kind: input.kind }).forUpdate().first()) as CredentialRow | undefined;
        if (existing === undefined) throw new CatalogNotFoundError(entityOfKind(input.kind), input.id);
        if (existing.revoked_at !== null) throw new CatalogInvalidError('id', `${entityOfKind(input.kind).replace('_', ' ')} "${input.id}" is revoked; create a new one`);
        const changes = input.expiresAt === undefined ? { sha256 } : { sha256, expires_at: input.expiresAt };
        const [row] = (await this.table(trx, 'credentials').where({ id: input.id }).update(changes).returning('*')) as CredentialRow[];
        if (row === undefined) throw new Error('update returned no row');
        return credentialOf(row);
      },
      { digest: sha256 },
    );
  }

  // ----- agents -----

  /** See {@link CatalogAdmin.addAgent}. */
  async addAgent(input: NewAgent): Promise<CatalogAgent> {
    const id = checkId('id', input.id ?? generatedId('agent_'));
    checkText('name', input.name, 200);
    checkText('description', input.description, 2000);
    return this.change(
      async (trx) => {
        await this.requireAccount(trx, input.accountId);
        const [row] = (await this.table(trx, 'agents')
          .insert({ id, account_id: input.accountId, name: input.name ?? null, description: input.description ?? null })
          .returning('*')) as AgentRow[];
        if (row === undefined) throw new Error('insert returned no row');
        return agentOf(row);
      },
      { id },
    );
  }

  /** See {@link CatalogAdmin.listAgents}. */
  listAgents(filter: AccountFilter = {}): Promise<CatalogAgent[]> {
    return this.read(async (db) => {
      const { query } = await this.filtered(db, 'agents', filter);
      const rows = (await query.orderBy([{ column: 'account_id' }, { column: 'created_at' }, { column: 'id' }])) as AgentRow[];
      return rows.map(agentOf);
    });
  }

  /** See {@link CatalogAdmin.removeAgent}. */
  removeAgent(id: string): Promise<CatalogAgent> {
    return this.change(async (trx) => {
      const [row] = (await this.table(trx, 'agents').where({ id }).delete().returning('*')) as AgentRow[];
      if (row === undefined) throw new CatalogNotFoundError('agent', id);
      return agentOf(row);
    });
  }

  // ----- connections -----

  /** See {@link CatalogAdmin.addConnection}. */
  async addConnection(input: NewConnection): Promise<ConnectionRecord> {
    const id = (input.id ?? randomUUID()).toLowerCase();
    if (!isUuid(id)) throw new CatalogInvalidError('id', 'must be a UUID');
    if (input.type.length === 0 || input.type.length > 64) throw new CatalogInvalidError('type', 'must be 1..64 characters');
    checkText('name', input.name, 200);
    const details = input.sqlserver === undefined ? {} : this.detailColumns(id, input.type, input.sqlserver);
    return this.change(
      async (trx) => {
        await this.requireAccount(trx, input.accountId);
        const [row] = (await this.table(trx, 'connections')
          .insert({ id, account_id: input.accountId, type: input.type, name: input.name ?? null, ...details })
          .returning('*')) as ConnectionRow[];
        if (row === undefined) throw new Error('insert returned no row');
        return connectionRecordOf(row);
      },
      { id },
    );
  }

  private detailColumns(id: string, type: string, d: NewSqlServerDetails): Partial<ConnectionRow> {
    if (type !== 'sqlserver') throw new CatalogInvalidError('sqlserver', `only sqlserver connections have database details (type is ${type})`);
    for (const [field, value] of [['sqlserver.host', d.host], ['sqlserver.database', d.database], ['sqlserver.user', d.user]] as const) {
      if (value.length === 0 || value.length > 256) throw new CatalogInvalidError(field, 'must be 1..256 characters');
    }
    const port = d.port ?? 1433;
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new CatalogInvalidError('sqlserver.port', 'must be an integer 1..65535');
    let passwordEnv: string | null = null;
    let passwordEncrypted: string | null = null;
    if ('env' in d.password) {
      if (!ENV_NAME.test(d.password.env)) throw new CatalogInvalidError('sqlserver.password.env', 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');
      passwordEnv = d.password.env;
    } else {
      if (d.password.value.length === 0) throw new CatalogInvalidError('sqlserver.password.value', 'must not be empty');
      passwordEncrypted = this.context.cipher.encrypt(d.password.value, id);
    }
    return {
      host: d.host,
      port,
      database: d.database,
      user_name: d.user,
      password_env: passwordEnv,
      password_encrypted: passwordEncrypted,
      encrypt: d.encrypt ?? true,
      trust_server_certificate: d.trustServerCertificate ?? false,
    };
  }

  /** See {@link CatalogAdmin.listConnections}. */
  listConnections(filter: AccountFilter = {}): Promise<ConnectionRecord[]> {
    return this.read(async (db) => {
      const { query } = await this.filtered(db, 'connections', filter);
      const rows = (await query.orderBy([{ column: 'account_id' }, { column: 'created_at' }, { column: 'id' }])) as ConnectionRow[];
      return rows.map(connectionRecordOf);
    });
  }

  /** See {@link CatalogAdmin.removeConnection}. */
  async removeConnection(id: string): Promise<ConnectionRecord> {
    if (!isUuid(id)) throw new CatalogNotFoundError('connection', id);
    return this.change(async (trx) => {
      const [row] = (await this.table(trx, 'connections').where({ id: id.toLowerCase() }).delete().returning('*')) as ConnectionRow[];
      if (row === undefined) throw new CatalogNotFoundError('connection', id);
      return connectionRecordOf(row);
    });
  }

  // ----- webhook endpoints -----

  /** See {@link CatalogAdmin.addWebhookEndpoint}. */
  async addWebhookEndpoint(input: NewWebhookEndpoint): Promise<AddedWebhookEndpoint> {
    const id = checkId('id', input.id ?? generatedId('whep_'));
    const url = checkWebhookUrl(input.url);
    const events = checkEvents(input.events ?? FINAL_RUN_EVENT_TYPES);
    let secretEnv: string | null = null;
    let made: string | undefined;
    let clear: string | undefined;
    if (input.secret !== undefined && 'env' in input.secret) {
      if (!ENV_NAME.test(input.secret.env)) throw new CatalogInvalidError('secret.env', 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');
      secretEnv = input.secret.env;
    } else if (input.secret !== undefined) {
      // Never quoted: a malformed secret is still a secret.
      if (!isWebhookSecret(input.secret.value)) throw new CatalogInvalidError('secret.value', 'must be whsec_ followed by the base64 of 24 to 64 random bytes');
      clear = input.secret.value;
    } else {
      // 32 bytes (256 bits): within Standard Webhooks' recommended 24..64.
      made = `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
      clear = made;
    }
    const secretEncrypted = clear === undefined ? null : this.context.cipher.encryptWebhookSecret(clear, id);
    const endpoint = await this.change(
      async (trx) => {
        await this.requireAccount(trx, input.accountId);
        const [row] = (await this.table(trx, 'webhook_endpoints')
          .insert({ id, account_id: input.accountId, url, secret_env: secretEnv, secret_encrypted: secretEncrypted, events })
          .returning('*')) as WebhookEndpointRow[];
        if (row === undefined) throw new Error('insert returned no row');
        return webhookEndpointRecordOf(row);
      },
      { id },
    );
    return made === undefined ? { endpoint } : { endpoint, secret: made };
  }

  /** See {@link CatalogAdmin.listWebhookEndpoints}. */
  listWebhookEndpoints(filter: AccountFilter = {}): Promise<WebhookEndpointRecord[]> {
    return this.read(async (db) => {
      const { query } = await this.filtered(db, 'webhook_endpoints', filter);
      const rows = (await query.orderBy([{ column: 'account_id' }, { column: 'created_at' }, { column: 'id' }])) as WebhookEndpointRow[];
      return rows.map(webhookEndpointRecordOf);
    });
  }

  /** See {@link CatalogAdmin.removeWebhookEndpoint}. */
  removeWebhookEndpoint(id: string): Promise<WebhookEndpointRecord> {
    return this.change(async (trx) => {
      const [row] = (await this.table(trx, 'webhook_endpoints').where({ id }).delete().returning('*')) as WebhookEndpointRow[];
      if (row === undefined) throw new CatalogNotFoundError('webhook_endpoint', id);
      return webhookEndpointRecordOf(row);
    });
  }
}

/**
 * An `http:` or `https:` URL of at most 2048 characters, as the configuration file's
 * `webhook_endpoints[].url` (WHATWG URL parser of node:url).
 * @throws CatalogInvalidError (`url`) for anything else.
 */
function checkWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CatalogInvalidError('url', 'must be an absolute http: or https: URL');
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !/^https?:\/\//iu.test(url)) throw new CatalogInvalidError('url', 'must be an absolute http: or https: URL');
  if (url.length > 2048) throw new CatalogInvalidError('url', 'must be at most 2048 characters');
  return url;
}

/** One or more of core's `RUN_EVENT_TYPES`, each once. @throws CatalogInvalidError (`events`) otherwise. */
function checkEvents(events: readonly string[]): RunEventType[] {
  const unique = [...new Set(events)];
  if (unique.length === 0) throw new CatalogInvalidError('events', `must name at least one of ${RUN_EVENT_TYPES.join(', ')}`);
  const unknown = unique.filter((e) => !isRunEventType(e));
  if (unknown.length > 0) throw new CatalogInvalidError('events', `unknown event type(s) ${unknown.join(', ')}; known: ${RUN_EVENT_TYPES.join(', ')}`);
  return unique as RunEventType[];
}
