import { DependencyUnavailableError, errorTypeOf, silentLogger, type Logger } from '@svc/core';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { WebhookDeliverer } from './deliverer.js';
import type { WebhookDelivery } from './delivery.js';
import type { WebhookQueue } from './queue.js';
import { DEFAULT_RETRY_SCHEDULE_MS, retryDelayMs } from './retry-schedule.js';

/** Settings of {@link BullMqWebhookQueue}. */
export interface BullMqWebhookQueueSettings {
  /** A `redis://` URL or ioredis options; never logged (it may hold a password). */
  readonly redis: string | Omit<RedisOptions, 'replyMapping'>;
  /** BullMQ key prefix (keys `<prefix>:<queueName>:*`); default `svc`, the run queue's. */
  readonly prefix?: string;
  /** BullMQ queue name (no `:`); default {@link WEBHOOK_QUEUE_NAME}. */
  readonly queueName?: string;
  /**
   * Bound in ms of {@link BullMqWebhookQueue.enqueue}: past it, or at once while Redis is
   * disconnected, it rejects with the core's `DependencyUnavailableError`. Default 1000.
   */
  readonly operationTimeoutMs?: number;
  /** Delays in ms of `webhooks.retry_schedule_ms`, for a retry whose delay a failed attempt did not say (a bug); default {@link DEFAULT_RETRY_SCHEDULE_MS}. */
  readonly retryScheduleMs?: readonly number[];
}

/** Default BullMQ queue name of webhook deliveries: `webhooks` (keys `svc:webhooks:*`), apart from the runs' queue. */
export const WEBHOOK_QUEUE_NAME = 'webhooks';

const JOB_NAME = 'deliver';
const BACKOFF_TYPE = 'webhook-schedule';
/**
 * BullMQ attempts of a job: high enough never to be the limit; the deliverer ends a
 * delivery by its 72 h window (with the default schedule, 12 attempts).
 */
const MAX_JOB_ATTEMPTS = 100_000;

/** Thrown by the processor to have BullMQ retry the job after `delayMs`. */
class RetryLater extends Error {
  override readonly name = 'RetryLater';
  constructor(readonly delayMs: number) {
    super(`webhook attempt failed; next in ${delayMs} ms`);
  }
}

/**
 * Durable webhook deliveries on BullMQ and Redis (docs/decisions.md "Webhooks"): one job per
 * delivery (job id the `webhook-id`, so the same delivery is queued once), its attempts
 * BullMQ's, the delay between them from the deliverer's verdict through a custom backoff
 * strategy (the retry schedule). A job waiting for its retry is a delayed job in Redis: any
 * worker on the same Redis and queue name takes it when due, also after every process that
 * knew it stopped. Jobs hold the delivery (body and ids), never the endpoint's URL or secret.
 *
 * Two ioredis clients: the producer's fails fast (offline queue off, `commandTimeout`),
 * so {@link enqueue} is bounded; the worker's waits an outage out (BullMQ needs
 * `maxRetriesPerRequest: null` there). Both reconnect for ever (100 ms more per try, at most 1 s).
 */
export class BullMqWebhookQueue implements WebhookQueue {
  private worker: Worker<WebhookDelivery> | undefined;
  private workerClient: Redis | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly settings: BullMqWebhookQueueSettings,
    private readonly client: Redis,
    private readonly queue: Queue<WebhookDelivery>,
    private readonly logger: Logger,
  ) {}

  /**
   * Opens the producer side (no worker; see {@link startWorker}).
   * @param settings - see {@link BullMqWebhookQueueSettings}.
   * @param options - `logger` for connection and worker lines.
   */
  static open(settings: BullMqWebhookQueueSettings, options: { logger?: Logger } = {}): BullMqWebhookQueue {
    const logger = options.logger ?? silentLogger;
    const timeoutMs = settings.operationTimeoutMs ?? 1000;
    const client = redisClient(settings.redis, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: timeoutMs, connectTimeout: timeoutMs }, logger, 'webhook-queue');
    const queue = new Queue<WebhookDelivery>(settings.queueName ?? WEBHOOK_QUEUE_NAME, { connection: client, prefix: settings.prefix ?? 'svc' });
    queue.on('error', () => undefined);
    return new BullMqWebhookQueue(settings, client, queue, logger);
  }

  /** See {@link WebhookQueue.enqueue}. */
  async enqueue(delivery: WebhookDelivery): Promise<void> {
    const timeoutMs = this.settings.operationTimeoutMs ?? 1000;
    let timer: NodeJS.Timeout | undefined;
    const adding = this.queue.add(JOB_NAME, delivery, {
      jobId: delivery.deliveryId,
      attempts: MAX_JOB_ATTEMPTS,
      backoff: { type: BACKOFF_TYPE },
      // Ended deliveries are kept a while for inspection, bounded in count and age (seconds).
      removeOnComplete: { age: 86_400, count: 1000 },
      removeOnFail: { age: 7 * 86_400, count: 5000 },
    });
    adding.catch(() => undefined);
    try {
      await Promise.race([
        adding,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } catch (error) {
      throw new DependencyUnavailableError('redis', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Starts a worker that makes the attempts with `deliverer`, `concurrency` at a time
   * (default 4). Once per queue.
   */
  startWorker(deliverer: WebhookDeliverer, options: { concurrency?: number } = {}): void {
    if (this.worker !== undefined) throw new Error('the webhook worker is already started');
    const schedule = this.settings.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.workerClient = redisClient(this.settings.redis, { maxRetriesPerRequest: null, enableOfflineQueue: true }, this.logger, 'webhook-worker');
    this.worker = new Worker<WebhookDelivery>(
      this.settings.queueName ?? WEBHOOK_QUEUE_NAME,
      async (job: Job<WebhookDelivery>) => {
        const verdict = await deliverer.attempt(job.data, job.attemptsMade + 1);
        if (verdict.kind === 'retry') throw new RetryLater(verdict.delayMs);
        return verdict.kind;
      },
      {
        connection: this.workerClient,
        prefix: this.settings.prefix ?? 'svc',
        concurrency: options.concurrency ?? 4,
        settings: { backoffStrategy: (attemptsMade, _type, error) => (error instanceof RetryLater ? error.delayMs : retryDelayMs(schedule, attemptsMade)) },
      },
    );
    this.worker.on('error', (error) => this.logger.warn({ component: 'webhook-worker', error_type: errorTypeOf(error) }, 'webhook worker error'));
  }

  /** Deliveries not ended: jobs `waiting` (now or for a retry: `delayed`) or `active` (in an attempt). */
  async pending(): Promise<number> {
    const counts = await this.queue.getJobCounts('waiting', 'delayed', 'active');
    return (counts['waiting'] ?? 0) + (counts['delayed'] ?? 0) + (counts['active'] ?? 0);
  }

  /**
   * Stops taking deliveries in this process (the drain of a stop): attempts in flight
   * finish, deliveries still waiting stay in Redis for another process, and the producer
   * side stays open (a run finished in the drain still queues its deliveries). Resolves
   * when the attempts in flight have finished; never rejects. {@link close} after it
   * waits for the same attempts, bounded by its budget.
   */
  async stopDelivering(): Promise<void> {
    await this.worker?.close(false).catch(() => undefined);
  }

  /**
   * Closes the worker (an attempt in flight finishes; `force` cuts it, and its job is
   * taken again once its lock expires), then the queue and both clients, within
   * `budgetMs` (default 5000), after which the clients are disconnected. Never rejects.
   */
  close(force = false, budgetMs = 5_000): Promise<void> {
    this.closing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const closing = (async () => {
        await this.worker?.close(force).catch(() => undefined);
        await this.queue.close().catch(() => undefined);
        await Promise.all([this.client.quit().catch(() => undefined), this.workerClient?.quit().catch(() => undefined)]);
      })();
      await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, budgetMs)))]);
      clearTimeout(timer);
      this.client.disconnect();
      this.workerClient?.disconnect();
    })();
    return this.closing;
  }
}

/** An ioredis client whose connection errors are logged once per outage (error type only). */
function redisClient(redis: string | Omit<RedisOptions, 'replyMapping'>, overrides: Omit<RedisOptions, 'replyMapping'>, logger: Logger, role: string): Redis {
  const options = { ...overrides, retryStrategy: (times: number) => Math.min(times * 100, 1000) };
  const client = typeof redis === 'string' ? new Redis(redis, options) : new Redis({ ...redis, ...options });
  let down = false;
  client.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    logger.warn({ component: role, error_type: errorTypeOf(error) }, 'Redis connection lost; reconnecting');
  });
  client.on('ready', () => {
    down = false;
  });
  return client;
}
