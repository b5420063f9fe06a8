import {
  isUuid,
  isWebhookSecret,
  silentLogger,
  type AgentCatalog,
  type ConnectionCatalog,
  type CredentialStore,
  type Logger,
  type Page,
  type PageRequest,
  type StoredCredential,
  type WebhookEndpoint,
  type WebhookEndpointCatalog,
} from '@svc/core';
import type { Knex } from 'knex';
import type { CatalogAdmin } from './catalog-admin.js';
import type { CatalogContext } from './context.js';
import { PostgresCatalogAdmin } from './postgres-catalog-admin.js';
import { ChangeListener } from './change-listener.js';
import { createKnex } from './connection-options.js';
import { DEFAULT_CATALOG_TIMEOUT_MS, positiveInteger, type PostgresConnection } from './settings.js';
import { CatalogError, CatalogInvalidError, guardCatalog } from './errors.js';
import { LookupCache } from './lookup-cache.js';
import { checkMigrated } from './migration-check.js';
import {
  agentOf,
  CONNECTION_COLUMNS,
  connectionOf,
  credentialOf,
  type AgentRow,
  type CatalogAgent,
  type CatalogConnection,
  type ConnectionRow,
  type CredentialRow,
  type SqlServerConnectionDetails,
  type WebhookEndpointRow,
} from './records.js';
import { CATALOG_KEY_ENV, PasswordCipher, type EncryptionKeySource } from './secrets.js';
import { checkSchemaName, DEFAULT_CATALOG_SCHEMA } from './schema.js';

/** Options of {@link PostgresCatalog.open}. */
export interface PostgresCatalogOptions {
  /** The catalog database (never logged). */
  readonly connection: PostgresConnection;
  /**
   * Where the LISTEN connection goes, when not to `connection`: LISTEN needs a session of
   * its own, which a pooler in transaction mode (PgBouncer) does not keep, so point it at
   * the server itself there. Default: `connection`.
   */
  readonly listenConnection?: PostgresConnection;
  /** Schema of the catalog (made by {@link migrateCatalog}). Default `svc`. */
  readonly schema?: string;
  /**
   * Bound of every lookup, in milliseconds, whatever hangs (pool acquire, connect, query):
   * past it the lookup rejects with the core's `DependencyUnavailableError('catalog')`,
   * which the HTTP adapter answers 503. Also the bound of each step of `open` and of each
   * statement of the administration. Default 2000, the API's `dependency_timeout_ms`.
   */
  readonly timeoutMs?: number;
  /** Most connections of the query pool. Default 10. */
  readonly poolMax?: number;
  /**
   * The lookup cache, kept current by LISTEN/NOTIFY. `false`: no cache and no LISTEN
   * connection, every lookup asks the database (a one-shot tool such as the admin CLI).
   * Default `{ maxEntries: 10000, ttlMs: 60000 }`.
   */
  readonly cache?: false | { readonly maxEntries?: number; readonly ttlMs?: number };
  /**
   * Interval of the heartbeat query on the LISTEN connection, in milliseconds: how soon a
   * silent server (socket open, nothing answers) is noticed, at most `heartbeatMs +
   * timeoutMs` after it fell silent. Default 1000.
   */
  readonly heartbeatMs?: number;
  /** Backoff between reconnections of the LISTEN connection, in milliseconds. Default 100 doubling to 5000. */
  readonly reconnect?: { readonly minDelayMs?: number; readonly maxDelayMs?: number };
  /** Key of connection passwords stored encrypted. Default: environment variable `SVC_CATALOG_KEY` (base64 of 32 bytes), read when first needed. */
  readonly encryptionKey?: EncryptionKeySource;
  /** The command an operator runs to migrate, named by {@link CatalogNotMigratedError}. Default `svc-server migrate`. */
  readonly migrateCommand?: string;
  /**
   * Where the LISTEN connection's losses and recoveries are logged (no host, user or
   * password), and webhook endpoints skipped because their secret cannot be resolved (ids
   * and variable names only, never a secret). Default: silent.
   */
  readonly logger?: Logger;
}

/** Defaults of {@link PostgresCatalogOptions}. */
export const CATALOG_DEFAULTS = {
  timeoutMs: DEFAULT_CATALOG_TIMEOUT_MS,
  poolMax: 10,
  cacheMaxEntries: 10_000,
  cacheTtlMs: 60_000,
  heartbeatMs: 1_000,
  reconnectMinDelayMs: 100,
  reconnectMaxDelayMs: 5_000,
  migrateCommand: 'svc-server migrate',
} as const;

/** Counters of a {@link PostgresCatalog}, for metrics and readiness. */
export interface CatalogStats {
  /** True while the LISTEN connection listens (the cache is served); always false with `cache: false`. */
  readonly listening: boolean;
  /** Lookups answered from the cache since open. */
  readonly cacheHits: number;
  /** Lookups that asked the database since open. */
  readonly loads: number;
}

const DIGEST = /^[0-9a-f]{64}$/u;

/**
 * The catalog of accounts, credentials (SHA-256 digests only), agents and connections on
 * PostgreSQL, shared by every instance of the API server.
 *
 * - {@link PostgresCatalog.credentials}, {@link PostgresCatalog.agents} and
 *   {@link PostgresCatalog.connections} are the core's `CredentialStore`, `AgentCatalog` and
 *   `ConnectionCatalog` (three objects, because two ports share the name `findById`).
 * - Lookups are cached, misses included, and the cache is cleared on every NOTIFY of the
 *   catalog's triggers (any change, psql's too, reaches every instance within a second).
 *   While the LISTEN connection is down nothing is served from the cache: every lookup
 *   asks the database, and the connection is made again with a bounded backoff.
 * - Every lookup is bounded by `timeoutMs`; a lost database rejects it with the core's
 *   `DependencyUnavailableError('catalog')` (HTTP 503, docs/CONTRACT.md "Dependencies
 *   and faults"). No host, user or password reaches an error message or a log line.
 * - {@link PostgresCatalog.admin} changes the catalog (the admin CLI's operations).
 */
export class PostgresCatalog {
  /** The core's `CredentialStore`: live credentials by the SHA-256 digest of their secret; revoked ones are absent. */
  readonly credentials: CredentialStore;
  /** The core's `AgentCatalog`: agents by id, and an account's agents a page at a time, with description and creation time. */
  readonly agents: AgentCatalog & {
    findById(agentId: string): Promise<CatalogAgent | undefined>;
    listByAccount(accountId: string, page: PageRequest): Promise<Page<CatalogAgent>>;
  };
  /** The core's `ConnectionCatalog`: connections by UUID (any case), and an account's a page at a time; never their database details. */
  readonly connections: ConnectionCatalog & {
    findById(connectionId: string): Promise<CatalogConnection | undefined>;
    listByAccount(accountId: string, page: PageRequest): Promise<Page<CatalogConnection>>;
  };
  /**
   * The core's `WebhookEndpointCatalog` (docs/decisions.md "Webhooks"): an account's
   * endpoints in byte order of id, and endpoints by id, each with its signing secret
   * resolved (read from its environment variable, or decrypted with the catalog key) on
   * every call and never kept. An endpoint whose secret cannot be resolved (variable unset,
   * key missing, ciphertext that does not open) is skipped, with one warn log line naming
   * its id and why — never the secret: it gets no deliveries until fixed.
   */
  readonly webhookEndpoints: WebhookEndpointCatalog;
  /** Adds, lists, revokes and removes accounts, credentials, agents, connections and webhook endpoints. */
  readonly admin: CatalogAdmin;

  private closed = false;

  private constructor(
    private readonly context: CatalogContext,
    private readonly cache: LookupCache,
    private readonly listener: ChangeListener | undefined,
    private readonly logger: Logger,
  ) {
    const { db, schema } = context;
    this.credentials = {
      findByDigest: (sha256: string): Promise<StoredCredential | undefined> => {
        const digest = sha256.toLowerCase();
        if (!DIGEST.test(digest)) return Promise.resolve(undefined);
        return this.lookup(`credential:${digest}`, async () => {
          const row = await db.withSchema(schema).from<CredentialRow>('credentials').where({ sha256: digest }).whereNull('revoked_at').first();
          if (row === undefined) return undefined;
          const { createdAt: _createdAt, ...stored } = credentialOf(row);
          return Object.freeze(stored);
        });
      },
    };
    this.agents = {
      findById: (agentId: string): Promise<CatalogAgent | undefined> =>
        this.lookup(`agent:${agentId}`, async () => {
          const row = await db.withSchema(schema).from<AgentRow>('agents').where({ id: agentId }).first();
          return row === undefined ? undefined : agentOf(row);
        }),
      // By id in byte order ("C" collation: the order of JavaScript's string comparison for
      // the ASCII ids of a catalog, whatever the database's collation), one more row than
      // asked to know whether a next page follows. Cached like the lookups (the cache is
      // cleared on every change), so a list never mixes two states of the catalog.
      listByAccount: (accountId: string, page: PageRequest): Promise<Page<CatalogAgent>> =>
        this.lookup(`agents-page:${JSON.stringify([accountId, page.after ?? null, page.limit])}`, async () => {
          const query = db.withSchema(schema).from<AgentRow>('agents').where({ account_id: accountId });
          const after = positionForText(page.after);
          if (after !== undefined) query.andWhereRaw('id collate "C" > ?', [after]);
          const rows = await query.orderByRaw('id collate "C"').limit(page.limit + 1);
          return pageOfRows(rows.map(agentOf), page.limit, (a) => a.agentId);
        }),
    };
    this.connections = {
      findById: (connectionId: string): Promise<CatalogConnection | undefined> => {
        if (!isUuid(connectionId)) return Promise.resolve(undefined);
        const id = connectionId.toLowerCase();
        return this.lookup(`connection:${id}`, async () => {
          const row = await db.withSchema(schema).from<ConnectionRow>('connections').select(...CONNECTION_COLUMNS).where({ id }).first();
          return row === undefined ? undefined : connectionOf(row);
        });
      },
      // By UUID (the uuid type's order: that of the lower-case text), one more row than asked.
      listByAccount: (accountId: string, page: PageRequest): Promise<Page<CatalogConnection>> => {
        // A position that is no UUID was not given by this catalog: nothing sorts after it
        // meaningfully, so it is compared as text (uuid::text is the lower-case form).
        const after = positionForText(page.after?.toLowerCase());
        return this.lookup(`connections-page:${JSON.stringify([accountId, after ?? null, page.limit])}`, async () => {
          const query = db.withSchema(schema).from<ConnectionRow>('connections').select(...CONNECTION_COLUMNS).where({ account_id: accountId });
          if (after !== undefined) query.andWhereRaw('id::text collate "C" > ?', [after]);
          const rows = await query.orderBy('id').limit(page.limit + 1);
          return pageOfRows(rows.map(connectionOf), page.limit, (c) => c.connectionId);
        });
      },
    };
    // Rows are cached (secrets encrypted or by variable name); the secret is resolved per call.
    const endpointRows = (key: string, query: () => Promise<readonly WebhookEndpointRow[]>): Promise<WebhookEndpoint[]> =>
      this.lookup(key, async () => Object.freeze((await query()).map((row) => Object.freeze({ ...row, events: Object.freeze([...row.events]) }))) as readonly WebhookEndpointRow[]).then((rows) =>
        rows.flatMap((row) => {
          const endpoint = this.endpointOf(row);
          return endpoint === undefined ? [] : [endpoint];
        }),
      );
    this.webhookEndpoints = {
      listByAccount: (accountId: string): Promise<readonly WebhookEndpoint[]> =>
        endpointRows(`webhook-endpoints:${accountId}`, () =>
          db.withSchema(schema).from<WebhookEndpointRow>('webhook_endpoints').where({ account_id: accountId }).orderByRaw('id collate "C"'),
        ),
      findById: async (endpointId: string): Promise<WebhookEndpoint | undefined> => {
        // No id holds a NUL (a text parameter cannot carry one).
        if (endpointId.includes('\u0000')) return undefined;
        const [found] = await endpointRows(`webhook-endpoint:${endpointId}`, async () =>
          db.withSchema(schema).from<WebhookEndpointRow>('webhook_endpoints').where({ id: endpointId }),
        );
        return found;
      },
    };
    this.admin = new PostgresCatalogAdmin(context);
  }

  /** The core's endpoint of a row, its secret resolved; `undefined` (and a warn line) when it cannot be. */
  private endpointOf(row: WebhookEndpointRow): WebhookEndpoint | undefined {
    let secret: string;
    try {
      if (row.secret_env !== null) {
        const value = process.env[row.secret_env];
        if (value === undefined || value === '') throw new CatalogError('secret_unavailable', `environment variable ${row.secret_env} (the secret of webhook endpoint ${row.id}) is not set`);
        if (!isWebhookSecret(value)) throw new CatalogError('secret_unavailable', `environment variable ${row.secret_env} (the secret of webhook endpoint ${row.id}) is not whsec_ followed by the base64 of 24 to 64 bytes`);
        secret = value;
      } else {
        secret = this.context.cipher.decryptWebhookSecret(row.secret_encrypted ?? '', row.id);
      }
    } catch (error) {
      // CatalogError messages hold ids and variable names only.
      const reason = error instanceof CatalogError ? error.message : 'the secret could not be resolved';
      this.logger.warn({ component: 'catalog', endpoint_id: row.id, account_id: row.account_id, reason }, 'webhook endpoint skipped: its signing secret is not available to this process');
      return undefined;
    }
    return { endpointId: row.id, accountId: row.account_id, url: row.url, secret, events: row.events };
  }

  /**
   * Connects, checks that the schema is migrated, and (unless `cache: false`) starts
   * listening for changes. Never migrates: run {@link migrateCatalog} (the admin CLI's
   * `migrate`) first.
   *
   * @throws DependencyUnavailableError (`catalog`) when the database cannot be reached or
   *   does not answer within `timeoutMs`.
   * @throws CatalogNotMigratedError naming `migrateCommand` when migrations are pending.
   * @throws CatalogSchemaTooNewError when the schema was migrated by a newer version.
   * @throws CatalogInvalidError for a bad option (named).
   */
  static async open(options: PostgresCatalogOptions): Promise<PostgresCatalog> {
    const schema = checkSchemaName(options.schema ?? DEFAULT_CATALOG_SCHEMA);
    const timeoutMs = positiveInteger(options.timeoutMs, CATALOG_DEFAULTS.timeoutMs, 'timeoutMs');
    const poolMax = positiveInteger(options.poolMax, CATALOG_DEFAULTS.poolMax, 'poolMax');
    const cacheOptions = options.cache === false ? undefined : (options.cache ?? {});
    const maxEntries = positiveInteger(cacheOptions?.maxEntries, CATALOG_DEFAULTS.cacheMaxEntries, 'cache.maxEntries');
    const ttlMs = positiveInteger(cacheOptions?.ttlMs, CATALOG_DEFAULTS.cacheTtlMs, 'cache.ttlMs');
    const heartbeatMs = positiveInteger(options.heartbeatMs, CATALOG_DEFAULTS.heartbeatMs, 'heartbeatMs');
    const reconnectMinMs = positiveInteger(options.reconnect?.minDelayMs, CATALOG_DEFAULTS.reconnectMinDelayMs, 'reconnect.minDelayMs');
    const reconnectMaxMs = positiveInteger(options.reconnect?.maxDelayMs, CATALOG_DEFAULTS.reconnectMaxDelayMs, 'reconnect.maxDelayMs');
    if (reconnectMaxMs < reconnectMinMs) throw new CatalogInvalidError('reconnect.maxDelayMs', 'must be at least reconnect.minDelayMs');
    const logger = options.logger ?? silentLogger;

    const db = createKnex(options.connection, timeoutMs, poolMax);
    const cache = new LookupCache({ maxEntries, ttlMs });
    const context: CatalogContext = {
      db,
      schema,
      timeoutMs,
      cipher: new PasswordCipher(options.encryptionKey ?? { env: CATALOG_KEY_ENV }),
      changed: () => cache.invalidate(),
    };
    const listener =
      cacheOptions === undefined
        ? undefined
        : new ChangeListener({
            connection: options.listenConnection ?? options.connection,
            schema,
            timeoutMs,
            heartbeatMs,
            reconnectMinMs,
            reconnectMaxMs,
            logger,
            onChange: () => cache.invalidate(),
            onUp: () => cache.resume(),
            onDown: () => cache.suspend(),
          });
    // Both at once, so that open is bounded by about one timeoutMs, not two.
    const [checked, listening] = await Promise.allSettled([
      guardCatalog(timeoutMs, () => checkMigrated(db, schema, options.migrateCommand ?? CATALOG_DEFAULTS.migrateCommand)),
      listener === undefined ? Promise.resolve() : guardCatalog(timeoutMs * 2, () => listener.start()),
    ]);
    const failure = checked.status === 'rejected' ? checked : listening.status === 'rejected' ? listening : undefined;
    if (failure !== undefined) {
      listener?.close();
      await destroyWithin(db, timeoutMs);
      throw failure.reason;
    }
    return new PostgresCatalog(context, cache, listener, logger);
  }

  private lookup<T>(key: string, query: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new CatalogError('invalid', 'the catalog is closed'));
    return this.cache.get(key, () => guardCatalog(this.context.timeoutMs, query));
  }

  /**
   * The SQL Server details of a connection with its password resolved — read from the
   * environment variable it names, or decrypted with the catalog key — for the record
   * writer that opens the connection's pool. The row is cached like the lookups; the
   * password is resolved on every call and never kept.
   *
   * @returns `undefined` for an unknown connection, or one without SQL Server details
   *   (in-memory demo tables).
   * @throws CatalogError (`secret_unavailable`) when the environment variable is unset or
   *   the ciphertext does not open; (`key`) when the key is missing or malformed.
   * @throws DependencyUnavailableError (`catalog`) as the lookups.
   */
  async connectionDetails(connectionId: string): Promise<SqlServerConnectionDetails | undefined> {
    if (!isUuid(connectionId)) return undefined;
    const id = connectionId.toLowerCase();
    const { db, schema, cipher } = this.context;
    const row = await this.lookup(`details:${id}`, async () => {
      const found = await db.withSchema(schema).from<ConnectionRow>('connections').where({ id }).first();
      return found === undefined ? undefined : Object.freeze(found);
    });
    if (row === undefined || row.host === null) return undefined;
    let password: string;
    if (row.password_env !== null) {
      const value = process.env[row.password_env];
      if (value === undefined) throw new CatalogError('secret_unavailable', `environment variable ${row.password_env} (the password of connection ${id}) is not set`);
      password = value;
    } else {
      password = cipher.decrypt(row.password_encrypted ?? '', id);
    }
    return {
      host: row.host,
      port: row.port ?? 1433,
      database: row.database ?? '',
      user: row.user_name ?? '',
      password,
      encrypt: row.encrypt ?? true,
      trustServerCertificate: row.trust_server_certificate ?? false,
    };
  }

  /**
   * Asks the database a trivial query, bypassing the cache: for `/readyz` and the catalog's
   * availability metric.
   * @throws DependencyUnavailableError (`catalog`) when it does not answer within `timeoutMs`.
   */
  async ping(): Promise<void> {
    if (this.closed) throw new CatalogError('invalid', 'the catalog is closed');
    await guardCatalog(this.context.timeoutMs, () => this.context.db.raw('select 1'));
  }

  /** True while the LISTEN connection listens (the cache is served). */
  get listening(): boolean {
    return this.listener?.listening ?? false;
  }

  /** Counters since open, for metrics and readiness. */
  stats(): CatalogStats {
    const { hits, loads } = this.cache.counts();
    return { listening: this.listening, cacheHits: hits, loads };
  }

  /** Stops listening and closes the pool, within about `timeoutMs` whatever the server does. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listener?.close();
    this.cache.suspend();
    await destroyWithin(this.context.db, this.context.timeoutMs);
  }
}

/**
 * A position PostgreSQL can compare as text: a client can forge one with a NUL, which a
 * text parameter cannot hold (the statement would fail). No id holds a NUL, so for every
 * id, id > `p` + NUL + anything exactly when id > `p`: the part before the first NUL is
 * the same position.
 */
function positionForText(after: string | undefined): string | undefined {
  if (after === undefined) return undefined;
  const nul = after.indexOf('\u0000');
  return nul === -1 ? after : after.slice(0, nul);
}

/** A page of at most `limit` of `items` (read with one more), with `next` only when that one more was there. */
function pageOfRows<T>(items: readonly T[], limit: number, keyOf: (item: T) => string): Page<T> {
  if (items.length <= limit) return Object.freeze({ items: Object.freeze([...items]) });
  const taken = Object.freeze(items.slice(0, limit));
  return Object.freeze({ items: taken, next: keyOf(taken[taken.length - 1] as T) });
}

/** Destroys a knex pool, giving up after `timeoutMs` (a silent server never acknowledges a Terminate). */
async function destroyWithin(db: Knex, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    db.destroy().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}
