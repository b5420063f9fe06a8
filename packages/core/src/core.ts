import { createHmac, randomBytes } from 'node:crypto';
import { PageCursors } from './domain/page.js';
import type { Principal } from './domain/principal.js';
import type { RateLimitSettings } from './domain/rate-limit.js';
import { InMemoryAgentCatalog, InMemoryConnectionCatalog, InMemoryCredentialStore } from './memory/in-memory-catalogs.js';
import { InMemoryRateLimitStore } from './memory/in-memory-rate-limit-store.js';
import { InMemoryIdempotencyStore } from './memory/in-memory-idempotency-store.js';
import { InMemoryRecordWriter } from './memory/in-memory-record-writer.js';
import { InMemoryRuns, type InProcessRunWorkerOptions } from './memory/in-process-runs.js';
import { RandomIdGenerator } from './memory/id-generators.js';
import { SystemClock } from './memory/system-clock.js';
import type { AgentCatalog } from './ports/agent-catalog.js';
import type { Clock } from './ports/clock.js';
import type { ConnectionCatalog } from './ports/connection-catalog.js';
import type { CredentialStore } from './ports/credential-store.js';
import type { IdGenerator } from './ports/id-generator.js';
import type { IdempotencyStore } from './ports/idempotency-store.js';
import type { RateLimitStore } from './ports/rate-limit-store.js';
import type { RecordWriter } from './ports/record-writer.js';
import type { RunBackend, RunWorker, RunWorkerOptions } from './ports/run-backend.js';
import type { RunProcessor } from './ports/run-processor.js';
import type { RunQueue } from './ports/run-queue.js';
import type { RunStore } from './ports/run-store.js';
import type { Telemetry } from './ports/telemetry.js';
import { ObservedRateLimitStore, ObservedRecordWriter, ObservedRunQueue } from './telemetry/observed-ports.js';
import { CORE_TRACER_NAME, traceExecute, tracerOf } from './telemetry/tracing.js';
import { Authenticate } from './use-cases/authenticate.js';
import { ClaimIdempotencyKey, type IdempotencySettings } from './use-cases/claim-idempotency-key.js';
import { apiIndexSettings, DescribeApi, type ApiIndexSettings } from './use-cases/describe-api.js';
import { FindAgent } from './use-cases/find-agent.js';
import { GetRun } from './use-cases/get-run.js';
import { CancelRun } from './use-cases/cancel-run.js';
import { StreamRunEvents } from './use-cases/stream-run-events.js';
import type { Notifier } from './ports/notifier.js';
import type { RunEventLog } from './ports/run-event-log.js';
import type { Logger } from './ports/logger.js';
import { GetAgent } from './use-cases/get-agent.js';
import { GetConnection } from './use-cases/get-connection.js';
import { ListAgents } from './use-cases/list-agents.js';
import { ListConnections } from './use-cases/list-connections.js';
import { InsertRecord } from './use-cases/insert-record.js';
import { ListRuns } from './use-cases/list-runs.js';
import { RateLimitPolicy } from './use-cases/rate-limit-policy.js';
import { StartRun } from './use-cases/start-run.js';
import { UpdateRecord } from './use-cases/update-record.js';
import { UploadAddresses } from './domain/upload-address.js';
import { InMemoryFileCatalog, InMemoryFileStore } from './memory/in-memory-files.js';
import type { FileCatalog } from './ports/file-catalog.js';
import type { FileStore } from './ports/file-store.js';
import type { RunStore as RunStorePort } from './ports/run-store.js';
import { CompleteFile } from './use-cases/complete-file.js';
import { DeleteFile } from './use-cases/delete-file.js';
import { ExpireFiles } from './use-cases/expire-files.js';
import { resolveFileSettings, type FileSettings, type ResolvedFileSettings } from './use-cases/file-view.js';
import { GetFile } from './use-cases/get-file.js';
import { ListFiles } from './use-cases/list-files.js';
import { PrepareFile } from './use-cases/prepare-file.js';
import { ReceiveFileUpload } from './use-cases/receive-file-upload.js';
import { StoredRunFiles } from './use-cases/run-files.js';

/**
 * The ports {@link createCore} wires. Every one is optional: what is left out gets the
 * in-memory default, so an embedder passes only what it cares about.
 */
export interface CorePorts<R extends RunBackend = InMemoryRuns> {
  /** Credentials by SHA-256 digest; default: none (every credential is refused). */
  readonly credentials?: CredentialStore;
  /** Agents; default: none (every run start answers `not_found`). */
  readonly agents?: AgentCatalog;
  /** Connections; default: none (every row write answers `not_found`). */
  readonly connections?: ConnectionCatalog;
  /** Writes rows; default an empty `InMemoryRecordWriter`. */
  readonly recordWriter?: RecordWriter;
  /**
   * Runs: queue, store and workers; default `InMemoryRuns` on `clock` (runs live and die
   * with the process; adapter-queue's `BullMqRuns` keeps them in Redis).
   */
  readonly runs?: R;
  /** Where run starts are queued; default `runs.queue` (override it to put one port in front, e.g. a failing fake). */
  readonly runQueue?: RunQueue;
  /** Where runs are read; default `runs.store`. */
  readonly runStore?: RunStore;
  /** Where run events are read (the events stream); default `runs.events`. */
  readonly runEvents?: RunEventLog;
  /**
   * Told once when a run reaches a final status in this process without a worker: a
   * queued run cancelled by `cancelRun` (the worker's notifier tells the others);
   * default: nobody. Give it the same notifier as the workers. Source: docs/CONTRACT.md
   * "Runs lifecycle".
   */
  readonly notifier?: Notifier;
  /** Gets a line per run the cancel use case finishes; default silent. */
  readonly logger?: Logger;
  /** Counts rate-limit windows; default `InMemoryRateLimitStore` on `clock`. */
  readonly rateLimitStore?: RateLimitStore;
  /** The time, for windows, expiry, run times and worker backoff; default the system clock. */
  readonly clock?: Clock;
  /** Run and workflow run ids; default random UUIDs. */
  readonly ids?: IdGenerator;
  /**
   * Where `Idempotency-Key`s and their answers are kept; default an
   * `InMemoryIdempotencyStore` on `clock` (per process, bounded; adapter-queue's
   * `RedisIdempotencyStore` shares keys between instances). Source: docs/decisions.md "Idempotency keys".
   */
  readonly idempotency?: IdempotencyStore;
  /**
   * Metrics of rate-limit decisions, runs started, row writes, and (through
   * `startWorker`) queue waits and finished runs; default: none, and then no port is
   * wrapped (no cost). Source: docs/decisions.md "Observability".
   */
  readonly telemetry?: Telemetry;
  /**
   * The records of files (prepare, complete, list, run-start checks); default an
   * `InMemoryFileCatalog` (per process; adapter-queue's `RedisFileCatalog` shares them).
   * Source: docs/CONTRACT.md "Files".
   */
  readonly fileCatalog?: FileCatalog;
  /**
   * The bytes of files; default an `InMemoryFileStore` (every byte in memory: fine for
   * tests and a few small files; adapter-storage's `LocalFileStore` or `S3FileStore`
   * otherwise). Source: docs/CONTRACT.md "Files".
   */
  readonly fileStore?: FileStore;
}

/** Settings of {@link createCore}. URLs are absolute; a trailing slash is removed. */
export interface CoreOptions {
  /** `{base_url}`: run `status_url`s are `{base_url}/api/v1/runs/{run_id}`. */
  readonly baseUrl: string;
  /** `{egress_url}`, stated in the index; default `baseUrl`. */
  readonly egressUrl?: string;
  /** Rate limits per credential and per agent; default 600 / 60 s and 30 / 60 s (docs/api-spec.md "Limits"). */
  readonly rateLimits?: RateLimitSettings;
  /** What the index says beyond the defaults of `apiIndexSettings` (name, documentation URL, trial …). */
  readonly index?: Partial<Omit<ApiIndexSettings, 'baseUrl' | 'egressUrl' | 'credentialRateLimit'>>;
  /**
   * The IP address the egress route's database traffic leaves from (the API server's
   * `egress.source_address`), shown to customers as every connection's
   * `egress_source_address` so that they can allowlist it; absent: `null` there.
   * Source: docs/decisions.md "Discovery: agents and connections".
   */
  readonly egressSourceAddress?: string;
  /**
   * The key list cursors are signed with (core `PageCursors`): at least 32 bytes, the same
   * on every instance serving one API (else a cursor one mints, another refuses with 400
   * `invalid_cursor`). Default: 32 random bytes for this process, fine for one instance.
   * Source: docs/CONTRACT.md "Isolation between accounts" (signed cursors).
   */
  readonly cursorKey?: string | Uint8Array;
  /**
   * Lease of an in-flight `Idempotency-Key` claim and how long answers are replayed, in
   * milliseconds; default 60 000 and 24 h. The lease must outlast the longest request
   * (see core `DEFAULT_IDEMPOTENCY_LEASE_MS`). Source: docs/decisions.md "Idempotency keys".
   */
  readonly idempotency?: IdempotencySettings;
  /**
   * `files.*`: largest upload, upload-address life, retention, whether run starts check
   * file keys (core `FileSettings`; defaults 100 MiB, 1 h, 7 days, true). Source:
   * docs/CONTRACT.md "Files".
   */
  readonly files?: FileSettings;
  /**
   * The key the API's own upload addresses are signed with (core `UploadAddresses`), at
   * least 32 bytes, the same on every instance; default derived from `cursorKey`
   * (HMAC-SHA256 of a fixed label), so one shared key serves both.
   */
  readonly uploadKey?: string | Uint8Array;
}

/**
 * The core, wired: every use case, the rate-limit policy, and the ports they run on.
 * Every use case answers `Promise<Result<…>>` (except `describeApi`, which cannot fail).
 */
export interface Core<R extends RunBackend = InMemoryRuns> {
  /** `GET /api/v1`: the API index. */
  readonly describeApi: DescribeApi;
  /** Turns credential headers into a {@link Principal}. */
  readonly authenticate: Authenticate;
  /** `POST …/records`. */
  readonly insertRecord: InsertRecord;
  /** `PATCH …/records`. */
  readonly updateRecord: UpdateRecord;
  /** `POST /api/v1/agents/{agent_id}/run`. */
  readonly startRun: StartRun;
  /** `GET /api/v1/runs/{run_id}`. */
  readonly getRun: GetRun;
  /** `POST /api/v1/runs/{run_id}/cancel`. */
  readonly cancelRun: CancelRun;
  /** `GET /api/v1/runs/{run_id}/events` (text/event-stream). */
  readonly streamRunEvents: StreamRunEvents;
  /** `GET /api/v1/agents`: the caller's agents, a page at a time. */
  readonly listAgents: ListAgents;
  /** `GET /api/v1/agents/{agent_id}`. */
  readonly getAgent: GetAgent;
  /** `GET /api/v1/connections`: the caller's connections, a page at a time. */
  readonly listConnections: ListConnections;
  /** `GET /api/v1/connections/{connection_id}`. */
  readonly getConnection: GetConnection;
  /** `GET /api/v1/runs`: the caller's runs, newest first, a page at a time. */
  readonly listRuns: ListRuns;
  /** An agent the caller can see: the check of the agent's MCP endpoint (`…/agents/{agent_id}/mcp`). */
  readonly findAgent: FindAgent;
  /** The `Idempotency-Key` step of a run start, row insert or row update: replay, refuse or claim. */
  readonly claimIdempotencyKey: ClaimIdempotencyKey;
  /** `POST /api/v1/files`: prepare a file (its upload address). */
  readonly prepareFile: PrepareFile;
  /** `PUT {upload_url}` of the API's own upload address: the bytes of a pending file. */
  readonly receiveFileUpload: ReceiveFileUpload;
  /** `POST /api/v1/files/{file_key}/complete`: check the bytes; `ready` or `rejected`. */
  readonly completeFile: CompleteFile;
  /** `GET /api/v1/files/{file_key}`. */
  readonly getFile: GetFile;
  /** `GET /api/v1/files`: the caller's files, a page at a time. */
  readonly listFiles: ListFiles;
  /** `DELETE /api/v1/files/{file_key}`. */
  readonly deleteFile: DeleteFile;
  /** One pass of the file sweep (expiry); the API server runs it every minute. */
  readonly expireFiles: ExpireFiles;
  /** The file settings in force, defaults filled in. */
  readonly fileSettings: ResolvedFileSettings;
  /** The file records and bytes the use cases (and workers started by `startWorker`) use. */
  readonly files: { readonly catalog: FileCatalog; readonly store: FileStore };
  /** Meters requests: `rateLimits.meterFor(principal)` gives a call's `meter`. */
  readonly rateLimits: RateLimitPolicy;
  /** The runs backend the use cases queue into and read from (the one passed, or the default `InMemoryRuns`). */
  readonly runs: R;
  /** The clock every part runs on. */
  readonly clock: Clock;
  /**
   * Starts a worker that processes this core's queued runs with `processor` (on the
   * core's clock unless `options.clock` says otherwise); `close` stops it.
   */
  startWorker(processor: RunProcessor, options?: RunWorkerOptions & InProcessRunWorkerOptions): Promise<RunWorker>;
  /** Closes the runs backend (its workers first); see `RunBackend.close`. */
  close(): ReturnType<RunBackend['close']>;
}

/**
 * Wires the core in one call: the one place in the repository where use cases are
 * constructed (the API server, the HTTP adapter's tests, the examples and the bench all
 * come through here). Source: docs/ARCHITECTURE.md "Composition".
 *
 * @example
 * ```ts
 * const core = createCore({ agents: new InMemoryAgentCatalog([{ agentId: 'a1', accountId: 'acme' }]) }, { baseUrl: 'https://api.example.com' });
 * await core.startWorker(myProcessor);
 * const started = await core.startRun.execute({ principal: inProcessPrincipal('acme'), agentId: 'a1', body: { message: 'Hello' } });
 * ```
 * @throws RangeError when a rate limit is not a whole number ≥ 1 or a window not > 0 seconds, `cursorKey` is shorter than 32 bytes, or an idempotency lease or TTL is not > 0.
 */
export function createCore<R extends RunBackend = InMemoryRuns>(ports: CorePorts<R>, options: CoreOptions): Core<R> {
  const clock = ports.clock ?? new SystemClock();
  const ids = ports.ids ?? new RandomIdGenerator();
  const credentials = ports.credentials ?? new InMemoryCredentialStore();
  const agents = ports.agents ?? new InMemoryAgentCatalog();
  const connections = ports.connections ?? new InMemoryConnectionCatalog();
  const telemetry = ports.telemetry;
  let writer: RecordWriter = ports.recordWriter ?? new InMemoryRecordWriter();
  // Without a backend R is its default, InMemoryRuns: the cast only restates that.
  const runs = ports.runs ?? (new InMemoryRuns({ clock }) as unknown as R);
  let rateLimitStore: RateLimitStore = ports.rateLimitStore ?? new InMemoryRateLimitStore(clock);
  let runQueue: RunQueue = ports.runQueue ?? runs.queue;
  if (telemetry !== undefined) {
    writer = new ObservedRecordWriter(writer, telemetry);
    rateLimitStore = new ObservedRateLimitStore(rateLimitStore, telemetry);
    runQueue = new ObservedRunQueue(runQueue, telemetry);
  }
  const rateLimits = new RateLimitPolicy(rateLimitStore, options.rateLimits, clock);
  const baseUrl = options.baseUrl.replace(/\/+$/u, '');
  const index = apiIndexSettings(baseUrl, options.egressUrl ?? baseUrl, { ...options.index, credentialRateLimit: rateLimits.settings.credential });
  // Each use case's execute runs in a span named after it (no-op without a tracer provider).
  const tracer = tracerOf(CORE_TRACER_NAME);
  const cursorKey = options.cursorKey ?? randomBytes(32);
  const cursors = new PageCursors(cursorKey);
  const fileSettings = resolveFileSettings(options.files);
  const files = { catalog: ports.fileCatalog ?? new InMemoryFileCatalog(), store: ports.fileStore ?? new InMemoryFileStore() };
  const uploadKey = options.uploadKey ?? createHmac('sha256', cursorKey).update('svc upload addresses').digest();
  const runFiles = new StoredRunFiles(files);
  return {
    describeApi: new DescribeApi(index),
    authenticate: traceExecute(new Authenticate(credentials, clock), 'Authenticate.execute', tracer),
    insertRecord: traceExecute(new InsertRecord(connections, writer), 'InsertRecord.execute', tracer),
    updateRecord: traceExecute(new UpdateRecord(connections, writer), 'UpdateRecord.execute', tracer),
    startRun: traceExecute(new StartRun(agents, runQueue, ids, clock, {
        baseUrl,
        ...(ports.notifier !== undefined ? { notifier: ports.notifier } : {}),
        ...(fileSettings.verifyKeys ? { files: { catalog: files.catalog, retentionMs: fileSettings.retentionMs } } : {}),
      }),
      'StartRun.execute',
      tracer,
    ),
    getRun: traceExecute(new GetRun(ports.runStore ?? runs.store, { baseUrl }), 'GetRun.execute', tracer),
    cancelRun: traceExecute(
      new CancelRun(
        {
          runs: ports.runStore ?? runs.store,
          clock,
          ...(ports.notifier !== undefined ? { notifier: ports.notifier } : {}),
          ...(telemetry !== undefined ? { telemetry } : {}),
          ...(ports.logger !== undefined ? { logger: ports.logger } : {}),
        },
        { baseUrl },
      ),
      'CancelRun.execute',
      tracer,
    ),
    streamRunEvents: traceExecute(new StreamRunEvents(ports.runStore ?? runs.store, ports.runEvents ?? runs.events, { baseUrl }), 'StreamRunEvents.execute', tracer),
    ...discoveryUseCases(agents, connections, { baseUrl, ...(options.egressSourceAddress !== undefined ? { egressSourceAddress: options.egressSourceAddress } : {}) }, cursors, tracer),
    listRuns: traceExecute(new ListRuns(ports.runStore ?? runs.store, { baseUrl }, cursors), 'ListRuns.execute', tracer),
    findAgent: traceExecute(new FindAgent(agents), 'FindAgent.execute', tracer),
    claimIdempotencyKey: traceExecute(
      new ClaimIdempotencyKey(ports.idempotency ?? new InMemoryIdempotencyStore({ clock }), options.idempotency),
      'ClaimIdempotencyKey.execute',
      tracer,
    ),
    ...fileUseCases({ ...files, runs: ports.runStore ?? runs.store, clock, ids, addresses: new UploadAddresses(typeof uploadKey === 'string' ? Buffer.from(uploadKey, 'utf8') : uploadKey, baseUrl) }, { ...fileSettings, baseUrl }, cursors, tracer),
    fileSettings,
    files,
    rateLimits,
    runs,
    clock,
    startWorker: (processor, workerOptions = {}) =>
      runs.startWorker(processor, { clock, files: runFiles, ...(telemetry !== undefined ? { telemetry } : {}), ...workerOptions }),
    close: () => runs.close(),
  };
}

/** The discovery use cases of agents and connections (docs/CONTRACT.md "Discovery"), each traced like the others. */
function discoveryUseCases(
  agents: AgentCatalog,
  connections: ConnectionCatalog,
  settings: { readonly baseUrl: string; readonly egressSourceAddress?: string },
  cursors: PageCursors,
  tracer: ReturnType<typeof tracerOf>,
): Pick<Core, 'listAgents' | 'getAgent' | 'listConnections' | 'getConnection'> {
  return {
    listAgents: traceExecute(new ListAgents(agents, settings, cursors), 'ListAgents.execute', tracer),
    getAgent: traceExecute(new GetAgent(agents, settings), 'GetAgent.execute', tracer),
    listConnections: traceExecute(new ListConnections(connections, settings, cursors), 'ListConnections.execute', tracer),
    getConnection: traceExecute(new GetConnection(connections, settings), 'GetConnection.execute', tracer),
  };
}

/** The file use cases (docs/CONTRACT.md "Files"), each traced like the others. */
function fileUseCases(
  ports: { readonly catalog: FileCatalog; readonly store: FileStore; readonly runs: RunStorePort; readonly clock: Clock; readonly ids: IdGenerator; readonly addresses: UploadAddresses },
  settings: ResolvedFileSettings & { readonly baseUrl: string },
  cursors: PageCursors,
  tracer: ReturnType<typeof tracerOf>,
): Pick<Core, 'prepareFile' | 'receiveFileUpload' | 'completeFile' | 'getFile' | 'listFiles' | 'deleteFile' | 'expireFiles'> {
  return {
    prepareFile: traceExecute(new PrepareFile(ports, settings), 'PrepareFile.execute', tracer),
    receiveFileUpload: traceExecute(new ReceiveFileUpload(ports), 'ReceiveFileUpload.execute', tracer),
    completeFile: traceExecute(new CompleteFile(ports, settings), 'CompleteFile.execute', tracer),
    getFile: traceExecute(new GetFile(ports), 'GetFile.execute', tracer),
    listFiles: traceExecute(new ListFiles(ports, cursors), 'ListFiles.execute', tracer),
    deleteFile: traceExecute(new DeleteFile(ports), 'DeleteFile.execute', tracer),
    expireFiles: traceExecute(new ExpireFiles(ports, settings), 'ExpireFiles.execute', tracer),
  };
}

/** Settings of {@link createWorker}. */
export interface CreateWorkerOptions extends RunWorkerOptions {
  /** Where the runs are: `InMemoryRuns` (this process) or adapter-queue's `BullMqRuns` (Redis). */
  readonly backend: RunBackend;
  /** The agent runtime that does each run's work. */
  readonly processor: RunProcessor;
}

/**
 * Starts a worker on `backend` with `processor`: a standalone worker process of a durable
 * backend (`BullMqRuns`), or the in-process worker of an embedded core. Same as
 * `backend.startWorker(processor, options)`, named for the composition roots that start
 * only workers. Source: docs/decisions.md "Run processors".
 */
export function createWorker(options: CreateWorkerOptions): Promise<RunWorker> {
  const { backend, processor, ...workerOptions } = options;
  return backend.startWorker(processor, workerOptions);
}

/**
 * The principal of an in-process caller that is not an HTTP request (a service embedding
 * the core, a job, a test): it acts for `accountId` with every scope, is charged only when
 * its call passes a meter, and its rate-limit windows are keyed by `name`
 * (`credential:<account>:in-process:<name>`). Source: docs/decisions.md "In-process callers".
 */
export function inProcessPrincipal(accountId: string, name = 'default'): Principal {
  return { accountId, credentialId: `in-process:${name}`, kind: 'in_process', scopes: new Set(['runs:write', 'runs:read', 'files:write']) };
}
