import { createHttpApp, createEgressApp, enforcedLimits, problemOf, type HttpApp, type HttpAppSettings } from '@svc/adapter-http';
import { createMcpEndpoint, type McpEndpoint } from '@svc/adapter-mcp';
import {
  createCore,
  DEFAULT_IDEMPOTENCY_LEASE_MS,
  DependencyUnavailableError,
  InMemoryIdempotencyStore,
  RandomIdGenerator,
  SystemClock,
  type AgentCatalog,
  type Clock,
  type ConnectionCatalog,
  type CredentialStore,
  type IdGenerator,
  type IdempotencyStore,
  type Logger,
  type Notifier,
  type RateLimitStore,
  type RecordWriter,
  type Core,
  type RunBackend,
  type Telemetry,
} from '@svc/core';
import { InMemoryRuns, QUIT_TIMEOUT_MS, within, type RunWorkerCloseReport } from '@svc/adapter-queue/memory';
import { FlexibleMemoryRateLimitStore } from '@svc/adapter-ratelimit/memory';
import type { BullMqRunsSettings } from '@svc/adapter-queue';
import { openFileStorage, type FileStorage } from './file-storage.js';
import type { SqlServerConnectionSettings } from '@svc/adapter-sqlserver';
import type { PostgresCatalog } from '@svc/adapter-postgres';
import { randomBytes } from 'node:crypto';
import { Container, type ServiceIdentifier } from 'inversify';
import { renderDocsSite } from './docs-site.js';
import { LiveCatalogs } from './live-catalogs.js';
import { RoutingRecordWriter, type SqlServerWriterFactory, type WriteTarget } from './routing-record-writer.js';
import { ConfigError, type ServerSettings } from './settings.js';
import { closeSteps, droppedClientNotes } from './shutdown.js';

const id = <T>(name: string): ServiceIdentifier<T> => Symbol.for(`svc.${name}`) as ServiceIdentifier<T>;

/** Service identifiers of the container. */
export const TOKENS = {
  settings: id<ServerSettings>('settings'),
  logger: id<Logger>('logger'),
  clock: id<Clock>('clock'),
  ids: id<IdGenerator>('ids'),
  /** The catalogs of the configured accounts, replaced whole by a configuration reload. */
  catalogs: id<LiveCatalogs>('catalogs'),
  credentials: id<CredentialStore>('credentials'),
  connections: id<ConnectionCatalog>('connections'),
  agents: id<AgentCatalog>('agents'),
  rateLimitStore: id<RateLimitStore>('rateLimitStore'),
  recordWriter: id<RecordWriter>('recordWriter'),
  /** The wired core (`createCore`): every use case, the rate-limit policy and the runs. */
  core: id<Core<RunBackend>>('core'),
  adapters: id<Adapters>('adapters'),
  /** The metrics of this server (`observability/metrics.ts`); absent: none are kept. */
  telemetry: id<Telemetry | undefined>('telemetry'),
} as const;

/** Connection ids served by in-memory demo tables (no database details configured). */
export function emulatedConnectionIds(settings: ServerSettings): Set<string> {
  return new Set(settings.accounts.flatMap((a) => a.connections.filter((c) => c.type === 'sqlserver' && c.sqlserver === undefined).map((c) => c.id)));
}

/**
 * Where the writes of each `sqlserver` connection of `settings` go: its SQL Server (the
 * password read from the environment, see {@link sqlServerConnections}), or its own demo
 * tables when it has no database details. Other types are never written to.
 * @throws ConfigError naming the connection whose password variable is not set.
 */
export function writeTargets(settings: ServerSettings, env: NodeJS.ProcessEnv = process.env): Map<string, WriteTarget> {
  const sqlServer = sqlServerConnections(settings, env);
  const targets = new Map<string, WriteTarget>();
  for (const id of emulatedConnectionIds(settings)) targets.set(id, { kind: 'demo' });
  for (const [id, details] of sqlServer) targets.set(id, { kind: 'sqlserver', details });
  return targets;
}

/** True when one of `targets` is a SQL Server (the adapter must then be loaded). */
export function needsSqlServer(targets: ReadonlyMap<string, WriteTarget>): boolean {
  return [...targets.values()].some((t) => t.kind === 'sqlserver');
}

/**
 * Loads adapter-sqlserver on first call and makes one `SqlServerRecordWriter` per
 * connection, with the timeouts, pool bound and egress address of `settings` (settings
 * that stay as they were at start, docs/decisions.md "Configuration reload").
 */
export function sqlServerWriterFactory(settings: ServerSettings, logger: Logger): () => Promise<SqlServerWriterFactory> {
  let loading: Promise<SqlServerWriterFactory> | undefined;
  return () =>
    (loading ??= import('@svc/adapter-sqlserver').then(
      ({ SqlServerRecordWriter }) =>
        (connectionId, details) =>
          new SqlServerRecordWriter({
            connections: new Map([[connectionId, details]]),
            ...(settings.egressSourceAddress !== undefined ? { egressSourceAddress: settings.egressSourceAddress } : {}),
            connectTimeoutMs: settings.sqlserver.connectTimeoutMs,
            requestTimeoutMs: settings.sqlserver.requestTimeoutMs,
            pool: { max: settings.sqlserver.poolMax },
            logger,
          }),
    ));
}

/**
 * The SQL Server details of every configured `sqlserver` connection, the password read
 * from the environment variable the configuration names.
 * @throws ConfigError naming the connection when that variable is not set.
 */
export function sqlServerConnections(settings: ServerSettings, env: NodeJS.ProcessEnv = process.env): Map<string, SqlServerConnectionSettings> {
  const out = new Map<string, SqlServerConnectionSettings>();
  settings.accounts.forEach((account, a) =>
    account.connections.forEach((c, i) => {
      if (c.type !== 'sqlserver' || c.sqlserver === undefined) return;
      const password = env[c.sqlserver.passwordEnv];
      if (password === undefined) {
        throw new ConfigError(
          `invalid configuration:\n  accounts[${a}].connections[${i}].sqlserver.password_env: environment variable ${c.sqlserver.passwordEnv} is not set`,
        );
      }
      const { passwordEnv: _, ...details } = c.sqlserver;
      out.set(c.id, { ...details, password });
    }),
  );
  return out;
}

/**
 * Reads Redis's persistence and eviction settings once at start and logs one warning per
 * setting that could lose a run answered 202; with `redis.require_durable: true` such a
 * setting (or settings that cannot be read) stops the start instead. Used by the API
 * server and the standalone worker alike; does nothing without `redis_url`.
 * Source: issue "Faults" part 5; README "Running it for real".
 * @throws ConfigError naming every unsafe setting, when `redis.require_durable` is true.
 */
export async function checkRedisDurability(settings: ServerSettings, logger: Logger): Promise<void> {
  if (settings.redisUrl === undefined) return;
  const { redisDurabilityFindings } = await import('@svc/adapter-queue');
  const findings = await redisDurabilityFindings(settings.redisUrl);
  for (const f of findings) {
    logger.warn({ component: 'redis', setting: f.setting, value: f.value, required: f.required }, `Redis setting unsafe for durable runs: ${f.risk}`);
  }
  if (findings.length > 0 && settings.durability.redisRequireDurable) {
    throw new ConfigError(
      `redis.require_durable is true, but Redis ${findings.map((f) => `${f.setting} is ${f.value} (needs ${f.required})`).join('; ')}`,
    );
  }
}

/**
 * The settings of {@link BullMqRunsSettings} from the server settings, the same for the
 * API server and the standalone worker: `redis_url`, `redis_prefix`, the run store's
 * share of `dependency_timeout_ms` ({@link redisBudget}) and `runs.retention_seconds`.
 * @throws ConfigError when `redis_url` is not set.
 */
export function bullMqSettingsOf(settings: ServerSettings): BullMqRunsSettings {
  if (settings.redisUrl === undefined) throw new ConfigError('durable runs need redis_url (or REDIS_URL)');
  return {
    redis: settings.redisUrl,
    prefix: settings.redisPrefix,
    operationTimeoutMs: redisBudget(settings.dependencyTimeoutMs).runsMs,
    finishedRunTtlSeconds: settings.durability.runRetentionSeconds,
  };
}

/**
 * How `dependency_timeout_ms` is shared by the Redis calls of one request, so that a
 * request facing a lost, failing or paused Redis is answered 503 within it: the rate
 * limiter's script runs first (a quarter: past it the insurance decides), then the run
 * queue's or run store's call (a half: past it, 503). A quarter is left for the process
 * itself (event loop, HTTP). `/readyz` pings within the run store's half.
 * Source: docs/CONTRACT.md "Dependencies and faults".
 */
export function redisBudget(dependencyTimeoutMs: number): { readonly rateLimiterMs: number; readonly runsMs: number; readonly idempotencyMs: number } {
  const quarter = Math.max(25, Math.floor(dependencyTimeoutMs / 4));
  return { rateLimiterMs: quarter, runsMs: Math.max(50, Math.floor(dependencyTimeoutMs / 2)), idempotencyMs: quarter };
}

/**
 * The lease of an in-flight `Idempotency-Key` claim, in ms: at least 60 s, and longer than
 * the longest request this server can be busy with (a row write: SQL Server connect and
 * request timeouts, plus two dependency bounds), so that a retry of a request still
 * running is answered 409 and never runs it twice. Source: docs/decisions.md "Idempotency keys".
 */
export function idempotencyLeaseMs(settings: Pick<ServerSettings, 'sqlserver' | 'dependencyTimeoutMs'>): number {
  return Math.max(DEFAULT_IDEMPOTENCY_LEASE_MS, settings.sqlserver.connectTimeoutMs + settings.sqlserver.requestTimeoutMs + 2 * settings.dependencyTimeoutMs);
}

/** The adapters picked for one configuration, each closed on shutdown. */
export interface Adapters {
  readonly rateLimitStore: RateLimitStore & { close?(): Promise<void> };
  readonly runs: RunBackend;
  /**
   * `Idempotency-Key`s: in Redis (shared by every instance) when `redis_url` is set, in
   * memory otherwise; absent only in the partial sets closed when a start fails.
   */
  readonly idempotency?: IdempotencyStore & { close?(): Promise<void> };
  /** File records and bytes (`file-storage.ts`); absent only in the partial sets closed when a start fails. */
  readonly files?: FileStorage;
  /** Routes each connection's writes; rerouted by a configuration reload. */
  readonly recordWriter: RoutingRecordWriter;
  /** Makes SQL Server writers with the settings of the start (loads adapter-sqlserver on first call). */
  readonly sqlServerWriters: () => Promise<SqlServerWriterFactory>;
  /** Named readiness checks of the dependencies (`/readyz`). */
  readonly readiness: Record<string, () => Promise<boolean>>;
  /**
   * The PostgreSQL catalog (`catalog.postgres`), whose credentials, agents and connections
   * the core reads instead of the configuration's accounts; absent: the configuration's.
   */
  readonly catalog?: PostgresCatalog;
  /**
   * The key list cursors are signed with when `SVC_CURSOR_KEY` is not set and Redis is:
   * shared by every instance through Redis ({@link sharedCursorKey}). Absent otherwise.
   */
  readonly cursorKey?: string;
}

/**
 * The key list cursors are signed with, shared by every instance on one Redis when
 * `SVC_CURSOR_KEY` is not set: the first instance to start stores 32 random bytes at
 * `{redis_prefix}:cursor-key` (`SET NX`, no expiry), every instance reads what is stored,
 * so a cursor one instance signed is accepted by the others. A Redis that loses its data
 * (no persistence) and restarts gets a new key from the next instance to start; cursors
 * signed with the old one are then refused by it (400 `invalid_cursor`: the client starts
 * the list again). `SVC_CURSOR_KEY` avoids both the stored key and that case.
 * Bounded by `dependency_timeout_ms` per command (a request client: no offline queue).
 * Source: docs/decisions.md "Discovery: agents and connections".
 * @throws DependencyUnavailableError when Redis does not answer within the bound.
 */
export async function sharedCursorKey(redisUrl: string, prefix: string, timeoutMs: number, logger: Logger): Promise<string> {
  const { createRedisClient, requestClientOptions } = await import('@svc/adapter-queue');
  const client = createRedisClient(redisUrl, { ...requestClientOptions(timeoutMs), lazyConnect: true }, logger, 'cursor-key');
  const key = `${prefix}:cursor-key`;
  try {
    await client.connect();
    await client.set(key, randomBytes(32).toString('hex'), 'NX');
    const stored = await client.get(key);
    if (stored === null || stored.length < 32) throw new DependencyUnavailableError('redis');
    return stored;
  } catch (error) {
    if (error instanceof DependencyUnavailableError) throw error;
    throw new DependencyUnavailableError('redis', { cause: error });
  } finally {
    await within(client.quit().catch(() => undefined), QUIT_TIMEOUT_MS);
    client.disconnect();
  }
}

/**
 * Opens the PostgreSQL catalog of `catalog.postgres` (adapter-postgres, loaded only then),
 * bounded by its `timeout_ms` (each step of `open`: connect, migration check, LISTEN).
 * Never migrates: an unmigrated schema stops the start with `CatalogNotMigratedError`, whose
 * message names `svc-server migrate`.
 * @throws ConfigError when the URL's environment variable is not set; the adapter's
 *   `CatalogNotMigratedError` / `CatalogSchemaTooNewError`; `DependencyUnavailableError`
 *   when the database cannot be reached within the bound.
 */
export async function openCatalog(settings: ServerSettings, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<PostgresCatalog | undefined> {
  const postgres = settings.catalog?.postgres;
  if (postgres === undefined) return undefined;
  const url = env[postgres.urlEnv];
  if (url === undefined || url === '') {
    throw new ConfigError(`invalid configuration:\n  catalog.postgres.url_env: environment variable ${postgres.urlEnv} (the catalog database URL) is not set`);
  }
  const { PostgresCatalog } = await import('@svc/adapter-postgres');
  return PostgresCatalog.open({ connection: url, schema: postgres.schema, timeoutMs: postgres.timeoutMs, logger });
}

/**
 * `/readyz`'s and `svc_dependency_up`'s `catalog` check: the catalog answers a trivial
 * query (`ping`, bypassing the cache) within its `timeout_ms`.
 */
export function catalogReadiness(catalog: PostgresCatalog): () => Promise<boolean> {
  return () => catalog.ping().then(
    () => true,
    () => false,
  );
}

/**
 * The one place that picks adapters: Redis-backed limits (rate-limiter-flexible, Lua,
 * all-or-none) and durable runs (BullMQ) when `redis_url` is set, in-memory ones
 * otherwise; SQL Server for configured connections, demo tables for the rest.
 *
 * @throws when Redis is configured but does not answer (the run queue must be durable
 *   before the server promises anything).
 */
export async function pickAdapters(settings: ServerSettings, logger: Logger): Promise<Adapters> {
  // The catalog first: a catalog that is not migrated or cannot be reached stops the start
  // before any Redis client exists.
  const catalog = await openCatalog(settings, logger);
  let others: Adapters;
  try {
    others = await pickOtherAdapters(settings, logger, catalog);
  } catch (error) {
    await within(catalog?.close() ?? Promise.resolve(), QUIT_TIMEOUT_MS);
    throw error;
  }
  try {
    return { ...others, files: await openFileStorage(settings, logger, redisBudget(settings.dependencyTimeoutMs).runsMs) };
  } catch (error) {
    await closeAdapters(others, QUIT_TIMEOUT_MS);
    throw error;
  }
}

async function pickOtherAdapters(settings: ServerSettings, logger: Logger, catalog: PostgresCatalog | undefined): Promise<Adapters> {
  const prefix = settings.redisPrefix;
  // Redis, BullMQ and SQL Server stacks are loaded only when configured: an in-memory
  // server starts faster and smaller (bench/BENCHMARKS.md: RSS idle, start to listening).
  let rateLimitStore: Adapters['rateLimitStore'];
  let runs: RunBackend;
  let readiness: Record<string, () => Promise<boolean>> = catalog === undefined ? {} : { catalog: catalogReadiness(catalog) };
  let cursorKey: string | undefined;
  let idempotency: NonNullable<Adapters['idempotency']>;
  if (settings.redisUrl !== undefined) {
    const [{ RedisRateLimitStore }, { BullMqRuns, RedisIdempotencyStore }] = await Promise.all([import('@svc/adapter-ratelimit'), import('@svc/adapter-queue')]);
    await checkRedisDurability(settings, logger);
    const budget = redisBudget(settings.dependencyTimeoutMs);
    const limiter = await RedisRateLimitStore.connect(settings.redisUrl, {
      keyPrefix: `${prefix}:rl:`,
      instanceCount: settings.rateLimits.instanceCount,
      logger,
      commandTimeoutMs: budget.rateLimiterMs,
      readyTimeoutMs: settings.dependencyTimeoutMs,
    });
    let bullMq: Awaited<ReturnType<typeof BullMqRuns.connect>>;
    try {
      bullMq = await BullMqRuns.connect(bullMqSettingsOf(settings), { logger });
    } catch (error) {
      // The limiter's client reconnects for ever: left open, it would hold the process.
      await within(limiter.close(), QUIT_TIMEOUT_MS);
      throw error;
    }
    rateLimitStore = limiter;
    runs = bullMq;
    readiness = { ...readiness, redis: () => bullMq.ready() };
    try {
      idempotency = await RedisIdempotencyStore.connect(settings.redisUrl, { prefix, operationTimeoutMs: budget.idempotencyMs, logger });
    } catch (error) {
      await closeAdapters({ rateLimitStore, runs, recordWriter: new RoutingRecordWriter(new Map()), sqlServerWriters: sqlServerWriterFactory(settings, logger), readiness }, QUIT_TIMEOUT_MS);
      throw error;
    }
    if (settings.cursorKey === undefined) {
      try {
        cursorKey = await sharedCursorKey(settings.redisUrl, prefix, settings.dependencyTimeoutMs, logger);
      } catch (error) {
        await closeAdapters({ rateLimitStore, runs, idempotency, recordWriter: new RoutingRecordWriter(new Map()), sqlServerWriters: sqlServerWriterFactory(settings, logger), readiness }, QUIT_TIMEOUT_MS);
        throw error;
      }
    }
  } else {
    idempotency = new InMemoryIdempotencyStore();
    rateLimitStore = new FlexibleMemoryRateLimitStore();
    runs = new InMemoryRuns({ retentionSeconds: settings.durability.runRetentionSeconds, maxFinishedRuns: settings.durability.maxFinishedRunsInMemory });
  }
  const sqlServerWriters = sqlServerWriterFactory(settings, logger);
  if (catalog !== undefined) {
    // Each write asks the catalog for its connection's details (cached; the cache is
    // cleared by the catalog's NOTIFY on every change): a changed connection gets a new
    // writer within the catalog's propagation, its old writer closes after its writes.
    const recordWriter = new RoutingRecordWriter(new Map(), undefined, logger, {
      resolve: catalogWriteTarget(catalog, logger),
      sqlServer: sqlServerWriters,
    });
    return { rateLimitStore, runs, idempotency, recordWriter, sqlServerWriters, readiness, catalog, ...(cursorKey !== undefined ? { cursorKey } : {}) };
  }
  let targets: Map<string, WriteTarget>;
  try {
    targets = writeTargets(settings);
  } catch (error) {
    await closeAdapters({ rateLimitStore, runs, idempotency, recordWriter: new RoutingRecordWriter(new Map()), sqlServerWriters, readiness }, QUIT_TIMEOUT_MS);
    throw error;
  }
  const recordWriter = new RoutingRecordWriter(targets, needsSqlServer(targets) ? await sqlServerWriters() : undefined, logger);
  return { rateLimitStore, runs, idempotency, recordWriter, sqlServerWriters, readiness, ...(cursorKey !== undefined ? { cursorKey } : {}) };
}

/**
 * Where a connection's writes go, as the PostgreSQL catalog describes it: `{kind:
 * 'sqlserver', details}`, or `{kind: 'demo'}` for a connection without details.
 *
 * A connection whose password this process cannot read — its environment variable unset,
 * or stored encrypted without a usable `SVC_CATALOG_KEY` (adapter-postgres `CatalogError`
 * `secret_unavailable` or `key`) — cannot be written to from here:
 * the write answers 503 `service_unavailable` with `Retry-After` (the core's
 * `DependencyUnavailableError`, dependency `connection_secret`; docs/CONTRACT.md
 * "Dependencies and faults": a lost dependency is a 503, never a 500), and the error is
 * logged with the connection id and the variable's name — never a value.
 *
 * @param catalog - the catalog's `connectionDetails` (cached, cleared by its NOTIFY).
 * @throws DependencyUnavailableError as above; the catalog's own errors (a lost catalog is
 *   already a `DependencyUnavailableError`) pass through.
 */
export function catalogWriteTarget(catalog: Pick<PostgresCatalog, 'connectionDetails'>, logger: Logger): (connectionId: string) => Promise<WriteTarget> {
  return async (connectionId) => {
    try {
      const details = await catalog.connectionDetails(connectionId);
      return details === undefined ? { kind: 'demo' } : { kind: 'sqlserver', details };
    } catch (error) {
      // Duck-typed: adapter-postgres is loaded only when the catalog is configured.
      const code = error instanceof Error && error.name === 'CatalogError' ? (error as Error & { code?: unknown }).code : undefined;
      if (code === 'secret_unavailable' || code === 'key') {
        logger.error({ component: 'catalog', connection_id: connectionId, reason: (error as Error).message }, 'a connection\'s password is not available to this process');
        throw new DependencyUnavailableError('connection_secret', { cause: error });
      }
      throw error;
    }
  };
}

/** What {@link closeAdapters} left undone. */
export interface AdaptersCloseReport {
  /** Close steps that did not finish within their bound or failed, and clients dropped. */
  readonly unfinished: readonly string[];
  /** The runs' close report (runs abandoned in a durable queue, runs lost in memory). */
  readonly runs: RunWorkerCloseReport;
}

const adapterClosings = new WeakMap<Adapters, Promise<AdaptersCloseReport>>();

/**
 * Closes what the adapters hold, once (a second call returns the first one's promise):
 * the runs (workers, then the queue and the Redis clients), the rate limiter's Redis
 * client and the SQL Server pools, at the same time, each bounded by `budgetMs` (no
 * bound when not finite). Every Redis QUIT is bounded by `QUIT_TIMEOUT_MS` (1 s) whatever
 * `budgetMs` is: a lost or paused Redis never answers one (the runs' clients are then
 * dropped; the limiter's is left to the process's exit).
 * @returns the close steps that did not finish in time or failed, and the runs' report.
 */
export function closeAdapters(adapters: Adapters, budgetMs: number): Promise<AdaptersCloseReport> {
  let closing = adapterClosings.get(adapters);
  if (closing === undefined) {
    let runs: RunWorkerCloseReport = { abandonedRunIds: [] };
    closing = closeSteps(
      {
        // Workers stopped during the drain; closing one again returns its first report.
        runs: async () => {
          runs = (await adapters.runs.close()) ?? runs;
          return droppedClientNotes(runs.droppedClients);
        },
        'rate limiter': async () => {
          const quit = await within(adapters.rateLimitStore.close?.() ?? Promise.resolve(), QUIT_TIMEOUT_MS);
          if (quit.outcome === 'failed') throw quit.error;
          return quit.outcome === 'timeout' ? ['Redis client left open (QUIT not answered)'] : [];
        },
        'SQL Server pools': async () => void (await adapters.recordWriter.close()),
        // RedisIdempotencyStore.close is bounded by QUIT_TIMEOUT_MS (it drops a client whose QUIT is not answered).
        ...(adapters.idempotency?.close === undefined ? {} : { 'idempotency store': async () => void (await adapters.idempotency?.close?.()) }),
        // PostgresCatalog.close is bounded by the catalog's timeout_ms whatever the server does.
        ...(adapters.catalog === undefined ? {} : { catalog: async () => void (await adapters.catalog?.close()) }),
        ...(adapters.files === undefined ? {} : { 'file storage': async () => void (await within(adapters.files?.close() ?? Promise.resolve(), QUIT_TIMEOUT_MS)) }),
      },
      budgetMs,
    ).then((unfinished) => ({ unfinished, runs }));
    adapterClosings.set(adapters, closing);
  }
  return closing;
}

/**
 * Builds the container of the API server: value and factory bindings only (no
 * decorators), singletons, and async deactivation hooks that close what holds
 * resources; `await container.unbindAllAsync()` runs them.
 */
export function buildContainer(settings: ServerSettings, logger: Logger, adapters: Adapters, telemetry?: Telemetry, notifier?: Notifier): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  // The settings of the start: their accounts are not updated by a reload (the live
  // ones are in TOKENS.catalogs), every other setting stays as it is while running.
  container.bind(TOKENS.settings).toConstantValue(settings);
  container.bind(TOKENS.logger).toConstantValue(logger);
  container.bind(TOKENS.clock).toConstantValue(new SystemClock());
  container.bind(TOKENS.ids).toConstantValue(new RandomIdGenerator());
  const catalogs = new LiveCatalogs(settings.accounts);
  container.bind(TOKENS.catalogs).toConstantValue(catalogs);
  // With catalog.postgres, the core reads the PostgreSQL catalog (the configuration's
  // accounts are empty then, and a reload leaves these bindings as they are).
  const ports = adapters.catalog ?? catalogs;
  container.bind(TOKENS.credentials).toConstantValue(ports.credentials);
  container.bind(TOKENS.connections).toConstantValue(ports.connections);
  container.bind(TOKENS.agents).toConstantValue(ports.agents);
  container.bind(TOKENS.adapters).toConstantValue(adapters).onDeactivation(async (a) => {
    await closeAdapters(a, Number.POSITIVE_INFINITY);
  });
  container.bind(TOKENS.rateLimitStore).toConstantValue(adapters.rateLimitStore);
  container.bind(TOKENS.recordWriter).toConstantValue(adapters.recordWriter);
  container.bind(TOKENS.telemetry).toConstantValue(telemetry);
  container.bind(TOKENS.core).toResolvedValue(
    (credentials: CredentialStore, clock: Clock, ids: IdGenerator, connections: ConnectionCatalog, agents: AgentCatalog, recordWriter: RecordWriter, rateLimitStore: RateLimitStore) =>
      createCore(
        {
          credentials,
          clock,
          ids,
          connections,
          agents,
          recordWriter,
          rateLimitStore,
          runs: adapters.runs,
          ...(adapters.idempotency !== undefined ? { idempotency: adapters.idempotency } : {}),
          ...(adapters.files !== undefined ? { fileCatalog: adapters.files.catalog, fileStore: adapters.files.store } : {}),
          logger,
          // Told of a queued run cancelled here (the worker's notifier tells of the others).
          ...(notifier !== undefined ? { notifier } : {}),
          ...(telemetry !== undefined ? { telemetry } : {}),
        },
        {
          idempotency: { leaseMs: idempotencyLeaseMs(settings) },
          // docs/CONTRACT.md "Files": files.max_bytes, upload_ttl_seconds, retention_days, verify_keys.
          files: { maxBytes: settings.files.maxBytes, uploadTtlMs: settings.files.uploadTtlSeconds * 1000, retentionDays: settings.files.retentionDays, verifyKeys: settings.files.verifyKeys },
          baseUrl: settings.baseUrl,
          egressUrl: settings.egressUrl,
          rateLimits: settings.rateLimits,
          // Shown as every connection's egress_source_address (docs/decisions.md "Discovery: agents and connections").
          ...(settings.egressSourceAddress !== undefined ? { egressSourceAddress: settings.egressSourceAddress } : {}),
          // SVC_CURSOR_KEY, else the key shared through Redis, else one of this process (one instance).
          ...((settings.cursorKey ?? adapters.cursorKey) !== undefined ? { cursorKey: (settings.cursorKey ?? adapters.cursorKey) as string } : {}),
          index: {
            ...(settings.index.name !== undefined ? { name: settings.index.name } : {}),
            ...(settings.index.documentationUrl !== undefined ? { documentationUrl: settings.index.documentationUrl } : {}),
            ...(settings.index.accessRequestUrl !== undefined ? { accessRequestUrl: settings.index.accessRequestUrl } : {}),
            ...(settings.index.trial !== undefined ? { trial: settings.index.trial } : {}),
            ...(settings.index.publicSandboxAvailable !== undefined ? { publicSandboxAvailable: settings.index.publicSandboxAvailable } : {}),
          },
        },
      ),
    [TOKENS.credentials, TOKENS.clock, TOKENS.ids, TOKENS.connections, TOKENS.agents, TOKENS.recordWriter, TOKENS.rateLimitStore],
  );
  return container;
}

/** Settings of the two Koa apps, from the server settings. */
export function httpSettings(settings: ServerSettings, logger: Logger, isDraining: () => boolean, readiness: Record<string, () => Promise<boolean>> = {}, telemetry?: Telemetry) {
  return {
    baseUrl: settings.baseUrl,
    egressUrl: settings.egressUrl,
    deprecations: settings.deprecations,
    logger,
    readiness,
    isDraining,
    // docs/decisions.md "Observability": request metrics, CORS origins, trusted proxies.
    ...(telemetry !== undefined ? { telemetry } : {}),
    corsOrigins: settings.observability.corsOrigins,
    trustedProxies: settings.observability.trustedProxies,
    runEventsKeepAliveMs: settings.runEventsKeepAliveMs,
  };
}

/** `serverInfo.version` of the MCP endpoint: the API's version (the OpenAPI document's `info.version`). */
const MCP_SERVER_VERSION = '1.0.0';

/**
 * Builds both Koa apps from the container, and the agents' MCP endpoint they mount (closed
 * at stop). `closingStreams`, aborted when the drain begins, ends the open run events streams.
 */
export function buildApps(container: Container, isDraining: () => boolean, closingStreams?: AbortSignal): { main: HttpApp; egress: HttpApp; mcp: McpEndpoint } {
  const settings = container.get(TOKENS.settings);
  const logger = container.get(TOKENS.logger);
  const useCases = container.get(TOKENS.core);
  // The agents' MCP endpoint: adapter-mcp's tools on the same use cases, mounted by the
  // HTTP adapter (adapters never import each other; docs/decisions.md "MCP").
  const mcp = createMcpEndpoint(useCases, { name: 'svc', version: MCP_SERVER_VERSION, problemOf, logger });
  const app: HttpAppSettings = {
    ...httpSettings(settings, logger, isDraining, container.get(TOKENS.adapters).readiness, container.get(TOKENS.telemetry)),
    mcp,
    ...(closingStreams !== undefined ? { closingStreams } : {}),
  };
  // The docs site under /docs, rendered once with this server's index and limits (docs/decisions.md "Docs site").
  const docs = renderDocsSite({ index: useCases.describeApi.execute(), limits: enforcedLimits(useCases.rateLimits.settings, app), egressUrl: settings.egressUrl });
  if (docs === undefined) logger.warn({}, 'docs site not served: docs/guides is not there; /docs answers the llms.txt text');
  const s: HttpAppSettings = docs === undefined ? app : { ...app, docs };
  return { main: createHttpApp(useCases, s), egress: createEgressApp(useCases, s), mcp };
}
