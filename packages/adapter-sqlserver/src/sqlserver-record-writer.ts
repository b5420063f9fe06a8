import {
  domainError,
  err,
  ok,
  silentLogger,
  tracerOf,
  withSpan,
  type EgressRoute,
  type InsertCommand,
  type Logger,
  type RecordWriter,
  type Result,
  type UpdateCommand,
  type WriteError,
  type WriteOutcome,
} from '@svc/core';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import knex, { type Knex } from 'knex';
import { Request, type Connection as TediousConnection } from 'tedious';
import { classify, UnmappedSqlServerError } from './error-mapping.js';
import { resolveSettings, type ResolvedSqlServerSettings, type SqlServerConnectionSettings, type SqlServerRecordWriterSettings } from './sqlserver-settings.js';
import { insertStatement, updateStatement, type Statement } from './statements.js';

// tedious options knex passes through at run time although its types lack them
// (docs/NOTES-dependencies.md): the egress route's source address.
interface TediousPassThroughOptions {
  readonly localAddress?: string;
}

// knex's tarn pool (`pool.client.pool`, tarn 3 `Pool`), which knex's types do not declare:
// its counts, and the acquire and release `execute` uses.
interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  acquire(): { readonly promise: Promise<PooledConnection> };
  release(connection: PooledConnection): boolean;
  /** The idle connections; tarn hands out the last one first (`free.pop()`). */
  readonly free: readonly { readonly resource: PooledConnection }[];
}

/** knex's tarn pool; knex makes it when the pool is created (`knex({ pool })`), not lazily. */
function tarnOf(pool: Knex): TarnPool {
  const tarn = (pool.client as { pool?: TarnPool }).pool;
  if (tarn === undefined) throw new Error('the knex pool has no tarn pool (destroyed)');
  return tarn;
}

// A tedious connection as knex's pool hands it out; knex marks broken ones with
// `__knex__disposed`, and its mssql client sets `connected` (true once logged in, false at
// `end` or `error`).
type PooledConnection = TediousConnection & { __knex__disposed?: unknown; connected?: boolean };

type Outcome = Result<WriteOutcome, WriteError>;

/** tedious `cancelTimeout`, in milliseconds; see `createPool` for why. */
const CANCEL_TIMEOUT_MS = 1_000;

/**
 * Connections of one pool (one connection id and route) at one instant, for the pool
 * gauges of the API server's metrics ({@link SqlServerRecordWriter.poolStats}).
 */
export interface SqlServerPoolStats {
  /** The connection id (lower case). */
  readonly connectionId: string;
  /** The route the pool's connections take. */
  readonly route: EgressRoute;
  /** Connections lent to a write now. */
  readonly inUse: number;
  /** Open connections waiting in the pool. */
  readonly idle: number;
  /** Writes waiting for a connection. */
  readonly pending: number;
}

const UNAVAILABLE_AFTER_DEADLOCKS = 'The database chose this write as a deadlock victim twice; nothing was written. Retry later.';

/**
 * {@link RecordWriter} on SQL Server: knex (client `mssql`) owns the pools and opens the
 * tedious connections; each write is one `sp_executesql` RPC (one round trip) with typed
 * parameters, sent by tedious on a pooled connection.
 *
 * - Identifiers are quoted with `]` doubled, values are bound, never spliced (see
 *   `statements.ts`). knex builds and sends no statement: its query builder splits
 *   names on dots and on ` as ` before any `wrapIdentifier` runs; its raw bindings
 *   rewrite every `?`, even inside a quoted name; and its mssql client queues requests
 *   in one array shared by every knex instance, so a request its own connection cannot
 *   take would later run on whichever connection frees next, another route's included.
 * - Update: one batch that updates by `key_column = key_value` in a transaction and
 *   rolls back when more than one row matched (`ambiguous_key`, nothing changed).
 * - One bounded pool per (connection id, route), created on first use; idle connections
 *   close after `pool.idleTimeoutMs`; `close()` drains in-flight writes and closes all.
 * - `route: 'egress'` binds the TCP source address to `egressSourceAddress`; the
 *   default route binds none.
 * - Errors: SQL Server numbers and driver codes become domain errors at this edge
 *   (docs/CONTRACT.md "Row writes" and the error table): see `classify` in
 *   `error-mapping.ts`. A deadlock victim (1205) is retried once; a write that may have
 *   reached the database (timeout, dropped socket) is never resent.
 * - Rejects (a bug, not a domain error) for a connection id without settings, after
 *   `close()`, and for an unmapped database error ({@link UnmappedSqlServerError}).
 *
 * Source: ports/record-writer.ts; docs/CONTRACT.md "Row writes"; docs/ARCHITECTURE.md
 * "adapter-sqlserver"; MS-TDS 2.2.6.6 (RPC request), T-SQL `sp_executesql`.
 */
export class SqlServerRecordWriter implements RecordWriter {
  private readonly settings: ResolvedSqlServerSettings;
  private readonly logger: Logger;
  private readonly pools = new Map<string, Knex>();
  /** Writes begun and not yet settled; `close()` waits for none to be left. */
  private inFlight = 0;
  /** Resolves the wait of `close()` once {@link inFlight} is back to 0. */
  private drained: (() => void) | undefined;
  private closing: Promise<void> | undefined;
  private warnedEgressDefault = false;
  private readonly tracer: Tracer = tracerOf('@svc/adapter-sqlserver');

  /**
   * @param settings - connections, egress source address, timeouts (ms), pool bounds
   *   and logger; see {@link SqlServerRecordWriterSettings}.
   * @throws RangeError when a setting is out of range (names the field).
   */
  constructor(settings: SqlServerRecordWriterSettings) {
    this.settings = resolveSettings(settings);
    this.logger = settings.logger ?? silentLogger;
  }

  /**
   * Inserts one row: `INSERT INTO [schema].[table] ([col], ...) VALUES (@p0, ...)`.
   *
   * @returns `{rowsAffected}` as counted by the statement itself (1), or `Err` with
   *   `unknown_entity`, `unknown_column`, `constraint_violation`, `invalid_value`,
   *   `connection_unavailable` or `connection_timeout`.
   */
  insert(command: InsertCommand): Promise<Outcome> {
    return this.track(command, () => insertStatement(command.entity, command.values), false);
  }

  /**
   * Updates the single row selected by `command.key`, in one round trip.
   *
   * @returns `{rowsAffected: 0 | 1}`, `Err(ambiguous_key)` when the key selects more
   *   than one row (rolled back, nothing changed), or the errors of {@link insert}.
   */
  update(command: UpdateCommand): Promise<Outcome> {
    return this.track(command, () => updateStatement(command.entity, command.key, command.values), true);
  }

  /**
   * Stops accepting writes, waits for the writes in flight, then closes every pool and
   * its TCP connections. Idempotent; later writes reject.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      const pools = [...this.pools.values()];
      this.pools.clear();
      await Promise.all(pools.map((pool) => pool.destroy()));
    })();
    return this.closing;
  }

  /**
   * The connections of every pool opened so far: in use, idle, and writes waiting for
   * one (tarn's counts, read without I/O). For the pool gauges of the metrics.
   */
  poolStats(): SqlServerPoolStats[] {
    const stats: SqlServerPoolStats[] = [];
    for (const [key, pool] of this.pools) {
      const tarn = (pool.client as { pool?: TarnPool }).pool;
      if (tarn === undefined) continue;
      const slash = key.indexOf('/');
      stats.push({
        connectionId: key.slice(slash + 1),
        route: key.slice(0, slash) as EgressRoute,
        inUse: tarn.numUsed(),
        idle: tarn.numFree(),
        pending: tarn.numPendingAcquires(),
      });
    }
    return stats;
  }

  private track(command: InsertCommand, build: () => Statement, isUpdate: boolean): Promise<Outcome> {
    // A client span per write (attributes: ids and the operation, never SQL text or a host).
    const attributes = {
      'db.system.name': 'microsoft.sql_server',
      'db.operation.name': isUpdate ? 'UPDATE' : 'INSERT',
      'svc.connection_id': command.connection.connectionId,
      'svc.route': command.route,
    };
    // `then`s, not an async frame and a second `then` to untrack the write
    // (docs/ARCHITECTURE.md "Style to follow"): two promises fewer a write.
    return withSpan(
      this.tracer,
      isUpdate ? 'sqlserver update' : 'sqlserver insert',
      attributes,
      (span) => {
        if (this.closing !== undefined) return Promise.reject(new Error('SqlServerRecordWriter is closed'));
        let written: Promise<Outcome>;
        try {
          written = this.write(this.poolFor(command.connection.connectionId, command.route), command, build(), isUpdate);
        } catch (error) {
          return Promise.reject(error);
        }
        this.inFlight += 1;
        return written.then(
          (outcome) => {
            this.settled();
            if (span.isRecording()) span.setAttribute('svc.outcome', outcome.ok ? 'ok' : outcome.error.code);
            return outcome;
          },
          (error: unknown) => {
            this.settled();
            throw error;
          },
        );
      },
      SpanKind.CLIENT,
    );
  }

  /** One write settled: the last one lets a waiting `close()` go on. */
  private settled(): void {
    this.inFlight -= 1;
    if (this.inFlight > 0 || this.drained === undefined) return;
    const drained = this.drained;
    this.drained = undefined;
    drained();
  }

  private async write(pool: Knex, command: InsertCommand, statement: Statement, isUpdate: boolean): Promise<Outcome> {
    const where = { connectionId: command.connection.connectionId, route: command.route };
    // One deadline for the whole write: the wait for a pooled connection, the request and
    // its one retry (docs/CONTRACT.md "Dependencies and faults": the 504 is sent within
    // request_timeout_ms).
    const deadlineAt = Date.now() + this.settings.requestTimeoutMs;
    for (let attempt = 1; ; attempt += 1) {
      let rowsAffected: number;
      try {
        rowsAffected = await execute(pool, statement, deadlineAt);
      } catch (error) {
        const outcome = classify(error, command.entity);
        if (outcome.kind === 'deadlock' || outcome.kind === 'not_sent') {
          // A deadlock victim's transaction was rolled back by SQL Server, and a request
          // refused with EINVALIDSTATE never left this process: in both cases nothing was
          // written, so sending it once more cannot apply it twice.
          if (attempt === 1 && Date.now() < deadlineAt) {
            this.logger.warn({ ...where, reason: outcome.kind }, 'SQL Server write not applied; retrying once');
            continue;
          }
          this.logger.warn({ ...where, reason: outcome.kind }, 'SQL Server write not applied twice');
          return err(domainError('connection_unavailable', outcome.kind === 'deadlock' ? UNAVAILABLE_AFTER_DEADLOCKS : 'The database connection closed before the write was sent.'));
        }
        if (outcome.kind === 'unmapped') {
          this.logger.error({ ...where, number: outcome.number, driverCode: outcome.driverCode }, 'SQL Server write failed with an unmapped error');
          throw new UnmappedSqlServerError(outcome.number, outcome.driverCode);
        }
        if (outcome.error.code === 'connection_unavailable' || outcome.error.code === 'connection_timeout') {
          this.logger.warn({ ...where, code: outcome.error.code, driverCode: outcome.driverCode }, 'SQL Server write failed');
        }
        return err(outcome.error);
      }
      if (isUpdate && rowsAffected > 1) {
        const key = (command as UpdateCommand).key.column;
        return err(domainError('ambiguous_key', `key_column ${key} selects more than one row; nothing was changed.`));
      }
      return ok({ rowsAffected });
    }
  }

  private poolFor(connectionId: string, route: EgressRoute): Knex {
    const id = connectionId.toLowerCase();
    const key = `${route}/${id}`;
    const existing = this.pools.get(key);
    if (existing !== undefined) return existing;
    const target = this.settings.connections.get(id);
    // The catalog said this is a sqlserver connection, yet nobody configured its
    // database: a configuration bug, so it must not turn into a client-facing code.
    if (target === undefined) throw new Error(`SqlServerRecordWriter has no settings for connection ${connectionId}`);
    const pool = createPool(target, this.settings, route === 'egress' ? this.egressAddress() : undefined);
    this.pools.set(key, pool);
    return pool;
  }

  private egressAddress(): string | undefined {
    const address = this.settings.egressSourceAddress;
    if (address === undefined && !this.warnedEgressDefault) {
      this.warnedEgressDefault = true;
      this.logger.warn({}, 'egress route used without egressSourceAddress: traffic leaves from the default source address');
    }
    return address;
  }
}

// knex's own warnings quote driver messages ("Failed to connect to <host>:<port>"), which
// must not reach a log line; this adapter logs its own, sanitised ones instead.
const quietKnexLog: Knex.Logger = {
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  deprecate: () => undefined,
};

/**
 * No statement is built with knex (see {@link SqlServerRecordWriter}); should anyone
 * use a pool's query builder, identifiers get the quoting of `quoteIdentifier` instead
 * of the mssql default, which strips `[` and `]` and so names another object.
 */
function wrapIdentifier(value: string): string {
  return value === '*' ? value : `[${value.replaceAll(']', ']]')}]`;
}

function createPool(target: SqlServerConnectionSettings, settings: ResolvedSqlServerSettings, localAddress: string | undefined): Knex {
  const passThrough: TediousPassThroughOptions = localAddress === undefined ? {} : { localAddress };
  const options = {
    encrypt: target.encrypt,
    trustServerCertificate: target.trustServerCertificate,
    connectTimeout: settings.connectTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    // The answer does not wait for a cancel: `run` gives up at requestTimeoutMs and the
    // connection is closed (SQL Server then aborts the batch and rolls back its open
    // transaction). This only bounds how long tedious itself waits for the DONE_ATTN of
    // the ATTENTION it sends at requestTimeout before it drops the socket; its default
    // (5000 ms) kept a hung server's connection, and before this fix the answer, 5 s
    // past the deadline. 1000 ms: an acknowledgement is one round trip on a live server.
    cancelTimeout: CANCEL_TIMEOUT_MS,
    appName: 'svc',
    ...passThrough,
  };
  const connection: Knex.MsSqlConnectionConfig = {
    server: target.host,
    port: target.port,
    database: target.database,
    userName: target.user,
    password: target.password,
    options,
  };
  const pool = knex({
    client: 'mssql',
    connection,
    pool: {
      // min 0: idle connections are closed, none is opened before the first write.
      min: 0,
      max: settings.poolMax,
      idleTimeoutMillis: settings.poolIdleTimeoutMs,
      reapIntervalMillis: Math.max(10, Math.min(1000, Math.floor(settings.poolIdleTimeoutMs / 2))),
      // tedious's own connect timeout decides; the pool's must not cut it short.
      createTimeoutMillis: settings.connectTimeoutMs + 5_000,
      propagateCreateError: true,
    },
    // A write waiting for a free connection waits at most for one write to time out and
    // a new connection to be opened.
    acquireConnectionTimeout: settings.connectTimeoutMs + settings.requestTimeoutMs,
    wrapIdentifier,
    log: quietKnexLog,
  });
  // knex destroys a pooled tedious connection by closing it and waiting for its `end`
  // event, which a connection that already ended (dropped by the server) never emits
  // again: tarn would then wait its destroy timeout (5 s) on every such connection and
  // hold `close()` that long.
  const client = pool.client as unknown as { destroyRawConnection(connection: PooledConnection): Promise<void> };
  const destroy = client.destroyRawConnection.bind(client);
  client.destroyRawConnection = (c) => (c.closed ? Promise.resolve() : destroy(c));
  return pool;
}

/** The error {@link execute} rejects with at the deadline: `ETIMEOUT`, as tedious's own (→ `connection_timeout`). */
function deadlineError(what: string): Error {
  return Object.assign(new Error(`the ${what} did not complete before the write's deadline`), { code: 'ETIMEOUT' });
}

/**
 * Runs `statement` on a pooled connection, discarding the connection unless it is known
 * healthy. Rejects with an `ETIMEOUT` error (→ `connection_timeout`) at `deadlineAt`
 * (ms since the epoch), whether it is still waiting for a pooled connection or for the
 * answer; a connection acquired after the deadline goes straight back to the pool.
 *
 * The connection comes from knex's own tarn pool (`pool.client.pool`), not through
 * `client.acquireConnection()`: that wrapper redefines the connection's password as a
 * hidden property on every acquire (`Object.defineProperty`: 1.9 µs of a 290 µs insert,
 * bench profile of the insert at concurrency 1, issue 11), which {@link hidePassword}
 * does once per connection here. When the connection tarn hands out next is free and
 * valid and nobody waits before this write, tarn hands it out at once, so no deadline
 * timer is raced against the acquire.
 */
function execute(pool: Knex, statement: Statement, deadlineAt: number): Promise<number> {
  const tarn = tarnOf(pool);
  const next = tarn.numPendingAcquires() === 0 ? tarn.free[tarn.free.length - 1]?.resource : undefined;
  // knex's pool validation (`validate` in knex's client.js, `validateConnection` of its
  // mssql client) passes this connection: tarn hands it out without waiting. Otherwise
  // (none free, others waiting, or one tarn would drop and replace by a new connection:
  // test "idle connection died") the wait is held to the deadline.
  const immediate = next !== undefined && !next.__knex__disposed && next.connected === true;
  const acquiring = tarn.acquire().promise;
  const acquired = immediate ? acquiring : withinDeadline(acquiring, tarn, deadlineAt);
  return acquired.then((connection) => {
    hidePassword(connection);
    return runPooled(tarn, connection, statement, deadlineAt);
  });
}

/** `acquiring`, or an `ETIMEOUT` rejection at `deadlineAt`; a connection acquired later goes back to `tarn`. */
function withinDeadline(acquiring: Promise<PooledConnection>, tarn: TarnPool, deadlineAt: number): Promise<PooledConnection> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlineError('wait for a database connection')), Math.max(0, deadlineAt - Date.now()));
  });
  return Promise.race([acquiring, deadline]).then(
    (connection) => {
      clearTimeout(timer);
      return connection;
    },
    (error: unknown) => {
      clearTimeout(timer);
      acquiring.then((late) => tarn.release(late), () => undefined);
      throw error;
    },
  );
}

function runPooled(tarn: TarnPool, connection: PooledConnection, statement: Statement, deadlineAt: number): Promise<number> {
  // `then`s, not an async frame with `finally` (docs/ARCHITECTURE.md "Style to follow"):
  // the connection goes back to the pool either way, discarded unless known healthy.
  return run(connection, statement, Math.max(1, deadlineAt - Date.now())).then(
    (rows) => {
      tarn.release(connection);
      return rows;
    },
    (error: unknown) => {
      // An error the server answered with (it carries a SQL Server number) leaves the
      // session as it was; after anything else (timeout, broken socket) the session's
      // state is unknown, so it is not handed out again.
      if (!answeredByServer(error)) {
        connection.__knex__disposed = 'discarded after a failed request';
        if (!connection.closed) connection.close();
      }
      tarn.release(connection);
      throw error;
    },
  );
}

/** Connections whose password {@link hidePassword} already made non-enumerable. */
const HIDDEN = new WeakSet<object>();

/**
 * Makes the password in a tedious connection's configuration non-enumerable, as knex's
 * `acquireConnection` does (knex `lib/util/security.js`), so that logging or serialising
 * the connection never writes it; once per connection.
 */
function hidePassword(connection: PooledConnection): void {
  if (HIDDEN.has(connection)) return;
  HIDDEN.add(connection);
  const options = (connection as { config?: { authentication?: { options?: { password?: unknown } } } }).config?.authentication?.options;
  if (options !== undefined && options.password !== undefined) Object.defineProperty(options, 'password', { enumerable: false, value: options.password });
}

function answeredByServer(error: unknown): boolean {
  const errors = error instanceof AggregateError ? error.errors : [error];
  return errors.every((e) => e instanceof Error && typeof (e as { number?: unknown }).number === 'number');
}

/**
 * One `sp_executesql` RPC; resolves the single integer the batch selects last.
 *
 * The deadline is this adapter's, not tedious's: tedious calls back on a request timeout
 * only once the server acknowledged its ATTENTION or `cancelTimeout` passed, so a hung
 * server would hold the answer past requestTimeoutMs (docs/CONTRACT.md "Dependencies and
 * faults": the 504 is sent within that time). Whether a write cut off here applied is
 * unknown; it is reported as `connection_timeout`, never as a success, and its
 * connection is closed by `execute`.
 */
function run(connection: TediousConnection, statement: Statement, deadlineMs: number): Promise<number> {
  return new Promise<number>((resolveRun, rejectRun) => {
    let settled = false;
    const deadline = setTimeout(() => {
      if (settle()) rejectRun(deadlineError('request'));
    }, deadlineMs);
    function settle(): boolean {
      if (settled) return false;
      settled = true;
      clearTimeout(deadline);
      return true;
    }
    const resolve = (value: number): void => {
      if (settle()) resolveRun(value);
    };
    const reject = (error: unknown): void => {
      if (settle()) rejectRun(error);
    };
    let rows = 0;
    let count: unknown;
    const request = new Request(statement.sql, (error) => {
      if (error) {
        reject(error);
      } else if (rows !== 1 || typeof count !== 'number') {
        // Not the batch this adapter sent, or not a SQL Server: whether the write applied
        // is unknown, so it is neither retried nor reported as a count.
        reject(Object.assign(new Error('the batch did not select its row count'), { code: 'ENOROWCOUNT' }));
      } else {
        resolve(count);
      }
    });
    for (const p of statement.parameters) request.addParameter(p.name, p.type, p.value, p.options ?? null);
    request.on('row', (columns: { value: unknown }[]) => {
      rows += 1;
      count = columns[0]?.value;
    });
    connection.execSql(request);
  });
}
