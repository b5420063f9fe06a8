import type { Run, RunQueue } from '@svc/core';
import { tracerOf, withSpan } from '@svc/core';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { ADAPTER_QUEUE_TRACER_NAME, REDIS_SPAN_ATTRIBUTES } from './tracing.js';
import { createRequire } from 'node:module';
import { createIORedisClient, Job, Queue, type IRedisClient, type JobsOptions, type JobType } from 'bullmq';
import type { ChainableCommander, Redis } from 'ioredis';
import { guardRedis } from './dependency-guard.js';
import type { RedisRunStore } from './redis-run-store.js';
import { QUIT_TIMEOUT_MS, quitWithin } from './close-within.js';
import { within } from './within.js';

/** The data of a BullMQ run job: the run id only; the run itself is in {@link RedisRunStore}. */
export interface RunJobData {
  readonly runId: string;
}

/** How many finished jobs BullMQ keeps, and for how long (whichever trims first). */
export interface KeepFinishedJobs {
  /** Most jobs kept. */
  readonly count: number;
  /** Seconds a job is kept after it finished (trimmed when a later job finishes). */
  readonly ageSeconds: number;
}

/** Options of {@link BullMqRunQueue}. */
export interface BullMqRunQueueOptions {
  /** ioredis client of the request path: the store's, and the one each run's `MULTI` is sent on. */
  readonly client: Redis;
  /**
   * ioredis client of BullMQ's `Queue` object (job counts, job listings; never the request
   * path); default `client`. BullMQ defines its 64 scripts on the client it is given, and
   * ioredis copies every script defined on a client into each pipeline it makes, which
   * made the run's `MULTI` the largest cost of a run start on Redis (bench/BENCHMARKS.md
   * "The run's MULTI, and what "met" means"). With a client of its own here, `client`
   * holds only BullMQ's add script.
   */
  readonly queueClient?: Redis;
  /** When true, {@link BullMqRunQueue.close} quits `client` (and `queueClient`) after the queue. Default false. */
  readonly ownsClient?: boolean;
  /** Where runs are recorded before their job is added. */
  readonly store: RedisRunStore;
  /** BullMQ queue name (no `:`); default `runs`. */
  readonly queueName?: string;
  /** BullMQ key prefix; default `svc` (keys `svc:runs:*`). */
  readonly prefix?: string;
  /** Processing attempts per run (BullMQ `attempts`); default 3. */
  readonly attempts?: number;
  /** First retry delay in ms, doubled per retry (BullMQ exponential backoff); default 1000. */
  readonly backoffMs?: number;
  /** Completed jobs kept; default 1000 jobs, 1 day. The run record outlives its job. */
  readonly keepCompleted?: KeepFinishedJobs;
  /** Failed jobs kept; default 5000 jobs, 7 days. */
  readonly keepFailed?: KeepFinishedJobs;
  /**
   * Bound in ms of `enqueue` (see `guardRedis`): past it, or when Redis is unreachable,
   * `enqueue` rejects with the core's `DependencyUnavailableError`. Default: none (the
   * client's own timeouts apply).
   */
  readonly operationTimeoutMs?: number;
}

/** BullMQ's name of a run job. */
export const RUN_JOB_NAME = 'run';

/** A Lua script as BullMQ ships it (`bullmq/dist/cjs/scripts`). */
interface BullMqScript {
  readonly name: string;
  readonly content: string;
  readonly keys: number;
}

/**
 * BullMQ's script that adds a job without delay, priority or parent (the only kind a run
 * job is), and the name BullMQ calls it by (`<name>:<BullMQ version>`,
 * `RedisQueueBackend.execCommand`). Read from BullMQ's own files, so that the request
 * client can define it alone (see {@link BullMqRunQueueOptions.queueClient}); BullMQ
 * exports neither. The lockfile pins BullMQ; a release that moves them fails here, at
 * start, and in every enqueue test.
 * @throws Error when BullMQ's files do not hold the script and version where read.
 */
function bullMqAddScript(): { readonly command: string; readonly script: BullMqScript } {
  const require = createRequire(import.meta.url);
  const { version } = require('bullmq/dist/cjs/version.js') as { version?: unknown };
  const { addStandardJob: script } = require('bullmq/dist/cjs/scripts/index.js') as { addStandardJob?: Partial<BullMqScript> };
  if (typeof version !== 'string' || typeof script?.name !== 'string' || typeof script.content !== 'string' || typeof script.keys !== 'number') {
    throw new Error('BullMQ does not hold its addStandardJob script and version where this adapter reads them');
  }
  return { command: `${script.name}:${version}`, script: script as BullMqScript };
}

const ALL_JOB_STATES: JobType[] = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];

/**
 * The core {@link RunQueue} on BullMQ: durable in Redis, so that a run answered 202
 * survives a crash of the API process or of a worker (docs/CONTRACT.md "Runs").
 *
 * `enqueue` writes the run's record in the {@link RedisRunStore} (created only if
 * absent), so `RunStore.get` finds it at once from any process, and a BullMQ job whose
 * `jobId` is the run id, which BullMQ adds at most once, in ONE `MULTI` transaction:
 * Redis applies both or neither, so there is never a record without a job (a run shown
 * `queued` that nothing will run) nor a job without a record. Jobs carry `attempts` and
 * exponential `backoff` for the worker. Round trips: one.
 *
 * What a failed `enqueue` (a 503 to the client) means for the run: it does not exist.
 * When the transaction got no answer in time on a live connection (a paused server that
 * may resume and run it later), `enqueue` sends a withdrawal right behind it on the same
 * connection, which Redis runs after it, deleting the record while it is untouched
 * (`queued`, no attempt); the job left without a record is skipped by the worker. One
 * exception: when Redis committed the transaction and the connection died before the
 * answer came (killed at that instant), the withdrawal cannot be sent, and the run exists
 * with its job and runs like an accepted one. Never a record without its job, so never a
 * run shown `queued` that nothing will run; never a lost 202.
 *
 * A second `enqueue` of the same run never makes a second run: the record is kept as
 * it is, and BullMQ ignores a job id it holds. Once BullMQ has trimmed a finished run's
 * job (`keepCompleted`, `keepFailed`) it accepts the id again; the worker then finds the
 * record final and skips it without processing.
 */
export class BullMqRunQueue implements RunQueue {
  /** The BullMQ queue (for diagnostics and tests). */
  readonly queue: Queue<RunJobData, string, string>;
  private readonly client: Redis;
  private readonly queueClient: Redis;
  /** BullMQ's add script, defined on `client` (and loaded again after a NOSCRIPT). */
  private readonly addScript: BullMqScript;
  /** `client` as BullMQ's transactions need it (its `runCommand`), made once. */
  private readonly transactionClient: IRedisClient;
  private readonly ownsClient: boolean;
  private readonly store: RedisRunStore;
  private readonly jobOptions: JobsOptions;
  private readonly timeoutMs: number | undefined;
  private readonly tracer: Tracer;

  /** @throws Error when `queueName` contains `:` (BullMQ's rule). */
  constructor(options: BullMqRunQueueOptions) {
    this.client = options.client;
    this.queueClient = options.queueClient ?? options.client;
    const { command, script } = bullMqAddScript();
    this.addScript = script;
    if (typeof (this.client as unknown as Record<string, unknown>)[command] !== 'function') {
      this.client.defineCommand(command, { numberOfKeys: script.keys, lua: script.content });
    }
    this.transactionClient = createIORedisClient(this.client);
    this.timeoutMs = options.operationTimeoutMs;
    this.ownsClient = options.ownsClient ?? false;
    this.store = options.store;
    this.tracer = tracerOf(ADAPTER_QUEUE_TRACER_NAME);
    const keepCompleted = options.keepCompleted ?? { count: 1000, ageSeconds: 24 * 3600 };
    const keepFailed = options.keepFailed ?? { count: 5000, ageSeconds: 7 * 24 * 3600 };
    this.jobOptions = {
      attempts: options.attempts ?? 3,
      backoff: { type: 'exponential', delay: options.backoffMs ?? 1000 },
      removeOnComplete: { count: keepCompleted.count, age: keepCompleted.ageSeconds },
      removeOnFail: { count: keepFailed.count, age: keepFailed.ageSeconds },
    };
    this.queue = new Queue<RunJobData, string, string>(options.queueName ?? 'runs', {
      connection: this.queueClient,
      prefix: options.prefix ?? 'svc',
      defaultJobOptions: this.jobOptions,
    });
    // BullMQ re-emits connection errors here; the client's owner logs them.
    this.queue.on('error', () => undefined);
  }

  /**
   * Records `run` (unless recorded) and schedules it once.
   * @throws RangeError when `run.runId` cannot be a BullMQ job id (contains `:`, or is an
   * integer): checked before anything is written.
   * @throws DependencyUnavailableError when Redis is unreachable or does not answer within
   *   `operationTimeoutMs`; then nothing was promised, and the run exists entirely or
   *   not at all (see the class comment).
   * @throws Error when the job is not added (BullMQ queued no command on the transaction,
   *   or refused the job again after its script was loaded): the record is withdrawn.
   */
  async enqueue(run: Run): Promise<void> {
    checkJobId(run.runId);
    try {
      // One client span for the transaction (and the retry of a NOSCRIPT miss).
      await withSpan(this.tracer, 'redis run_queue.enqueue', REDIS_SPAN_ATTRIBUTES, () => guardRedis('run_queue', this.timeoutMs, async () => {
        const replies = await this.transaction(run);
        // A NOSCRIPT on BullMQ's add script (SCRIPT FLUSH, or a first MULTI on a new
        // connection that Redis aborted) fails that command alone inside MULTI: the record
        // is then committed without its job. ioredis, which sends a script in full only
        // the first time on a connection, forgets that only on a NOSCRIPT answer to the
        // command itself, which inside MULTI is QUEUED: so the script is loaded here, and
        // one more transaction adds the job and keeps the record as it is. Anything but an
        // added job then throws (and the record is withdrawn below): never a 202 without a job.
        if (isNoScript(replies[1]?.[0])) {
          await this.client.script('LOAD', this.addScript.content);
          const again = await this.transaction(run);
          if (again[1]?.[0] instanceof Error) throw again[1][0];
        }
      }), SpanKind.CLIENT);
    } catch (error) {
      // No answer in time while still connected (a paused or overloaded server): the
      // transaction may yet run. The withdrawal follows it on the same connection, so it
      // runs right after it and undoes it unless a worker has started the run already.
      if (this.client.status === 'ready') {
        this.store.withdraw(run.runId).catch(() => undefined);
      }
      throw error;
    }
  }

  /** One MULTI: the record (unless it exists), then the job (unless it exists). */
  private async transaction(run: Run): Promise<[Error | null, unknown][]> {
    const multi = this.transactionClient.multi();
    this.store.addCreate(multi as unknown as ChainableCommander, run);
    const job = new Job<RunJobData, string, string>(this.queue, RUN_JOB_NAME, { runId: run.runId }, { ...this.jobOptions, jobId: run.runId }, run.runId);
    // BullMQ queues its add script on the transaction synchronously; its promise settles
    // with the transaction object, and the reply comes from exec.
    void job.addJob(multi).catch(() => undefined);
    const replies = await multi.exec();
    if (replies === null) throw new Error('the run transaction was discarded');
    // BullMQ queued no command (another add script than the one defined on this client, a
    // throw inside addJob): the record alone was committed; the throw withdraws it.
    if (replies.length !== 2) throw new Error(`the run transaction held ${replies.length} commands, not the record and the job`);
    const [created, added] = replies;
    if (created?.[0] instanceof Error) throw created[0];
    this.store.createdOrFound(run.runId, created?.[1] ?? null);
    if (added?.[0] instanceof Error && !isNoScript(added[0])) throw added[0];
    if (typeof added?.[1] === 'number' && added[1] < 0) throw new Error(`BullMQ refused the run job (code ${added[1]})`);
    return replies;
  }

  /**
   * How many jobs exist for `runId` in any state (0 or 1). Reads the whole queue: for
   * tests and diagnostics, not for a request path.
   */
  async scheduledCount(runId: string): Promise<number> {
    const jobs = await this.queue.getJobs(ALL_JOB_STATES);
    return jobs.filter((job) => job.id === runId).length;
  }

  /**
   * Closes the queue, then its clients when owned (`client` and `queueClient`); each step waits at most
   * {@link QUIT_TIMEOUT_MS} (a lost or paused Redis never answers), then the client is
   * dropped.
   */
  async close(): Promise<void> {
    await within(this.queue.close(), QUIT_TIMEOUT_MS);
    if (this.ownsClient) await Promise.all([quitWithin(this.client), ...(this.queueClient !== this.client ? [quitWithin(this.queueClient)] : [])]);
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** BullMQ refuses custom job ids that contain `:` or read as an integer. */
function checkJobId(runId: string): void {
  if (runId.length === 0 || runId.includes(':') || `${parseInt(runId, 10)}` === runId) {
    throw new RangeError('a run id used as BullMQ job id must be non-empty, without ":", and not an integer');
  }
}
