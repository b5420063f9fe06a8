import type { Logger, RunProcessor, RunStore } from '@svc/core';
import { errorTypeOf, RunLifecycle, silentLogger, WorkerStoppingError } from '@svc/core';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RunJobData } from './bullmq-run-queue.js';
import { quitWithin } from './close-within.js';
import { RUN_WORKER_STOP_SLACK_MS } from './stop-bounds.js';
import { msUntil, within } from './within.js';
import type { RunWorkerCloseReport, RunWorkerOptions } from '@svc/core';

/** BullMQ settings of {@link BullMqRunWorker}; defaults are BullMQ's. */
export interface BullMqRunWorkerSettings extends RunWorkerOptions {
  /** Ms a worker's lock on a job lasts (renewed at half); a killed worker's job is free after it. Default 30000. */
  readonly lockDurationMs?: number;
  /**
   * Ms between checks for jobs whose lock expired (stalled: their worker died). Default
   * 30000. Give every worker of a queue the same value: a check holds a queue-wide key
   * for this long, so one worker with a longer interval delays the checks of all.
   */
  readonly stalledIntervalMs?: number;
  /** Times a job may stall and be picked up again before it fails. Default 1. */
  readonly maxStalledCount?: number;
}

/** Options of {@link BullMqRunWorker}. */
export interface BullMqRunWorkerOptions extends BullMqRunWorkerSettings {
  /**
   * ioredis client with `maxRetriesPerRequest: null` (BullMQ refuses a worker connection
   * without it, so that its blocking commands wait out a Redis outage). BullMQ opens one
   * more connection from it for blocking reads and closes that one itself.
   */
  readonly client: Redis;
  /** When true, {@link BullMqRunWorker.close} quits `client` after the worker. Default false. */
  readonly ownsClient?: boolean;
  /** The run records (on `client` or another client). */
  readonly store: RunStore;
  readonly processor: RunProcessor;
  /** BullMQ queue name; default `runs`. Must match the queue's. */
  readonly queueName?: string;
  /** BullMQ key prefix; default `svc`. Must match the queue's. */
  readonly prefix?: string;
}

/** Reason given to a run that BullMQ failed without our processor: it stalled too often. */
export const INTERRUPTED_REASON = 'Processing was interrupted too many times.';

/**
 * Processes runs from the BullMQ queue with the core {@link RunProcessor}: statuses
 * queued → running → succeeded | failed | cancelled (core {@link RunLifecycle}), the
 * notifier once per run. Cancel works across processes through the run store: the API
 * process records the request in Redis (core `RunStore.requestCancel`), and the lifecycle
 * reads each run in progress every `cancelPollMs` and fires the processor's signal; a
 * job whose run was cancelled while queued is taken and skipped (its move to `running`
 * is refused), never processed.
 *
 * Retries are BullMQ's: a processor that throws fails the attempt, and BullMQ schedules
 * the next after the job's exponential backoff until its `attempts` are spent (the run
 * is `queued` in between, `failed` after the last). A processor that resolves
 * `{ok: false}` fails the job with BullMQ's `UnrecoverableError` (no more attempts).
 * A worker killed mid-run leaves its job locked until `lockDurationMs`; then a live
 * worker's stalled check (every `stalledIntervalMs`) puts it back, and another attempt
 * runs (the run goes running → running, one more attempt). A job that stalls more than
 * `maxStalledCount` times is failed by BullMQ without calling the processor; the
 * `failed` event then fails the run ({@link INTERRUPTED_REASON}) unless it is final.
 * What the job keeps in Redis on failure is a safe text, never the processor's message.
 */
export class BullMqRunWorker {
  private readonly worker: Worker<RunJobData, string, string>;
  private readonly lifecycle: RunLifecycle;
  private readonly logger: Logger;
  private readonly client: Redis;
  private readonly ownsClient: boolean;
  private readonly afterFailures = new Set<Promise<void>>();
  /** Aborted when a close's grace ends: the attempts in progress stop (core `RunProcessingContext.signal`). */
  private readonly interrupting = new AbortController();
  /** Run ids whose job this worker took and BullMQ has not yet moved on (completed or failed). */
  private readonly inProgress = new Set<string>();
  private whenIdle: (() => void) | undefined;
  private closing: Promise<RunWorkerCloseReport> | undefined;

  /** Starts processing at once. */
  constructor(options: BullMqRunWorkerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.client = options.client;
    this.ownsClient = options.ownsClient ?? false;
    this.lifecycle = new RunLifecycle({
      store: options.store,
      processor: options.processor,
      logger: this.logger,
      ...(options.notifier !== undefined ? { notifier: options.notifier } : {}),
      ...(options.clock !== undefined ? { clock: options.clock } : {}),
      ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}),
      ...(options.cancelGraceMs !== undefined ? { cancelGraceMs: options.cancelGraceMs } : {}),
      ...(options.cancelPollMs !== undefined ? { cancelPollMs: options.cancelPollMs } : {}),
      ...(options.files !== undefined ? { files: options.files } : {}),
    });
    this.worker = new Worker<RunJobData, string, string>(options.queueName ?? 'runs', (job) => this.processJob(job), {
      connection: options.client,
      prefix: options.prefix ?? 'svc',
      concurrency: options.concurrency ?? 1,
      ...(options.lockDurationMs !== undefined ? { lockDuration: options.lockDurationMs } : {}),
      ...(options.stalledIntervalMs !== undefined ? { stalledInterval: options.stalledIntervalMs } : {}),
      ...(options.maxStalledCount !== undefined ? { maxStalledCount: options.maxStalledCount } : {}),
    });
    this.worker.on('completed', (job) => this.settled(job.id));
    this.worker.on('failed', (job) => {
      this.settled(job?.id);
      const pending = this.afterFailed(job).catch((error: unknown) => {
        this.logger.error({ component: 'run-worker', run_id: job?.id ?? null, error_type: errorTypeOf(error) }, 'could not record a failed run');
      });
      this.afterFailures.add(pending);
      void pending.finally(() => this.afterFailures.delete(pending));
    });
    this.worker.on('error', (error) => {
      this.logger.error({ component: 'run-worker', error_type: errorTypeOf(error) }, 'run worker error');
    });
  }

  /** Resolves when the worker is connected and taking jobs. */
  async waitUntilReady(): Promise<void> {
    await this.worker.waitUntilReady();
  }

  /**
   * Stops taking jobs, waits for the runs in progress (unless `force`) at most `graceMs`
   * ms, then stops the BullMQ worker without waiting; with `ownsClient` it then quits the
   * client (dropped when Redis does not answer within `QUIT_TIMEOUT_MS`). A second
   * call returns the first one's promise. Resolves within `graceMs` +
   * {@link RUN_WORKER_STOP_SLACK_MS} whatever state Redis is in (+ `QUIT_TIMEOUT_MS`
   * with `ownsClient`; `BullMqRuns` quits the clients itself, all at once, in its
   * close phase). A `graceMs` that is not finite waits for the runs for ever.
   *
   * @returns the runs abandoned in progress: their jobs stay locked until
   * `lockDurationMs`, then the stalled check of a live worker queues them again.
   */
  close(force = false, graceMs = Number.POSITIVE_INFINITY): Promise<RunWorkerCloseReport> {
    this.closing ??= this.closeOnce(force, graceMs);
    return this.closing;
  }

  /** Ids of the runs this worker is processing now (those a close would abandon). */
  runsInProgress(): readonly string[] {
    return [...this.inProgress];
  }

  private async closeOnce(force: boolean, graceMs: number): Promise<RunWorkerCloseReport> {
    const started = Date.now();
    const graceEnd = started + (force ? 0 : graceMs);
    const stopEnd = graceEnd + RUN_WORKER_STOP_SLACK_MS;
    // Not BullMQ's close(false): it waits for its fetch loop, which retries for ever while
    // Redis is away (measured: pending for ever with Redis SIGKILLed and no run in
    // progress). Pausing without waiting stops the fetching (no Redis call); the runs in
    // progress are tracked here, so the wait for them can be bounded; then BullMQ's forced
    // close only stops its timers and connections (measured: 1 ms with Redis lost or
    // paused). Every step shares the one deadline `stopEnd`.
    await within(this.worker.pause(true), msUntil(stopEnd));
    if (this.inProgress.size > 0) {
      await within(new Promise<void>((resolve) => (this.whenIdle = resolve)), msUntil(graceEnd));
    }
    const abandonedRunIds = [...this.inProgress];
    this.interrupting.abort(new WorkerStoppingError());
    await within(this.worker.close(true), msUntil(stopEnd));
    // Recording a stalled-out run needs Redis; without it the run stays as it is.
    await within(Promise.all(this.afterFailures), msUntil(stopEnd));
    const quit = !this.ownsClient || (await quitWithin(this.client));
    return { abandonedRunIds, droppedClients: quit ? [] : ['run-worker'] };
  }

  private settled(jobId: string | undefined): void {
    if (jobId === undefined || !this.inProgress.delete(jobId)) return;
    if (this.inProgress.size === 0) this.whenIdle?.();
  }

  private async processJob(job: Job<RunJobData, string, string>): Promise<string> {
    const runId = typeof job.data.runId === 'string' ? job.data.runId : String(job.id);
    if (job.id !== undefined) this.inProgress.add(job.id);
    const maxAttempts = job.opts.attempts ?? 1;
    const lastAttempt = job.attemptsMade + 1 >= maxAttempts;
    const outcome = await this.lifecycle.attempt(runId, { lastAttempt, maxAttempts, signal: this.interrupting.signal });
    switch (outcome.kind) {
      case 'retry':
        throw new Error(`run attempt failed (${errorTypeOf(outcome.error)})`);
      case 'interrupted':
        // The worker is closing: its job stays active until its lock expires, then a live
        // worker's stalled check queues it again (the run is `queued` meanwhile).
        throw new Error('run attempt interrupted: the worker is stopping');
      case 'failed':
        throw new UnrecoverableError(outcome.reason);
      default:
        return outcome.kind;
    }
  }

  private async afterFailed(job: Job<RunJobData, string, string> | undefined): Promise<void> {
    if (job === undefined || !(await job.isFailed())) return;
    const runId = typeof job.data.runId === 'string' ? job.data.runId : String(job.id);
    await this.lifecycle.finish(runId, 'failed', { failureReason: INTERRUPTED_REASON });
  }
}
