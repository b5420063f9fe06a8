import type { Logger, RunProcessor } from '@svc/core';
import { silentLogger } from '@svc/core';
import { BullMqRunQueue, type KeepFinishedJobs } from './bullmq-run-queue.js';
import { BullMqRunWorker, type BullMqRunWorkerSettings } from './bullmq-run-worker.js';
import type { RunBackend, RunWorkerCloseReport } from '@svc/core';
import { QUIT_TIMEOUT_MS, quitAllWithin } from './close-within.js';
import { within } from './within.js';
import { guardRedis } from './dependency-guard.js';
import { createRedisClient, requestClientOptions, workerClientOptions, type RedisConnectionOptions } from './redis-client.js';
import { RedisRunStore } from './redis-run-store.js';

/** Settings of {@link BullMqRuns}. */
export interface BullMqRunsSettings {
  /** A `redis://` URL or ioredis options; never logged (it may hold a password). */
  readonly redis: string | RedisConnectionOptions;
  /**
   * Root of every key: BullMQ's prefix (keys `<prefix>:<queueName>:*`), run records
   * at `<prefix>:run-record:<runId>`, their event streams at `<prefix>:run-events:<runId>`
   * and the run list indexes at `<prefix>:run-index:*`.
   * Default `svc`.
   */
  readonly prefix?: string;
  /** BullMQ queue name (no `:`); default `runs`. */
  readonly queueName?: string;
  /** Processing attempts per run; default 3. */
  readonly attempts?: number;
  /** First retry delay in ms, doubled per retry; default 1000. */
  readonly backoffMs?: number;
  /** Completed BullMQ jobs kept; default 1000 jobs, 1 day. */
  readonly keepCompleted?: KeepFinishedJobs;
  /** Failed BullMQ jobs kept; default 5000 jobs, 7 days. */
  readonly keepFailed?: KeepFinishedJobs;
  /** Ms between two reads of the watched runs' event streams (adapter-queue `RedisRunStoreOptions.eventPollMs`); default 100. */
  readonly eventPollMs?: number;
  /** Seconds a finished run's record is kept; default `DEFAULT_FINISHED_RUN_TTL_SECONDS` (7 days), 0 forever. */
  readonly finishedRunTtlSeconds?: number;
  /**
   * Bound in ms of each request-side operation (`queue.enqueue`, `store.get`,
   * {@link BullMqRuns.ready}): past it, or at once when Redis is disconnected, they
   * reject with the core's `DependencyUnavailableError` (`ready` resolves false).
   * Default {@link DEFAULT_OPERATION_TIMEOUT_MS}.
   */
  readonly operationTimeoutMs?: number;
}

/**
 * Default of {@link BullMqRunsSettings.operationTimeoutMs}: 1000 ms, half of docs/CONTRACT.md's
 * default `dependency_timeout_ms` (2000), because a request also charges the rate
 * limiter, whose Redis call has its own share of that bound.
 */
export const DEFAULT_OPERATION_TIMEOUT_MS = 1000;

/**
 * Durable runs on BullMQ and Redis for a composition root: the queue and store of the
 * API process ({@link BullMqRuns.queue}, {@link BullMqRuns.store}) on one ioredis client
 * (role `run-queue`: every request's commands), BullMQ's `Queue` object on a second one
 * (role `run-queue-jobs`: job counts for the metrics, never a request; see
 * `BullMqRunQueueOptions.queueClient` for why), and workers ({@link BullMqRuns.startWorker}), each on a client of its own. The two
 * roles get different ioredis options on purpose: the request side fails within
 * `operationTimeoutMs` when Redis is lost, failing or paused (`requestClientOptions`),
 * a worker waits the outage out (`workerClientOptions`; BullMQ needs
 * `maxRetriesPerRequest: null` there). Both reconnect forever, so the same process
 * serves again when Redis returns.
 *
 * {@link BullMqRuns.close} closes in dependency order: workers (each waits for its runs
 * in progress, then quits its client), then the queue, then the two clients of the API process.
 */
export class BullMqRuns implements RunBackend {
  private readonly workers: BullMqRunWorker[] = [];
  /** The workers' own clients, quit by {@link BullMqRuns.close} with the queue's. */
  private readonly workerClients: ReturnType<typeof createRedisClient>[] = [];
  private closing: Promise<RunWorkerCloseReport> | undefined;

  private constructor(
    private readonly settings: BullMqRunsSettings,
    private readonly logger: Logger,
    private readonly client: ReturnType<typeof createRedisClient>,
    private readonly queueClient: ReturnType<typeof createRedisClient>,
    /** The run queue (core `RunQueue`). */
    readonly queue: BullMqRunQueue,
    /** The run store (core `RunStore`), on Redis: readable from every process. */
    readonly store: RedisRunStore,
  ) {
    this.events = store;
  }

  /** The runs' events (core `RunEventLog`): the store's streams, watched by one poller per process. */
  readonly events: RedisRunStore;

  /**
   * Connects to Redis and opens the queue and the store: the request client (role
   * `run-queue`) and BullMQ's `Queue` on a client of its own (`run-queue-jobs`), each
   * connected, and BullMQ's start-up commands answered, before this resolves.
   * @throws Error when Redis does not answer (both clients are closed again); the error
   *   names no host. @throws RangeError for a setting out of range (the clients are closed
   *   again too).
   */
  static async connect(settings: BullMqRunsSettings, options: { readonly logger?: Logger } = {}): Promise<BullMqRuns> {
    const logger = options.logger ?? silentLogger;
    const timeoutMs = settings.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
    const client = createRedisClient(settings.redis, { ...requestClientOptions(timeoutMs), lazyConnect: true }, logger, 'run-queue');
    const queueClient = createRedisClient(settings.redis, { ...requestClientOptions(timeoutMs), lazyConnect: true }, logger, 'run-queue-jobs');
    let queue: BullMqRunQueue | undefined;
    try {
      try {
        // With the offline queue off, the first command must wait for the connection.
        await Promise.all([client.connect(), queueClient.connect()]);
        await client.ping();
      } catch (error) {
        throw new Error('Redis for the run queue does not answer', { cause: error });
      }
      const store = new RedisRunStore({ client, ...storeSettings(settings), operationTimeoutMs: timeoutMs, logger });
      queue = new BullMqRunQueue({
        client,
        queueClient,
        store,
        ...(settings.queueName !== undefined ? { queueName: settings.queueName } : {}),
        prefix: settings.prefix ?? 'svc',
        ...(settings.attempts !== undefined ? { attempts: settings.attempts } : {}),
        ...(settings.backoffMs !== undefined ? { backoffMs: settings.backoffMs } : {}),
        ...(settings.keepCompleted !== undefined ? { keepCompleted: settings.keepCompleted } : {}),
        ...(settings.keepFailed !== undefined ? { keepFailed: settings.keepFailed } : {}),
        operationTimeoutMs: timeoutMs,
      });
      // BullMQ's own start-up commands on its client (its Redis version check) are
      // answered before the first request.
      try {
        await queue.queue.waitUntilReady();
      } catch (error) {
        throw new Error('Redis for the run queue did not answer BullMQ', { cause: error });
      }
      return new BullMqRuns(settings, logger, client, queueClient, queue, store);
    } catch (error) {
      await queue?.queue.close().catch(() => undefined);
      client.disconnect();
      queueClient.disconnect();
      throw error;
    }
  }

  /**
   * Starts a worker that processes runs with `processor` on a client of its own.
   * @throws Error after {@link BullMqRuns.close}.
   */
  async startWorker(processor: RunProcessor, options: BullMqRunWorkerSettings = {}): Promise<BullMqRunWorker> {
    if (this.closing !== undefined) throw new Error('BullMqRuns is closed');
    const logger = options.logger ?? this.logger;
    const client = createRedisClient(this.settings.redis, workerClientOptions(), logger, 'run-worker');
    const worker = new BullMqRunWorker({
      ...options,
      logger,
      client,
      // Quit here, with the other clients, under one deadline (close).
      ownsClient: false,
      store: new RedisRunStore({ client, ...storeSettings(this.settings), logger }),
      processor,
      ...(this.settings.queueName !== undefined ? { queueName: this.settings.queueName } : {}),
      prefix: this.settings.prefix ?? 'svc',
    });
    this.workers.push(worker);
    this.workerClients.push(client);
    await worker.waitUntilReady();
    return worker;
  }

  /**
   * Readiness of Redis for `/readyz`: true when it answers a PING within
   * `operationTimeoutMs`. Never rejects.
   */
  ready(): Promise<boolean> {
    return this.store.ping();
  }

  /**
   * Closes the workers, then the queue and every client; see the class comment. A second
   * call returns the first one's promise. Bounded: the workers stop within `graceMs` +
   * `RUN_WORKER_STOP_SLACK_MS` (see {@link BullMqRunWorker.close}); then the queue closes
   * and every client (`run-queue`, `run-queue-jobs` and each worker's) is sent QUIT at the same time, all
   * within one {@link QUIT_TIMEOUT_MS}: a client whose QUIT is not answered is dropped.
   * @param force - do not wait for runs in progress (their jobs stall and are picked up
   * again by another worker, see {@link BullMqRunWorker}).
   * @param graceMs - ms to wait for runs in progress at most; default (not finite) for ever.
   * @returns the runs abandoned in progress by every worker, and the clients dropped
   * because Redis did not answer their QUIT.
   */
  close(force = false, graceMs = Number.POSITIVE_INFINITY): Promise<RunWorkerCloseReport> {
    this.closing ??= this.closeOnce(force, graceMs);
    return this.closing;
  }

  /**
   * Runs waiting in Redis to be taken: BullMQ jobs `waiting` (BullMQ 6 counts a paused
   * queue's jobs there), `prioritized` and `delayed` (a retry waiting its backoff). One round trip, bounded by
   * `operationTimeoutMs` like every request-side call: a scrape never waits on a lost Redis.
   * @throws DependencyUnavailableError when Redis is unreachable or silent.
   */
  async queueDepth(): Promise<number> {
    const counts = await guardRedis('run_queue', this.settings.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS, () =>
      this.queue.queue.getJobCounts('waiting', 'prioritized', 'delayed'),
    );
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  }

  /** Always `true`: a queued run waits in Redis for any worker, through this process's exit. */
  get durable(): true {
    return true;
  }

  private async closeOnce(force: boolean, graceMs: number): Promise<RunWorkerCloseReport> {
    const reports = await Promise.all(this.workers.splice(0).map((w) => w.close(force, graceMs)));
    // A shared connection's Queue.close sends nothing to Redis (BullMQ RedisConnection:
    // it only waits for its initialisation), so it need not precede the QUITs.
    const [, dropped] = await Promise.all([
      within(this.queue.close(), QUIT_TIMEOUT_MS),
      quitAllWithin([{ role: 'run-queue', client: this.client }, { role: 'run-queue-jobs', client: this.queueClient }, ...this.workerClients.splice(0).map((client) => ({ role: 'run-worker', client }))]),
    ]);
    return {
      abandonedRunIds: reports.flatMap((r) => r.abandonedRunIds),
      droppedClients: [...reports.flatMap((r) => r.droppedClients ?? []), ...dropped],
    };
  }
}

function storeSettings(settings: BullMqRunsSettings): { keyPrefix: string; indexKeyPrefix: string; eventsKeyPrefix: string; finishedRunTtlSeconds?: number; eventPollMs?: number } {
  return {
    keyPrefix: `${settings.prefix ?? 'svc'}:run-record:`,
    indexKeyPrefix: `${settings.prefix ?? 'svc'}:run-index:`,
    eventsKeyPrefix: `${settings.prefix ?? 'svc'}:run-events:`,
    ...(settings.eventPollMs !== undefined ? { eventPollMs: settings.eventPollMs } : {}),
    ...(settings.finishedRunTtlSeconds !== undefined ? { finishedRunTtlSeconds: settings.finishedRunTtlSeconds } : {}),
  };
}
