import {
  createCore,
  type Core,
  type CoreOptions,
  type CorePorts,
  err,
  wireBody,
  type Authenticate,
  type GetAgent,
  type GetConnection,
  type GetRun,
  type InsertRecord,
  type ListAgents,
  type ListConnections,
  type RateLimitPolicy,
  type StartRun,
  type UpdateRecord,
  type WireBody,
  type InsertCommand,
  type Principal,
  type RateLimitDecision,
  type RateLimitSettings,
  type RequestMeter,
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
  InMemoryRateLimitStore,
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
  /** Another core on this world's ports and options, with `overrides` in their place (e.g. a failing writer). */
  readonly coreWith: (overrides: CorePorts) => Core;
  readonly clock: ManualClock;
  readonly credentials: InMemoryCredentialStore;
  readonly connections: InMemoryConnectionCatalog;
  readonly agents: InMemoryAgentCatalog;
  readonly writer: InMemoryRecordWriter;
  readonly rateLimitStore: InMemoryRateLimitStore;
  readonly rateLimits: RateLimitPolicy;
  readonly runs: InMemoryRunStore;
  readonly queue: InMemoryRunQueue;
  readonly authenticate: Authenticate;
  readonly insertRecord: Metered<InsertRecord>;
  readonly updateRecord: Metered<UpdateRecord>;
  readonly startRun: Metered<StartRun>;
  readonly getRun: Metered<GetRun>;
  readonly listAgents: Metered<ListAgents>;
  readonly getAgent: Metered<GetAgent>;
  readonly listConnections: Metered<ListConnections>;
  readonly getConnection: Metered<GetConnection>;
}

type InputOf<U> = U extends { execute(input: infer I): Promise<unknown> } ? I : never;
type ResultOf<U> = U extends { execute(input: never): Promise<infer R> } ? R : never;

/**
 * A use case called as the HTTP adapter calls it: a fresh meter of the world's policy per
 * call (unless the input brings one), answering the result and the charge's decision.
 */
export interface Metered<U> {
  execute(input: Omit<InputOf<U>, 'meter'> & { readonly meter?: RequestMeter }): Promise<{ result: ResultOf<U>; rateLimit: RateLimitDecision }>;
}

/**
 * Wraps `useCase` (see {@link Metered}).
 * @throws Error when the use case returned without charging its meter: every call of an
 *   authenticated use case is charged exactly once, so every test checks it.
 */
export function metered<U extends { execute(input: never): Promise<unknown> }>(useCase: U, policy: RateLimitPolicy): Metered<U> {
  return {
    async execute(input) {
      const meter = input.meter ?? policy.meterFor((input as unknown as { principal: Principal }).principal);
      const result = (await useCase.execute({ ...input, meter } as never)) as ResultOf<U>;
      if (meter.decision === undefined) throw new Error('the use case returned without charging the request');
      return { result, rateLimit: meter.decision };
    },
  };
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
  const rateLimitStore = new InMemoryRateLimitStore(clock);
  const ports: CorePorts = { credentials, connections, agents, recordWriter: writer, rateLimitStore, clock, ids: new SequentialIdGenerator() };
  // The run-start tests name made-up file keys; files.test.ts checks keys with a core of its own.
  const options: CoreOptions = { baseUrl: BASE_URL, ...(limits !== undefined ? { rateLimits: limits } : {}), files: { verifyKeys: false } };
  const core = createCore(ports, options);
  const { rateLimits } = core;
  return {
    coreWith: (overrides) => createCore({ ...ports, runs: core.runs, ...overrides }, options),
    clock,
    credentials,
    connections,
    agents,
    writer,
    rateLimitStore,
    rateLimits,
    runs: core.runs.store,
    queue: core.runs.queue,
    authenticate: core.authenticate,
    insertRecord: metered(core.insertRecord, rateLimits),
    updateRecord: metered(core.updateRecord, rateLimits),
    startRun: metered(core.startRun, rateLimits),
    getRun: metered(core.getRun, rateLimits),
    listAgents: metered(core.listAgents, rateLimits),
    getAgent: metered(core.getAgent, rateLimits),
    listConnections: metered(core.listConnections, rateLimits),
    getConnection: metered(core.getConnection, rateLimits),
  };
}

/**
 * Input of a row write by {@link aPrincipal} on {@link CONNECTION}, default route;
 * override any member. `body` is a raw value so that invalid bodies can be built.
 */
export function aRecordWrite(body: unknown, overrides: Partial<Omit<RecordWriteInput, 'body'>> = {}): Omit<RecordWriteInput, 'meter' | 'body'> & { body: WireBody; meter?: RequestMeter } {
  return { principal: aPrincipal(), connectionId: CONNECTION.connectionId, body: wireBody(body), route: 'default', ...overrides };
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
