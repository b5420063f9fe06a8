import type { Run, RunQueue } from '@svc/core';
import { Queue, type JobType } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RedisRunStore } from './redis-run-store.js';
import { QUIT_TIMEOUT_MS, quitWithin, settleWithin } from './close-within.js';

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
  /** ioredis client shared by the BullMQ queue and the store. */
  readonly client: Redis;
  /** When true, {@link BullMqRunQueue.close} quits `client` after the queue. Default false. */
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
}

/** BullMQ's name of a run job. */
export const RUN_JOB_NAME = 'run';

const ALL_JOB_STATES: JobType[] = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];

/**
 * The core {@link RunQueue} on BullMQ: durable in Redis, so that a run answered 202
 * survives a crash of the API process or of a worker (CONTRACT.md "Runs").
 *
 * `enqueue` first records the run in the {@link RedisRunStore} (created only if absent),
 * so `RunStore.get` finds it at once from any process, then adds a BullMQ job whose
 * `jobId` is the run id, which BullMQ adds at most once: a retried `enqueue` never
 * duplicates the run. Because BullMQ trims finished jobs (`keepCompleted`, `keepFailed`)
 * and would then accept the id again, no job is added for a run whose record is past
 * `queued`. Jobs carry `attempts` and exponential `backoff` for the worker.
 * Round trips: two (the record's script, then BullMQ's add script).
 *
 * If the process dies between the two steps, the record exists without a job and
 * `enqueue` has not resolved: nothing was promised (core `RunQueue`), and a retried
 * `enqueue` of the same run adds the job.
 */
export class BullMqRunQueue implements RunQueue {
  /** The BullMQ queue (for diagnostics and tests). */
  readonly queue: Queue<RunJobData, string, string>;
  private readonly client: Redis;
  private readonly ownsClient: boolean;
  private readonly store: RedisRunStore;

  /** @throws Error when `queueName` contains `:` (BullMQ's rule). */
  constructor(options: BullMqRunQueueOptions) {
    this.client = options.client;
    this.ownsClient = options.ownsClient ?? false;
    this.store = options.store;
    const keepCompleted = options.keepCompleted ?? { count: 1000, ageSeconds: 24 * 3600 };
    const keepFailed = options.keepFailed ?? { count: 5000, ageSeconds: 7 * 24 * 3600 };
    this.queue = new Queue<RunJobData, string, string>(options.queueName ?? 'runs', {
      connection: options.client,
      prefix: options.prefix ?? 'svc',
      defaultJobOptions: {
        attempts: options.attempts ?? 3,
        backoff: { type: 'exponential', delay: options.backoffMs ?? 1000 },
        removeOnComplete: { count: keepCompleted.count, age: keepCompleted.ageSeconds },
        removeOnFail: { count: keepFailed.count, age: keepFailed.ageSeconds },
      },
    });
    // BullMQ re-emits connection errors here; the client's owner logs them.
    this.queue.on('error', () => undefined);
  }

  /**
   * Records `run` (unless recorded) and schedules it once.
   * @throws RangeError when `run.runId` cannot be a BullMQ job id (contains `:`, or is an
   * integer): checked before anything is written.
   * @throws when Redis is unreachable; then nothing was promised.
   */
  async enqueue(run: Run): Promise<void> {
    checkJobId(run.runId);
    const existing = await this.store.create(run);
    if (existing !== undefined && existing !== 'queued') return;
    await this.queue.add(RUN_JOB_NAME, { runId: run.runId }, { jobId: run.runId });
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
   * Closes the queue, then the client when owned; each step waits at most
   * {@link QUIT_TIMEOUT_MS} (a lost or paused Redis never answers), then the client is
   * dropped.
   */
  async close(): Promise<void> {
    await settleWithin(this.queue.close(), QUIT_TIMEOUT_MS);
    if (this.ownsClient) await quitWithin(this.client);
  }
}

/** BullMQ refuses custom job ids that contain `:` or read as an integer. */
function checkJobId(runId: string): void {
  if (runId.length === 0 || runId.includes(':') || `${parseInt(runId, 10)}` === runId) {
    throw new RangeError('a run id used as BullMQ job id must be non-empty, without ":", and not an integer');
  }
}
