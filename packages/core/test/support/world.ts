import {
  Authenticate,
  err,
  GetRun,
  InsertRecord,
  RequestQuota,
  StartRun,
  UpdateRecord,
  type InsertCommand,
  type RateLimitSettings,
  type RecordWriter,
  type RecordWriteInput,
  type Result,
  type UpdateCommand,
  type WriteError,
  type WriteOutcome,
} from '@svc/core';
import {
  aConnection,
  anAgent,
  aPrincipal,
  InMemoryAgentCatalog,
  InMemoryConnectionCatalog,
  InMemoryCredentialStore,
  InMemoryRateLimiter,
  InMemoryRecordWriter,
  InMemoryRunQueue,
  InMemoryRunStore,
  ManualClock,
  SequentialIdGenerator,
} from '@svc/core/testing';

/** Base URL the use cases under test answer from. */
export const BASE_URL = 'http://127.0.0.1:8080';

/** The `sqlserver` connection every world starts with (account A). */
export const CONNECTION = aConnection();

/** The agent every world starts with (account A). */
export const AGENT = anAgent();

/** The table every world starts with: `dbo.orders (id, sku, qty, paid, note)`. */
export const ORDERS = 'dbo.orders';

/**
 * Every use case of the core wired to the in-memory fakes, with a clock that only moves
 * when told. One world per test, so no state leaks between tests.
 */
export interface World {
  readonly clock: ManualClock;
  readonly credentials: InMemoryCredentialStore;
  readonly connections: InMemoryConnectionCatalog;
  readonly agents: InMemoryAgentCatalog;
  readonly writer: InMemoryRecordWriter;
  readonly limiter: InMemoryRateLimiter;
  readonly quota: RequestQuota;
  readonly runs: InMemoryRunStore;
  readonly queue: InMemoryRunQueue;
  readonly authenticate: Authenticate;
  readonly insertRecord: InsertRecord;
  readonly updateRecord: UpdateRecord;
  readonly startRun: StartRun;
  readonly getRun: GetRun;
}

/**
 * Builds a {@link World} holding {@link CONNECTION}, {@link AGENT} and the table
 * {@link ORDERS} (empty).
 *
 * @param limits - rate limits; the core's defaults when absent.
 */
export function aWorld(limits?: RateLimitSettings): World {
  const clock = new ManualClock();
  const credentials = new InMemoryCredentialStore();
  const connections = new InMemoryConnectionCatalog([CONNECTION]);
  const agents = new InMemoryAgentCatalog([AGENT]);
  const writer = new InMemoryRecordWriter();
  writer.defineTable(ORDERS, ['id', 'sku', 'qty', 'paid', 'note']);
  const limiter = new InMemoryRateLimiter(clock);
  const quota = limits === undefined ? new RequestQuota(limiter) : new RequestQuota(limiter, limits);
  const runs = new InMemoryRunStore();
  const queue = new InMemoryRunQueue(runs);
  const ids = new SequentialIdGenerator();
  return {
    clock,
    credentials,
    connections,
    agents,
    writer,
    limiter,
    quota,
    runs,
    queue,
    authenticate: new Authenticate(credentials, clock),
    insertRecord: new InsertRecord(connections, writer, quota),
    updateRecord: new UpdateRecord(connections, writer, quota),
    startRun: new StartRun(agents, queue, quota, ids, clock, { baseUrl: BASE_URL }),
    getRun: new GetRun(runs, quota, { baseUrl: BASE_URL }),
  };
}

/**
 * Input of a row write by {@link aPrincipal} on {@link CONNECTION}, default route;
 * override any member. `body` is a raw value so that invalid bodies can be built.
 */
export function aRecordWrite(body: unknown, overrides: Partial<RecordWriteInput> = {}): RecordWriteInput {
  return { principal: aPrincipal(), connectionId: CONNECTION.connectionId, body, route: 'default', ...overrides };
}

/**
 * A writer that answers every command with the same write error, and keeps the commands
 * it received; stands for a database failure the in-memory writer cannot produce
 * (`constraint_violation`, `connection_timeout`, ...).
 */
export class FixedRecordWriter implements RecordWriter {
  /** Every command received, in order. */
  readonly received: (InsertCommand | UpdateCommand)[] = [];

  /** @param error - the error every write answers. */
  constructor(private readonly error: WriteError) {}

  insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>> {
    this.received.push(command);
    return Promise.resolve(err(this.error));
  }

  update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>> {
    this.received.push(command);
    return Promise.resolve(err(this.error));
  }
}
