import type { Run, RunProgress, RunStatus, RunStatusChange, RunStore, TransitionOutcome } from '@svc/core';
import { canTransition, DEFAULT_RUN_RETENTION_SECONDS, FINAL_RUN_STATUSES, RUN_STATUSES, tracerOf, withSpan } from '@svc/core';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import type { ChainableCommander, Redis } from 'ioredis';
import { guardRedis } from './dependency-guard.js';
import { LuaScript } from './lua-script.js';
import { ADAPTER_QUEUE_TRACER_NAME, REDIS_SPAN_ATTRIBUTES } from './tracing.js';
import { hashArgs, hashFromPairs, progressJson, runFromHash } from './run-record.js';

/**
 * Creates the hash unless the key exists. ARGV: HSET field/value pairs.
 * Returns nil when created, else the status found.
 */
const CREATE_SOURCE = `
local status = redis.call('HGET', KEYS[1], 'status')
if status then return status end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'corrupt' end
redis.call('HSET', KEYS[1], unpack(ARGV))
return false
`;
const CREATE_SCRIPT = new LuaScript(CREATE_SOURCE);

/**
 * Deletes the record when it is untouched since its creation (`queued`, no attempt):
 * the withdrawal of a run whose creation got no answer in time. Returns 1 when deleted.
 */
const WITHDRAW_SOURCE = `
if redis.call('HGET', KEYS[1], 'status') == 'queued' and redis.call('HGET', KEYS[1], 'attempts') == '0' then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/**
 * Compare-and-set of the status. ARGV: the statuses allowed to move (space separated),
 * the new status, updatedAt, attempts increment, failure reason ('' clears it),
 * seconds to keep the record (0: keep), the output as JSON ('' keeps the field as it is).
 * Returns {applied (0|1), HGETALL after}.
 */
const TRANSITION_SCRIPT = new LuaScript(`
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0, {}} end
local allowed = 0
for s in string.gmatch(ARGV[1], '%S+') do
  if s == status then allowed = 1 end
end
if allowed == 1 then
  redis.call('HSET', KEYS[1], 'status', ARGV[2], 'updatedAt', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'attempts', ARGV[4])
  if ARGV[5] == '' then
    redis.call('HDEL', KEYS[1], 'failureReason')
  else
    redis.call('HSET', KEYS[1], 'failureReason', ARGV[5])
  end
  if ARGV[7] ~= '' then
    redis.call('HSET', KEYS[1], 'output', ARGV[7])
  end
  if tonumber(ARGV[6]) > 0 then
    redis.call('EXPIRE', KEYS[1], ARGV[6])
  else
    redis.call('PERSIST', KEYS[1])
  end
end
return {allowed, redis.call('HGETALL', KEYS[1])}
`);

/** Sets the `progress` field when the run is `running`. ARGV: the progress JSON. Returns 1 when set. */
const PROGRESS_SCRIPT = new LuaScript(`
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[1])
return 1
`);

/** The statuses a run may leave for `to`, per core `canTransition`. */
const ALLOWED_FROM: Readonly<Record<RunStatus, string>> = Object.fromEntries(
  RUN_STATUSES.map((to) => [to, RUN_STATUSES.filter((from) => canTransition(from, to)).join(' ')]),
) as Record<RunStatus, string>;

/** Options of {@link RedisRunStore}. */
export interface RedisRunStoreOptions {
  /** The ioredis client (shared with the BullMQ queue or worker of the same process). */
  readonly client: Redis;
  /** Prefix of the record keys: `<keyPrefix><runId>`; default `svc:run-record:`. */
  readonly keyPrefix?: string;
  /**
   * Seconds a run record is kept once its status is final (succeeded, failed,
   * cancelled), so that `GET {status_url}` still answers for that long; default 30 days,
   * 0 keeps it forever. A run that is not final never expires (docs/CONTRACT.md "Runs": a run
   * answered 202 is never lost).
   */
  readonly finishedRunTtlSeconds?: number;
  /**
   * Bound in ms of every call (see `guardRedis`): past it, or when Redis is unreachable,
   * a call rejects with the core's `DependencyUnavailableError`. Set it where a request
   * waits (the API process); leave it out for a worker, whose client waits out outages.
   */
  readonly operationTimeoutMs?: number;
}

/**
 * Default of {@link RedisRunStoreOptions.finishedRunTtlSeconds}: 7 days, core's
 * `DEFAULT_RUN_RETENTION_SECONDS` (the default of `runs.retention_seconds`), so that a run
 * is kept as long in Redis as in memory whoever builds the store.
 */
export const DEFAULT_FINISHED_RUN_TTL_SECONDS = DEFAULT_RUN_RETENTION_SECONDS;

/**
 * The core {@link RunStore} in Redis, readable from every
 * process: one hash per run at `<keyPrefix><runId>` with the status, times, attempts,
 * failure reason and the request (layout: `run-record.ts`). It is the run's only
 * record: BullMQ's job carries just the run id, and trims its finished jobs, while the
 * record stays until `finishedRunTtlSeconds` after the run ended.
 *
 * Round trips: `get` one (`HGETALL`), `save` one (`MULTI` of `DEL`, `HSET`, `EXPIRE`),
 * `create` and `transition` one each (a Lua script, atomic). Nothing here closes the
 * client: its owner does (see `BullMqRuns`). Every call turns a lost, failing or (with
 * `operationTimeoutMs`) silent Redis into the core's `DependencyUnavailableError`.
 * Source: docs/CONTRACT.md "Runs"; core `ports/run-store.ts`.
 */
export class RedisRunStore implements RunStore {
  private readonly client: Redis;
  private readonly keyPrefix: string;
  private readonly finishedTtl: number;
  private readonly timeoutMs: number | undefined;
  private readonly tracer: Tracer;

  /** @param options - client, key prefix, retention of finished runs and the bound of a call. */
  constructor(options: RedisRunStoreOptions) {
    this.client = options.client;
    this.timeoutMs = options.operationTimeoutMs;
    this.keyPrefix = options.keyPrefix ?? 'svc:run-record:';
    this.finishedTtl = options.finishedRunTtlSeconds ?? DEFAULT_FINISHED_RUN_TTL_SECONDS;
    this.tracer = tracerOf(ADAPTER_QUEUE_TRACER_NAME);
  }

  /** The Redis key of a run's record. */
  keyOf(runId: string): string {
    return this.keyPrefix + runId;
  }

  /**
   * @returns the run, or `undefined` when there is none with that id.
   * @throws DependencyUnavailableError when Redis is unreachable or does not answer in time.
   * @throws Error when the key holds no valid run record.
   */
  async get(runId: string): Promise<Run | undefined> {
    const hash = await this.guard('get', () => this.client.hgetall(this.keyOf(runId)));
    return runFromHash(runId, hash);
  }

  /** Stores `run`, replacing any earlier version (upsert). @throws DependencyUnavailableError as {@link RedisRunStore.get}. */
  async save(run: Run): Promise<void> {
    const key = this.keyOf(run.runId);
    const multi = this.client.multi().del(key).hset(key, ...hashArgs(run));
    if (FINAL_RUN_STATUSES.has(run.status) && this.finishedTtl > 0) multi.expire(key, this.finishedTtl);
    const replies = await this.guard('save', () => multi.exec());
    const failed = replies?.find(([error]) => error !== null);
    if (replies === null || failed !== undefined) throw failed?.[0] ?? new Error(`saving run ${run.runId} was aborted`);
  }

  /**
   * Adds the creation of `run`'s record (unless a record exists) to `transaction`, so
   * that it commits or not together with the other commands there (the queue's job).
   * EVAL with the source, not EVALSHA: inside MULTI a NOSCRIPT reply would fail this
   * command alone while the rest commits. Read the reply with {@link RedisRunStore.createdOrFound}.
   */
  addCreate(transaction: ChainableCommander, run: Run): void {
    transaction.eval(CREATE_SOURCE, 1, this.keyOf(run.runId), ...hashArgs(run));
  }

  /**
   * The reply of {@link RedisRunStore.addCreate} as in {@link RedisRunStore.create}.
   * @throws Error when the key held something else than a run record.
   */
  createdOrFound(runId: string, found: unknown): RunStatus | undefined {
    if (found === null) return undefined;
    if (typeof found !== 'string' || !(RUN_STATUSES as readonly string[]).includes(found)) {
      throw new Error(`run record ${runId} exists but is not a valid run record`);
    }
    return found as RunStatus;
  }

  /**
   * Records `run` unless a record with its id exists.
   * @returns `undefined` when it was created, else the status of the existing record.
   * @throws when Redis is unreachable, or the key holds something else than a run record.
   */
  async create(run: Run): Promise<RunStatus | undefined> {
    const found = await this.guard('create', () => CREATE_SCRIPT.run(this.client, [this.keyOf(run.runId)], hashArgs(run)));
    return this.createdOrFound(run.runId, found);
  }

  /** See core `RunStore.transition` (a compare-and-set in one Lua script). @throws DependencyUnavailableError as {@link RedisRunStore.get}. */
  async transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome> {
    const ttl = FINAL_RUN_STATUSES.has(change.to) ? this.finishedTtl : 0;
    const reply = await this.guard('transition', () => TRANSITION_SCRIPT.run(this.client, [this.keyOf(runId)], [
      ALLOWED_FROM[change.to],
      change.to,
      change.at.toISOString(),
      change.countAttempt === true ? 1 : 0,
      change.failureReason ?? '',
      ttl,
      change.output !== undefined ? JSON.stringify(change.output) : '',
    ]));
    if (!Array.isArray(reply) || !Array.isArray(reply[1])) throw new TypeError('unexpected reply from the run transition script');
    const run = runFromHash(runId, hashFromPairs(reply[1] as unknown[]));
    return reply[0] === 1 && run !== undefined ? { applied: true, run } : { applied: false, run };
  }

  /** See core `RunStore.reportProgress` (one Lua script: set only while `running`). @throws DependencyUnavailableError as {@link RedisRunStore.get}. */
  async reportProgress(runId: string, progress: RunProgress): Promise<boolean> {
    const reply = await this.guard('report_progress', () => PROGRESS_SCRIPT.run(this.client, [this.keyOf(runId)], [progressJson(progress)]));
    return reply === 1;
  }

  /**
   * Deletes `runId`'s record if no worker has touched it yet (`queued`, no attempt); see
   * `BullMqRunQueue`. Not bounded: it is sent on the same connection right behind a
   * transaction that got no answer, so that a paused server, once resumed, runs it after
   * that transaction. A job left without its record is skipped by the worker.
   * @returns true when a record was deleted.
   */
  async withdraw(runId: string): Promise<boolean> {
    return (await this.client.eval(WITHDRAW_SOURCE, 1, this.keyOf(runId))) === 1;
  }

  /** Whether Redis answers a PING within the bound. Never rejects. */
  async ping(): Promise<boolean> {
    return this.guard('ping', () => this.client.ping()).then(
      () => true,
      () => false,
    );
  }

  /** One bounded Redis operation (see `guardRedis`), in a client span `redis run_store.<name>`. */
  private guard<T>(name: string, operation: () => Promise<T>): Promise<T> {
    return withSpan(this.tracer, `redis run_store.${name}`, REDIS_SPAN_ATTRIBUTES, () => guardRedis('redis', this.timeoutMs, operation), SpanKind.CLIENT);
  }
}
