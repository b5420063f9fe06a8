import type { Agent } from '../domain/agent.js';
import type { Connection } from '../domain/connection.js';
import { DependencyUnavailableError, domainError } from '../domain/errors.js';
import { err, type Result } from '../domain/result.js';
import type { Page, PageRequest } from '../domain/page.js';
import type { Run, RunProgress, RunStatusChange } from '../domain/run.js';
import type { RateLimitRule } from '../domain/rate-limit.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { CredentialStore, StoredCredential } from '../ports/credential-store.js';
import type { RateLimitCharge, RateLimitStore } from '../ports/rate-limit-store.js';
import type { InsertCommand, RecordWriter, UpdateCommand, WriteError, WriteErrorCode, WriteOutcome } from '../ports/record-writer.js';
import type { RunQueue } from '../ports/run-queue.js';
import type { CancelOutcome, RunListFilter, RunStore, TransitionOutcome } from '../ports/run-store.js';

// Fakes that fail on demand, for the error paths of code built on the core. Each wraps a
// fake (usually an in-memory adapter) and fails exactly as the real adapter of its port
// does (docs/CONTRACT.md "Dependencies and faults"; docs/decisions.md "Dependencies and
// faults"): lost infrastructure rejects with the core's DependencyUnavailableError (the
// HTTP adapter: 503 `service_unavailable`, `Retry-After: 5`); a customer database that
// cannot be reached or does not answer is a WriteError result (502, 504), never a throw.

/**
 * The error a failing fake puts where a real adapter would have its library's error: the
 * `cause` of the {@link DependencyUnavailableError} it rejects with, or the rejection
 * itself for a writer's `unexpected_error`. Lets a test tell an injected failure from a bug.
 */
export class InjectedFaultError extends Error {
  override readonly name = 'InjectedFaultError';

  /** @param where - the fake and operation, e.g. `FailingRunQueue.enqueue`. */
  constructor(readonly where: string) {
    super(`fault injected by ${where}`);
  }
}

/** How a failing fake fails, given to {@link FaultSwitch.failWith} and {@link FaultSwitch.failNext}. */
export interface FaultOptions<O extends string> {
  /** Only calls of these operations fail; the others go through. Default: every operation. */
  readonly only?: readonly O[];
  /**
   * When true, the call first reaches the wrapped fake (the work is done) and only its
   * answer is replaced by the failure: the answer was lost on the way back (Redis committed
   * the run's transaction and died before answering; a row write reached SQL Server and the
   * answer did not come back in time). The caller then cannot know what happened, as with
   * the real adapter. Default false: nothing reaches the wrapped fake.
   */
  readonly applied?: boolean;
}

/** The failure the next call meets (see {@link FaultSwitch}). */
interface ActiveFault<M extends string, O extends string> {
  readonly mode: M;
  readonly only: ReadonlySet<O> | undefined;
  readonly applied: boolean;
  /** Calls left to fail; `Infinity` until {@link FaultSwitch.recover}. */
  remaining: number;
}

/**
 * The switch every failing fake has: calls go through to the wrapped fake until told to
 * fail, and the switch can be flipped at any point of a test (between two calls, or from
 * inside a callback while a use case runs).
 *
 * ```ts
 * const queue = new FailingRunQueue(new InMemoryRunQueue(store)).failWith('unavailable');
 * // ... the error path ...
 * queue.recover();
 * ```
 *
 * @typeParam M - the ways this fake can fail (e.g. `unavailable`).
 * @typeParam O - its port's operations (e.g. `get`, `save`, `transition`).
 */
export abstract class FaultSwitch<M extends string, O extends string> {
  private fault: ActiveFault<M, O> | undefined;
  private failed = 0;

  /** @param dependency - what a `DependencyUnavailableError` of this fake names (e.g. `redis`); empty for a fake that never throws one. */
  constructor(protected readonly dependency = '') {}

  /**
   * Fails every call (of `options.only`, if given) from now on, until {@link recover}.
   * Replaces any failure set before.
   */
  failWith(mode: M, options: FaultOptions<O> = {}): this {
    return this.set(mode, Infinity, options);
  }

  /**
   * Fails the next `count` calls (of `options.only`, if given); later calls go through.
   * Replaces any failure set before.
   * @throws RangeError when `count` is not a whole number ≥ 1.
   */
  failNext(count: number, mode: M, options: FaultOptions<O> = {}): this {
    if (!Number.isInteger(count) || count < 1) throw new RangeError('failNext: count must be a whole number ≥ 1');
    return this.set(mode, count, options);
  }

  /** Lets every call through to the wrapped fake again. */
  recover(): this {
    this.fault = undefined;
    return this;
  }

  /** How many calls this fake has failed so far. */
  get failures(): number {
    return this.failed;
  }

  /**
   * The failure a call of `operation` meets now, counted as one of the failed calls, or
   * `undefined` when it goes through. Called synchronously at the start of each call, so
   * that concurrent calls each take their own turn of {@link failNext}.
   */
  protected faultFor(operation: O): { readonly mode: M; readonly applied: boolean } | undefined {
    const fault = this.fault;
    if (fault === undefined || (fault.only !== undefined && !fault.only.has(operation))) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.fault = undefined;
    this.failed += 1;
    return { mode: fault.mode, applied: fault.applied };
  }
  /**
   * Runs `call` unless `operation` fails now; a failing one rejects with
   * `DependencyUnavailableError(this.dependency)` (after running `call` when the fault is `applied`).
   */
  protected async guard<T>(operation: O, call: () => Promise<T>): Promise<T> {
    const fault = this.faultFor(operation);
    if (fault === undefined) return call();
    return unavailable(fault, this.dependency, `${this.constructor.name}.${operation}`, call);
  }


  private set(mode: M, count: number, options: FaultOptions<O>): this {
    this.fault = { mode, only: options.only === undefined ? undefined : new Set(options.only), applied: options.applied ?? false, remaining: count };
    return this;
  }
}

/** Options of the failing fakes that reject with {@link DependencyUnavailableError}. */
export interface UnavailableOptions {
  /** `dependency` of the error; each fake's default is the name its real adapter uses. */
  readonly dependency?: string;
}

/** Rejects with `DependencyUnavailableError(dependency)`, after calling `call` when the fault says it was applied. */
async function unavailable<T>(fault: { readonly applied: boolean }, dependency: string, where: string, call: () => Promise<T>): Promise<never> {
  if (fault.applied) await call();
  throw new DependencyUnavailableError(dependency, { cause: new InjectedFaultError(where) });
}

/**
 * A {@link RunQueue} whose queue can be made unreachable, like the BullMQ queue when Redis
 * is down, paused or answers `LOADING`.
 *
 * - `unavailable`: `enqueue` rejects with `DependencyUnavailableError('run_queue')` and the
 *   run is not recorded (nothing was promised: `StartRun` rejects, HTTP 503). With
 *   `{ applied: true }` the run is recorded and scheduled by the wrapped queue first: the one
 *   case docs/decisions.md "Dependencies and faults" names, a Redis that committed and died
 *   before answering, whose run exists and runs although the caller got a 503.
 *
 * Source: core `ports/run-queue.ts`; docs/CONTRACT.md "Dependencies and faults".
 * @typeParam Q - the wrapped queue (e.g. `InMemoryRunQueue`, whose `take` a worker uses through {@link FailingRunQueue.inner}).
 */
export class FailingRunQueue<Q extends RunQueue = RunQueue> extends FaultSwitch<'unavailable', 'enqueue'> implements RunQueue {
  /**
   * @param inner - the queue calls go to while not failing.
   * @param options - `dependency` of the error; default `run_queue` (adapter-queue's `BullMqRunQueue`).
   */
  constructor(
    readonly inner: Q,
    options: UnavailableOptions = {},
  ) {
    super(options.dependency ?? 'run_queue');
  }

  /** See {@link RunQueue.enqueue}. @throws DependencyUnavailableError while failing. */
  async enqueue(run: Run): Promise<void> {
    return this.guard('enqueue', () => this.inner.enqueue(run));
  }
}

/**
 * A {@link RunStore} that can be made unreachable, like the Redis run store when Redis is
 * down or silent past its bound.
 *
 * - `unavailable`: `get`, `save`, `transition`, `requestCancel`, `reportProgress` and `list` (or those in `only`) reject with
 *   `DependencyUnavailableError('redis')`. `GetRun` and `ListRuns` then reject (HTTP 503); a worker's
 *   `RunLifecycle.attempt` rejects and its queue retries the attempt later.
 *
 * Source: core `ports/run-store.ts` ("every call rejects only when the store is
 * unreachable"); docs/CONTRACT.md "Dependencies and faults".
 * @typeParam S - the wrapped store.
 */
export class FailingRunStore<S extends RunStore = RunStore> extends FaultSwitch<'unavailable', 'get' | 'save' | 'transition' | 'requestCancel' | 'reportProgress' | 'list'> implements RunStore {
  /**
   * @param inner - the store calls go to while not failing.
   * @param options - `dependency` of the error; default `redis` (adapter-queue's `RedisRunStore`).
   */
  constructor(
    readonly inner: S,
    options: UnavailableOptions = {},
  ) {
    super(options.dependency ?? 'redis');
  }

  /** See {@link RunStore.get}. @throws DependencyUnavailableError while failing. */
  async get(runId: string): Promise<Run | undefined> {
    return this.guard('get', () => this.inner.get(runId));
  }

  /** See {@link RunStore.save}. @throws DependencyUnavailableError while failing. */
  async save(run: Run): Promise<void> {
    return this.guard('save', () => this.inner.save(run));
  }

  /** See {@link RunStore.transition}. @throws DependencyUnavailableError while failing. */
  async transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome> {
    return this.guard('transition', () => this.inner.transition(runId, change));
  }

  /** See {@link RunStore.requestCancel}. @throws DependencyUnavailableError while failing. */
  async requestCancel(runId: string, at: Date): Promise<CancelOutcome> {
    return this.guard('requestCancel', () => this.inner.requestCancel(runId, at));
  }

  /** See {@link RunStore.reportProgress}. @throws DependencyUnavailableError while failing. */
  async reportProgress(runId: string, progress: RunProgress): Promise<boolean> {
    return this.guard('reportProgress', () => this.inner.reportProgress(runId, progress));
  }

  /** See {@link RunStore.list}. @throws DependencyUnavailableError while failing. */
  async list(accountId: string, filter: RunListFilter, page: PageRequest): Promise<Page<Run>> {
    return this.guard('list', () => this.inner.list(accountId, filter, page));
  }
}

/** The ways a {@link FailingRecordWriter} fails. */
export type RecordWriterFault = 'connection_timeout' | 'connection_unavailable' | 'unexpected_error';

/**
 * The `detail` of each write error a {@link FailingRecordWriter} answers: the texts of the
 * SQL Server writer (adapter-sqlserver `error-mapping.ts`), which name no host or user.
 */
const WRITE_FAULT_DETAIL: Readonly<Record<Exclude<RecordWriterFault, 'unexpected_error'>, string>> = {
  connection_timeout: 'The database did not answer in time; the outcome of the write is unknown if it was sent.',
  connection_unavailable:
    'The database could not be reached, refused the login, or closed the connection before answering; a write already sent was not resent, so whether it was applied is unknown.',
};

/**
 * A {@link RecordWriter} whose customer database can be made unreachable or slow, as the
 * SQL Server writer reports it: as a result, never a throw (core `ports/record-writer.ts`).
 *
 * - `connection_timeout`: `insert` and `update` resolve `Err` with code
 *   `connection_timeout` (`InsertRecord`/`UpdateRecord` answer it as it is; HTTP 504), the
 *   database not answering within `request_timeout_ms`.
 * - `connection_unavailable`: resolve `Err` with code `connection_unavailable` (HTTP 502):
 *   refused, unreachable, login failed, connection closed.
 * - `unexpected_error`: reject with an {@link InjectedFaultError}, as the writer does for a
 *   bug or a database error it does not map (SQL Server's permission denied, 229): HTTP
 *   500 `internal_error`, revealing nothing.
 *
 * With `{ applied: true }` the row is written by the wrapped writer first: a timed-out or
 * cut-off write that reached the database, whose outcome the caller cannot know (it is
 * never reported as a success, never resent: docs/decisions.md "Exact values").
 * Source: docs/CONTRACT.md "Envelope and errors" (502, 504), "Dependencies and faults".
 * @typeParam W - the wrapped writer (e.g. `InMemoryRecordWriter`, whose rows and `received` stay readable through {@link FailingRecordWriter.inner}).
 */
export class FailingRecordWriter<W extends RecordWriter = RecordWriter> extends FaultSwitch<RecordWriterFault, 'insert' | 'update'> implements RecordWriter {
  /** @param inner - the writer calls go to while not failing. */
  constructor(readonly inner: W) {
    super();
  }

  /** See {@link RecordWriter.insert}; while failing, see the class comment. */
  insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.write('insert', () => this.inner.insert(command));
  }

  /** See {@link RecordWriter.update}; while failing, see the class comment. */
  update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.write('update', () => this.inner.update(command));
  }

  private async write(operation: 'insert' | 'update', call: () => Promise<Result<WriteOutcome, WriteError>>): Promise<Result<WriteOutcome, WriteError>> {
    const fault = this.faultFor(operation);
    if (fault === undefined) return call();
    if (fault.applied) await call();
    if (fault.mode === 'unexpected_error') throw new InjectedFaultError(`FailingRecordWriter.${operation}`);
    const code: WriteErrorCode = fault.mode;
    return err(domainError(code, WRITE_FAULT_DETAIL[fault.mode]));
  }
}

/** The ways a {@link FailingRateLimitStore} fails. */
export type RateLimitStoreFault = 'unavailable' | 'full';

/**
 * A {@link RateLimitStore} that can be made unreachable, or answer every window full.
 *
 * - `unavailable`: `chargeAll` rejects with `DependencyUnavailableError('redis')`, as the
 *   Redis store does when Redis is unreachable, failing or silent and its in-memory
 *   insurance is off (`insurance: false`); the request is then not served (HTTP 503).
 *   With the insurance on, the real store never rejects: use the
 *   wrapped store alone for that. With `{ applied: true }` the wrapped store charges the
 *   point first (the script ran, its answer was lost).
 * - `full`: `chargeAll` resolves a refusal without charging anything: every window at its
 *   limit (`count` = `limit`) with the whole window left (`msLeft` = `windowSeconds` × 1000
 *   ms), as when other instances sharing Redis filled the windows just now. The request
 *   is `rate_limited` (HTTP 429, `Retry-After` = `windowSeconds`). `applied` is ignored: a
 *   refusal charges nothing (all or none).
 *
 * Source: core `ports/rate-limit-store.ts`; docs/CONTRACT.md "Rate limits", "Dependencies and faults".
 * @typeParam S - the wrapped store.
 */
export class FailingRateLimitStore<S extends RateLimitStore = RateLimitStore> extends FaultSwitch<RateLimitStoreFault, 'chargeAll'> implements RateLimitStore {
  /**
   * @param inner - the store calls go to while not failing.
   * @param options - `dependency` of the error; default `redis` (adapter-ratelimit's `RedisRateLimitStore`).
   */
  constructor(
    readonly inner: S,
    options: UnavailableOptions = {},
  ) {
    super(options.dependency ?? 'redis');
  }

  /** See {@link RateLimitStore.chargeAll}; while failing, see the class comment. */
  async chargeAll(rules: readonly RateLimitRule[]): Promise<RateLimitCharge> {
    const fault = this.faultFor('chargeAll');
    if (fault === undefined) return this.inner.chargeAll(rules);
    if (fault.mode === 'full') return { charged: false, windows: rules.map((rule) => ({ count: rule.limit, msLeft: rule.windowSeconds * 1000 })) };
    return unavailable(fault, this.dependency, 'FailingRateLimitStore.chargeAll', () => this.inner.chargeAll(rules));
  }
}

/**
 * A {@link CredentialStore} that can be made unreachable (a credential database that is
 * down).
 *
 * - `unavailable`: `findByDigest` rejects with `DependencyUnavailableError('credential_store')`,
 *   the one way the port may reject. `Authenticate` rejects for a request whose credential
 *   it has to look up (HTTP 503); a request it refuses before the lookup (no credential,
 *   two that differ, an unknown prefix) is answered 401 as usual.
 *
 * Source: core `ports/credential-store.ts`; docs/CONTRACT.md "Dependencies and faults".
 * @typeParam S - the wrapped store.
 */
export class FailingCredentialStore<S extends CredentialStore = CredentialStore> extends FaultSwitch<'unavailable', 'findByDigest'> implements CredentialStore {
  /**
   * @param inner - the store calls go to while not failing.
   * @param options - `dependency` of the error; default `credential_store`.
   */
  constructor(
    readonly inner: S,
    options: UnavailableOptions = {},
  ) {
    super(options.dependency ?? 'credential_store');
  }

  /** See {@link CredentialStore.findByDigest}. @throws DependencyUnavailableError while failing. */
  async findByDigest(sha256: string): Promise<StoredCredential | undefined> {
    return this.guard('findByDigest', () => this.inner.findByDigest(sha256));
  }
}

/**
 * A {@link ConnectionCatalog} that can be made unreachable (the catalog database of
 * docs/CONTRACT.md "Dependencies and faults").
 *
 * - `unavailable`: `findById` and `listByAccount` reject with
 *   `DependencyUnavailableError('connection_catalog')`. A row write whose input is valid then
 *   rejects before the writer is called, and so does a connection read or list (HTTP 503;
 *   the request was charged: the charge comes first).
 *
 * Source: core `ports/connection-catalog.ts`; docs/CONTRACT.md "Dependencies and faults".
 * @typeParam C - the wrapped catalog.
 */
export class FailingConnectionCatalog<C extends ConnectionCatalog = ConnectionCatalog>
  extends FaultSwitch<'unavailable', 'findById' | 'listByAccount'>
  implements ConnectionCatalog
{
  /**
   * @param inner - the catalog calls go to while not failing.
   * @param options - `dependency` of the error; default `connection_catalog`.
   */
  constructor(
    readonly inner: C,
    options: UnavailableOptions = {},
  ) {
    super(options.dependency ?? 'connection_catalog');
  }

  /** See {@link ConnectionCatalog.findById}. @throws DependencyUnavailableError while failing. */
  async findById(connectionId: string): Promise<Connection | undefined> {
    return this.guard('findById', () => this.inner.findById(connectionId));
  }

  /** See {@link ConnectionCatalog.listByAccount}. @throws DependencyUnavailableError while failing. */
  async listByAccount(accountId: string, page: PageRequest): Promise<Page<Connection>> {
    return this.guard('listByAccount', () => this.inner.listByAccount(accountId, page));
  }
}

/**
 * An {@link AgentCatalog} that can be made unreachable (the catalog database of
 * docs/CONTRACT.md "Dependencies and faults").
 *
 * - `unavailable`: `findById` and `listByAccount` reject with
 *   `DependencyUnavailableError('agent_catalog')`. `StartRun` with a valid body then rejects
 *   before it charges the request's meter or queues anything (HTTP 503); an invalid body is
 *   refused without the lookup. An agent read or list rejects after its charge.
 *
 * Source: core `ports/agent-catalog.ts`; docs/CONTRACT.md "Dependencies and faults".
 * @typeParam C - the wrapped catalog.
 */
export class FailingAgentCatalog<C extends AgentCatalog = AgentCatalog> extends FaultSwitch<'unavailable', 'findById' | 'listByAccount'> implements AgentCatalog {
  /**
   * @param inner - the catalog calls go to while not failing.
   * @param options - `dependency` of the error; default `agent_catalog`.
   */
  constructor(
    readonly inner: C,
    options: UnavailableOptions = {},
  ) {
    super(options.dependency ?? 'agent_catalog');
  }

  /** See {@link AgentCatalog.findById}. @throws DependencyUnavailableError while failing. */
  async findById(agentId: string): Promise<Agent | undefined> {
    return this.guard('findById', () => this.inner.findById(agentId));
  }

  /** See {@link AgentCatalog.listByAccount}. @throws DependencyUnavailableError while failing. */
  async listByAccount(accountId: string, page: PageRequest): Promise<Page<Agent>> {
    return this.guard('listByAccount', () => this.inner.listByAccount(accountId, page));
  }
}
