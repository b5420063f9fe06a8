import { isDeepStrictEqual } from 'node:util';
import { InMemoryRecordWriter, silentLogger, type InsertCommand, type Logger, type RecordWriter, type Result, type UpdateCommand, type WriteError, type WriteOutcome } from '@svc/core';
import type { SqlServerConnectionSettings, SqlServerPoolStats } from '@svc/adapter-sqlserver';

/**
 * Where the writes of one `sqlserver` connection go: its own in-memory demo tables (no
 * database details configured, development), or the SQL Server its details name.
 */
export type WriteTarget = { readonly kind: 'demo' } | { readonly kind: 'sqlserver'; readonly details: SqlServerConnectionSettings };

/** A writer that holds resources (SQL Server pools): `close` waits for its in-flight writes, then closes them. */
export interface ClosableRecordWriter extends RecordWriter {
  close(): Promise<void>;
}

/** Makes the writer of one SQL Server connection (its pools are opened on first use). */
export type SqlServerWriterFactory = (connectionId: string, details: SqlServerConnectionSettings) => ClosableRecordWriter;

/** What {@link RoutingRecordWriter.reroute} changed. */
export interface RerouteReport {
  /** Connections (lower-case ids) whose SQL Server writer was retired: removed, or their details changed. */
  readonly sqlServerRetired: readonly string[];
}

/**
 * Routes read from a catalog at each write instead of set by {@link RoutingRecordWriter.reroute}
 * (a PostgreSQL catalog: README "A catalog for several instances (PostgreSQL)").
 */
export interface CatalogRoutes {
  /**
   * Where the writes of a connection (lower-case id) go now: e.g. `{kind: 'sqlserver',
   * details}` from adapter-postgres's `connectionDetails` (cached, the cache cleared by the
   * catalog's NOTIFY on every change), `{kind: 'demo'}` for a connection without details.
   * May reject (a lost catalog: the core's `DependencyUnavailableError`, answered 503).
   */
  resolve(connectionId: string): Promise<WriteTarget>;
  /** Makes SQL Server writers (loads adapter-sqlserver on first call). */
  sqlServer(): Promise<SqlServerWriterFactory>;
}

interface Route {
  readonly target: WriteTarget;
  readonly writer: RecordWriter & { close?(): Promise<void> };
}

/** The demo tables of one emulated connection: `dbo.orders` (id, sku, qty, note, status), one row. */
export function demoRecordWriter(): InMemoryRecordWriter {
  const writer = new InMemoryRecordWriter();
  writer.defineTable('dbo.orders', ['id', 'sku', 'qty', 'note', 'status'], [{ id: 1, sku: 'A-1', qty: 1, note: null, status: 'new' }]);
  return writer;
}

/**
 * Sends each write to the writer of its connection: one SQL Server writer (with its own
 * pools) per configured SQL Server connection, one set of in-memory demo tables per
 * connection without database details (docs/CONTRACT.md "Isolation between accounts":
 * demo connections never share tables).
 *
 * The routes change with the configuration ({@link reroute}, docs/decisions.md
 * "Configuration reload"): a connection whose target is unchanged keeps its writer (pools,
 * demo rows); a removed SQL Server connection, or one whose details changed, has its
 * writer closed once the writes already in flight on it have ended.
 */
export class RoutingRecordWriter implements RecordWriter {
  private routes: ReadonlyMap<string, Route>;
  /** Closes of retired writers still running: `close()` waits for them too. */
  private readonly retiring = new Set<Promise<void>>();
  private closing: Promise<void> | undefined;

  /**
   * @param targets - lower-case connection id → where its writes go.
   * @param sqlServer - makes SQL Server writers; needed only when a target is `sqlserver`.
   * @param logger - where a retired writer that fails to close is reported (no host, user or password).
   * @param catalog - when given, each write first asks it where its connection's writes go
   *   (`targets` is then usually empty): the writer of a connection is made at its first
   *   write, and a connection whose details changed since gets a new writer while the old
   *   one is retired (closed after its in-flight writes). So a changed connection never
   *   keeps its old details past the catalog's propagation (within a second). A removed
   *   connection is refused by the connection catalog before any write reaches this writer;
   *   its writer stays idle until {@link close}.
   * @throws Error when a target is `sqlserver` and no factory is given (a bug of the composition root).
   */
  constructor(
    targets: ReadonlyMap<string, WriteTarget>,
    sqlServer?: SqlServerWriterFactory,
    private readonly logger: Logger = silentLogger,
    private readonly catalog?: CatalogRoutes,
  ) {
    this.routes = this.routesFor(targets, new Map(), sqlServer);
  }

  /** Connection ids (lower case) this writer routes now. */
  connectionIds(): string[] {
    return [...this.routes.keys()];
  }

  /**
   * Replaces the routes at once (synchronously: no write sees half of them). Targets that
   * did not change keep their writer; a retired SQL Server writer is closed in the
   * background, after its in-flight writes (`SqlServerRecordWriter.close`), and
   * {@link close} waits for that too.
   *
   * Writes find their connection in the connection catalog and call this writer within
   * the same run of microtasks (core `executeRecordWrite`): a reload, which runs in a later
   * task, swaps the catalog and these routes together, so no write reaches a route that
   * is gone.
   *
   * @param sqlServer - makes the writers of new SQL Server connections.
   * @throws Error when a new target is `sqlserver` and no factory is given; nothing is changed then.
   */
  reroute(targets: ReadonlyMap<string, WriteTarget>, sqlServer?: SqlServerWriterFactory): RerouteReport {
    if (this.closing !== undefined) throw new Error('RoutingRecordWriter is closed');
    const previous = this.routes;
    const kept = new Set<Route['writer']>();
    const next = this.routesFor(targets, previous, sqlServer, kept);
    this.routes = next;
    const sqlServerRetired: string[] = [];
    for (const [id, route] of previous) {
      if (kept.has(route.writer)) continue;
      if (route.target.kind === 'sqlserver') sqlServerRetired.push(id);
      this.retire(id, route);
    }
    return { sqlServerRetired };
  }

  async insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>> {
    return (this.catalog === undefined ? this.pick(command.connection.connectionId) : await this.pickFromCatalog(command.connection.connectionId, this.catalog)).insert(command);
  }

  async update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>> {
    return (this.catalog === undefined ? this.pick(command.connection.connectionId) : await this.pickFromCatalog(command.connection.connectionId, this.catalog)).update(command);
  }

  /**
   * The pools of every SQL Server writer routed now (adapter-sqlserver `poolStats`), for
   * the pool gauges; none without one. Read without I/O.
   */
  poolStats(): readonly SqlServerPoolStats[] {
    return [...this.routes.values()].flatMap((r) => (r.writer as { poolStats?(): readonly SqlServerPoolStats[] }).poolStats?.() ?? []);
  }

  /** Closes every SQL Server writer, current and retired (each after its in-flight writes). Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const current = [...this.routes.values()].flatMap((r) => (r.writer.close === undefined ? [] : [r.writer.close()]));
      await Promise.all([...current, ...this.retiring]);
    })();
    return this.closing;
  }

  /** Closes a writer no longer routed, in the background, after its in-flight writes; {@link close} waits for it. */
  private retire(id: string, route: Route): void {
    if (route.writer.close === undefined) return;
    const closing = route.writer.close().catch((error: unknown) => {
      this.logger.warn({ connection_id: id, error_type: (error as Error)?.name }, 'closing a retired SQL Server writer failed');
    });
    this.retiring.add(closing);
    void closing.finally(() => this.retiring.delete(closing));
  }

  /**
   * The writer of a connection as the catalog describes it now: the current one when its
   * target is unchanged, else a new one (the old one retired). Everything after the awaits
   * runs in one synchronous step, so two first writes of one connection share one writer.
   */
  private async pickFromCatalog(connectionId: string, catalog: CatalogRoutes): Promise<RecordWriter> {
    const id = connectionId.toLowerCase();
    const target = await catalog.resolve(id);
    const factory = target.kind === 'sqlserver' ? await catalog.sqlServer() : undefined;
    if (this.closing !== undefined) throw new Error('RoutingRecordWriter is closed');
    const current = this.routes.get(id);
    if (current !== undefined && isDeepStrictEqual(current.target, target)) return current.writer;
    const [route] = this.routesFor(new Map([[id, target]]), new Map(), factory).values();
    this.routes = new Map(this.routes).set(id, route!);
    if (current !== undefined) this.retire(id, current);
    return route!.writer;
  }

  private pick(connectionId: string): RecordWriter {
    const route = this.routes.get(connectionId.toLowerCase());
    // The catalog said this is a sqlserver connection, and the catalog and these routes
    // change together: a bug if it is missing here (the port's contract: reject).
    if (route === undefined) throw new Error(`no writer for connection ${connectionId}`);
    return route.writer;
  }

  private routesFor(
    targets: ReadonlyMap<string, WriteTarget>,
    previous: ReadonlyMap<string, Route>,
    sqlServer: SqlServerWriterFactory | undefined,
    kept = new Set<Route['writer']>(),
  ): Map<string, Route> {
    const next = new Map<string, Route>();
    for (const [rawId, target] of targets) {
      const id = rawId.toLowerCase();
      const old = previous.get(id);
      if (old !== undefined && isDeepStrictEqual(old.target, target)) {
        kept.add(old.writer);
        next.set(id, old);
        continue;
      }
      if (target.kind === 'demo') {
        next.set(id, { target, writer: demoRecordWriter() });
        continue;
      }
      // Writers made so far hold nothing yet (pools open on first use): dropping them is enough.
      if (sqlServer === undefined) throw new Error(`no SQL Server writer factory for connection ${id}`);
      next.set(id, { target, writer: sqlServer(id, target.details) });
    }
    return next;
  }
}
