import type { CancelOutcome, Logger, Page, PageRequest, Run, RunEvent, RunEventListener, RunEventLog, RunListFilter, RunProgress, RunStatus, RunStatusChange, RunStore, TransitionOutcome } from '@svc/core';
import { canTransition, DEFAULT_RUN_RETENTION_SECONDS, errorTypeOf, FINAL_RUN_STATUSES, RUN_STATUSES, runEventTypeOf, runListKey, silentLogger, tracerOf, withSpan } from '@svc/core';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import type { ChainableCommander, Redis } from 'ioredis';
import { guardRedis } from './dependency-guard.js';
import { LuaScript } from './lua-script.js';
import { ADAPTER_QUEUE_TRACER_NAME, REDIS_SPAN_ATTRIBUTES } from './tracing.js';
import { hashArgs, hashFromPairs, progressJson, runFromHash, type RunHash } from './run-record.js';

/** The run id of an index member (core `runListKey`: 13 digits, `:`, the run id). */
const runIdOf = (member: string): string => member.slice(14);

/** Index entries a run creation examines per index, from a random rank, to drop those whose record is gone. */
const PRUNE_SAMPLE = 3;

/**
 * Creates the hash unless the key exists, records its event (`run.queued`: the hash, in a
 * new stream; a stream left by an expired record of the same id is dropped first), and
 * adds the run to its list indexes.
 * KEYS: the record, the account's index, the account and agent's index, the events stream.
 * ARGV: the index member (core `runListKey`), seconds to keep the indexes (0: keep),
 * the record key prefix, a random whole number (where the prune sample starts), then
 * the HSET field/value pairs.
 * Returns nil when created, else the status found (and then changes nothing).
 *
 * Pruning: the records of finished runs expire; their index entries are dropped when a
 * list reads past them, and here: each creation examines ${PRUNE_SAMPLE} entries of each index
 * from a random rank and drops those whose record is gone. Each entry is examined with
 * probability k/n per entry added (k = ${PRUNE_SAMPLE}, n the index's size), so in the
 * steady state, where one run expires per run added, k·dead/n = 1: about 1/k of an index
 * is dead, and an index holds about k/(k−1) = 1.5 times the account's (agent's) live runs,
 * however long it lives (a simulation gives 1.49–1.51; lists that read past dead entries
 * make it less). The record keys it examines are not in KEYS (as the run store is not
 * made for Redis Cluster anyway: its record and the BullMQ job share one MULTI).
 */
const CREATE_SOURCE = `
local status = redis.call('HGET', KEYS[1], 'status')
if status then return status end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'corrupt' end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('DEL', KEYS[4])
redis.call('XADD', KEYS[4], '*', unpack(redis.call('HGETALL', KEYS[1])))
for i = 2, 3 do
  redis.call('ZADD', KEYS[i], 0, ARGV[1])
  if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[i], ARGV[2]) end
  local n = redis.call('ZCARD', KEYS[i])
  if n > 1 then
    local from = tonumber(ARGV[4]) % n
    for _, member in ipairs(redis.call('ZRANGE', KEYS[i], from, from + ${PRUNE_SAMPLE - 1})) do
      if redis.call('EXISTS', ARGV[3] .. string.sub(member, 15)) == 0 then redis.call('ZREM', KEYS[i], member) end
    end
  end
end
return false
`;
const CREATE_SCRIPT = new LuaScript(CREATE_SOURCE);

/**
 * Deletes the record and its events stream when it is untouched since its creation
 * (`queued`, no attempt): the withdrawal of a run whose creation got no answer in time.
 * KEYS: the record, the events stream. Returns 1 when deleted.
 */
const WITHDRAW_SOURCE = `
if redis.call('HGET', KEYS[1], 'status') == 'queued' and redis.call('HGET', KEYS[1], 'attempts') == '0' then
  redis.call('DEL', KEYS[2])
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/**
 * Compare-and-set of the status, and its event (XADD of the hash after the change to the
 * run's stream, in the same script: atomic with it). KEYS: the record, the events
 * stream. ARGV: the statuses allowed to move (space separated),
 * the new status, updatedAt, attempts increment, failure reason ('' clears it),
 * seconds to keep the record and the stream (0: keep), the output as JSON ('' keeps the
 * field as it is). A move to succeeded or failed of a run with a cancel request becomes a
 * move to cancelled (core `statusAfter`). Returns {applied (0|1), HGETALL after}.
 */
const TRANSITION_SCRIPT = new LuaScript(`
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0, {}} end
local allowed = 0
for s in string.gmatch(ARGV[1], '%S+') do
  if s == status then allowed = 1 end
end
if allowed == 1 then
  local to, reason, output = ARGV[2], ARGV[5], ARGV[7]
  -- core statusAfter: a run with a cancel request ends cancelled, without output or reason.
  if (to == 'succeeded' or to == 'failed') and redis.call('HEXISTS', KEYS[1], 'cancelRequestedAt') == 1 then
    to, reason, output = 'cancelled', '', ''
  end
  redis.call('HSET', KEYS[1], 'status', to, 'updatedAt', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'attempts', ARGV[4])
  if reason == '' then
    redis.call('HDEL', KEYS[1], 'failureReason')
  else
    redis.call('HSET', KEYS[1], 'failureReason', reason)
  end
  if output ~= '' then
    redis.call('HSET', KEYS[1], 'output', output)
  end
  local after = redis.call('HGETALL', KEYS[1])
  redis.call('XADD', KEYS[2], '*', unpack(after))
  for i = 1, 2 do
    if tonumber(ARGV[6]) > 0 then
      redis.call('EXPIRE', KEYS[i], ARGV[6])
    else
      redis.call('PERSIST', KEYS[i])
    end
  end
  return {1, after}
end
return {0, redis.call('HGETALL', KEYS[1])}
`);

/**
 * A cancel request (core `cancelRequested`). KEYS: the record, the events stream. ARGV:
 * the time (ISO 8601), seconds to keep a finished record and its stream (0: keep).
 * A queued run becomes cancelled (updatedAt and cancelRequestedAt the time, failure
 * reason cleared, its event recorded, both keys set to expire); a running one gets
 * cancelRequestedAt unless it has one; a final one is left. Returns {kind, HGETALL
 * after}: kind 'cancelled', 'requested', 'final' or 'missing' (then no hash).
 */
const CANCEL_SCRIPT = new LuaScript(`
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing', {}} end
if status == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'cancelled', 'updatedAt', ARGV[1])
  if redis.call('HEXISTS', KEYS[1], 'cancelRequestedAt') == 0 then redis.call('HSET', KEYS[1], 'cancelRequestedAt', ARGV[1]) end
  redis.call('HDEL', KEYS[1], 'failureReason')
  local after = redis.call('HGETALL', KEYS[1])
  redis.call('XADD', KEYS[2], '*', unpack(after))
  if tonumber(ARGV[2]) > 0 then
    redis.call('EXPIRE', KEYS[1], ARGV[2])
    redis.call('EXPIRE', KEYS[2], ARGV[2])
  end
  return {'cancelled', after}
end
if status == 'running' then
  if redis.call('HEXISTS', KEYS[1], 'cancelRequestedAt') == 0 then redis.call('HSET', KEYS[1], 'cancelRequestedAt', ARGV[1]) end
  return {'requested', redis.call('HGETALL', KEYS[1])}
end
return {'final', redis.call('HGETALL', KEYS[1])}
`);

/**
 * Drops entries from a run list index. KEYS: the index. ARGV: the record key prefix, the
 * number n of entries whose record was found missing, those n entries, then entries that
 * no longer match the index (a run saved again with another account, agent or creation
 * time). The first are dropped only while their record is still missing, so that a list
 * racing a re-creation never drops a live run's entry. Returns how many were dropped.
 */
const PRUNE_SCRIPT = new LuaScript(`
local gone = tonumber(ARGV[2])
local dropped = 0
for i = 3, #ARGV do
  if i > gone + 2 or redis.call('EXISTS', ARGV[1] .. string.sub(ARGV[i], 15)) == 0 then
    dropped = dropped + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return dropped
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
  /**
   * Prefix of the run list indexes (sorted sets): `<indexKeyPrefix>a:<account>` and
   * `<indexKeyPrefix>g:<account>:<agent>` (`%` and `:` in ids escaped). Must not start
   * with `keyPrefix` nor be its prefix, so that no run id reaches an index through `get`.
   * Default: `keyPrefix` with its final `:` replaced by `-index:` (`svc:run-record-index:`;
   * `BullMqRuns` gives `<prefix>:run-index:`).
   */
  readonly indexKeyPrefix?: string;
  /**
   * Most index entries one `list` call examines (entries of runs that do not match the
   * status filter, and of expired runs, count); default {@link DEFAULT_MAX_LIST_SCAN}.
   */
  readonly maxListScan?: number;
  /**
   * Prefix of the runs' event streams (core `RunEventLog`): `<eventsKeyPrefix><runId>`.
   * Same rule as `indexKeyPrefix`. Default: `keyPrefix` with its final `:` replaced by
   * `-events:` (`svc:run-record-events:`; `BullMqRuns` gives `<prefix>:run-events:`).
   */
  readonly eventsKeyPrefix?: string;
  /**
   * Ms between two reads of the watched runs' streams ({@link RedisRunStore.watch}): the
   * most an events stream lags behind a status change made by another process.
   * Default {@link DEFAULT_EVENT_POLL_MS}.
   */
  readonly eventPollMs?: number;
  /**
   * Where `list` reports a run record it cannot read (an error line with the run id and
   * the error's type, never the record's content); default: nowhere.
   */
  readonly logger?: Logger;
}

/**
 * Default of {@link RedisRunStoreOptions.eventPollMs}: 100 ms. One pipeline of `XLEN`
 * (one per watched run, whatever the number of clients watching it) per tick while
 * anything is watched, on the store's own client: no connection per client, and an
 * event reaches a stream at most ~100 ms + one round trip after it was recorded.
 * Source: docs/decisions.md "Cancel and run events".
 */
export const DEFAULT_EVENT_POLL_MS = 100;

/** A record read by `list` whose key holds another Redis type (`WRONGTYPE`): unreadable, like a corrupt hash. */
const WRONG_TYPE: unique symbol = Symbol('wrong type');

/**
 * Default of {@link RedisRunStoreOptions.maxListScan}: 1000 entries, ten pages of the
 * largest `limit`. Past it a page is answered with the runs found so far (maybe none)
 * and a `next` position after the last entry examined.
 */
export const DEFAULT_MAX_LIST_SCAN = 1000;

/**
 * How much longer than a finished run's record an index key is kept after the account's
 * (agent's) last run creation: 30 days. A run still queued or running that long after
 * its account's last run start may be missing from the list (never from its
 * `status_url`); an account that stops starting runs leaves no index behind.
 */
const INDEX_TTL_MARGIN_SECONDS = 30 * 24 * 3600;

/** Index entries read per round trip while a status filter skips runs. */
const LIST_BATCH = 200;

/** `%` and `:` escaped, so that `<account>:<agent>` names one pair only. */
const escapeKeyPart = (part: string): string => part.replace(/[%:]/gu, (c) => (c === '%' ? '%25' : '%3A'));

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
 * Round trips: `get` one (`HGETALL`), `save` one (`MULTI` of `DEL`, `HSET`, `EXPIRE`
 * and the index writes), `create` and `transition` one each (a Lua script, atomic).
 *
 * The run list (`list`) reads indexes written with the record, in the same transaction
 * or script: per account and per account and agent, a sorted set whose members are the
 * runs' core `runListKey` (all scores 0, so members sort as bytes: newest first), read
 * with `ZRANGEBYLEX` from the page position. The status is read from the records (it
 * changes; the index does not). Entries whose record is gone (expired, withdrawn) or no
 * longer matches are skipped and dropped. One call examines at most `maxListScan`
 * entries, in batches of one `ZRANGEBYLEX` and one or two pipelines, all under one
 * `operationTimeoutMs`. Runs recorded before the indexes existed are not listed (they
 * expire with their retention). Nothing here closes the
 * client: its owner does (see `BullMqRuns`). Every call turns a lost, failing or (with
 * `operationTimeoutMs`) silent Redis into the core's `DependencyUnavailableError`.
 * Source: docs/CONTRACT.md "Runs"; core `ports/run-store.ts`.
 */
export class RedisRunStore implements RunStore, RunEventLog {
  private readonly client: Redis;
  private readonly keyPrefix: string;
  private readonly finishedTtl: number;
  private readonly timeoutMs: number | undefined;
  private readonly tracer: Tracer;
  private readonly indexPrefix: string;
  private readonly indexTtl: number;
  private readonly maxListScan: number;
  private readonly logger: Logger;
  private readonly eventsPrefix: string;
  private readonly eventPollMs: number;
  /** Watched runs: their listeners and the stream length last seen (`undefined`: not read yet). */
  private readonly watched = new Map<string, { readonly listeners: Set<RunEventListener>; length: number | undefined }>();
  private pollTimer: NodeJS.Timeout | undefined;
  /** True while a poll's round trip is in flight (it schedules the next one itself). */
  private polling = false;

  /**
   * @param options - client, key prefixes, retention of finished runs and the bounds of a call.
   * @throws RangeError when the index prefix cannot be told from the record prefix (one
   *   starts with the other, or none is given and `keyPrefix` does not end with `:`), or
   *   `maxListScan` is not a whole number ≥ 1.
   */
  constructor(options: RedisRunStoreOptions) {
    this.client = options.client;
    this.timeoutMs = options.operationTimeoutMs;
    this.keyPrefix = options.keyPrefix ?? 'svc:run-record:';
    this.finishedTtl = options.finishedRunTtlSeconds ?? DEFAULT_FINISHED_RUN_TTL_SECONDS;
    this.tracer = tracerOf(ADAPTER_QUEUE_TRACER_NAME);
    const indexPrefix = options.indexKeyPrefix ?? (this.keyPrefix.endsWith(':') ? `${this.keyPrefix.slice(0, -1)}-index:` : undefined);
    if (indexPrefix === undefined || indexPrefix.startsWith(this.keyPrefix) || this.keyPrefix.startsWith(indexPrefix)) {
      throw new RangeError('indexKeyPrefix must be given, and neither it nor keyPrefix may start with the other');
    }
    this.indexPrefix = indexPrefix;
    const eventsPrefix = options.eventsKeyPrefix ?? (this.keyPrefix.endsWith(':') ? `${this.keyPrefix.slice(0, -1)}-events:` : undefined);
    if (eventsPrefix === undefined || eventsPrefix.startsWith(this.keyPrefix) || this.keyPrefix.startsWith(eventsPrefix)) {
      throw new RangeError('eventsKeyPrefix must be given, and neither it nor keyPrefix may start with the other');
    }
    this.eventsPrefix = eventsPrefix;
    this.eventPollMs = options.eventPollMs ?? DEFAULT_EVENT_POLL_MS;
    if (!(this.eventPollMs > 0)) throw new RangeError('eventPollMs must be > 0');
    this.indexTtl = this.finishedTtl > 0 ? this.finishedTtl + INDEX_TTL_MARGIN_SECONDS : 0;
    this.maxListScan = options.maxListScan ?? DEFAULT_MAX_LIST_SCAN;
    this.logger = options.logger ?? silentLogger;
    if (!Number.isInteger(this.maxListScan) || this.maxListScan < 1) throw new RangeError('maxListScan must be a whole number ≥ 1');
  }

  /** The Redis key of a run's record. */
  keyOf(runId: string): string {
    return this.keyPrefix + runId;
  }

  /** The Redis key of a run's events stream. */
  eventsKeyOf(runId: string): string {
    return this.eventsPrefix + runId;
  }

  /** The Redis key of the run list index of `accountId`, or of its agent `agentId`. */
  indexKeyOf(accountId: string, agentId?: string): string {
    return agentId === undefined ? `${this.indexPrefix}a:${escapeKeyPart(accountId)}` : `${this.indexPrefix}g:${escapeKeyPart(accountId)}:${escapeKeyPart(agentId)}`;
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

  /** Stores `run`, replacing any earlier version (upsert), and records its event. @throws DependencyUnavailableError as {@link RedisRunStore.get}. */
  async save(run: Run): Promise<void> {
    const key = this.keyOf(run.runId);
    const events = this.eventsKeyOf(run.runId);
    const fields = hashArgs(run);
    const multi = this.client.multi().del(key).hset(key, ...fields).xadd(events, '*', ...fields);
    if (FINAL_RUN_STATUSES.has(run.status) && this.finishedTtl > 0) multi.expire(key, this.finishedTtl).expire(events, this.finishedTtl);
    else multi.persist(events);
    for (const index of [this.indexKeyOf(run.accountId), this.indexKeyOf(run.accountId, run.agentId)]) {
      multi.zadd(index, 0, runListKey(run));
      if (this.indexTtl > 0) multi.expire(index, this.indexTtl);
    }
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
    transaction.eval(CREATE_SOURCE, 4, ...this.createKeys(run), ...this.createArgs(run));
  }

  private createKeys(run: Run): string[] {
    return [this.keyOf(run.runId), this.indexKeyOf(run.accountId), this.indexKeyOf(run.accountId, run.agentId), this.eventsKeyOf(run.runId)];
  }

  private createArgs(run: Run): (string | number)[] {
    return [runListKey(run), this.indexTtl, this.keyPrefix, Math.floor(Math.random() * 2 ** 31), ...hashArgs(run)];
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
    const found = await this.guard('create', () => CREATE_SCRIPT.run(this.client, this.createKeys(run), this.createArgs(run)));
    return this.createdOrFound(run.runId, found);
  }

  /** See core `RunStore.transition` (a compare-and-set in one Lua script). @throws DependencyUnavailableError as {@link RedisRunStore.get}. */
  async transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome> {
    const ttl = FINAL_RUN_STATUSES.has(change.to) ? this.finishedTtl : 0;
    const reply = await this.guard('transition', () => TRANSITION_SCRIPT.run(this.client, [this.keyOf(runId), this.eventsKeyOf(runId)], [
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

  /** See core `RunStore.requestCancel` (one Lua script, with the event of a cancelled queued run). @throws DependencyUnavailableError as {@link RedisRunStore.get}. */
  async requestCancel(runId: string, at: Date): Promise<CancelOutcome> {
    const reply = await this.guard('request_cancel', () => CANCEL_SCRIPT.run(this.client, [this.keyOf(runId), this.eventsKeyOf(runId)], [at.toISOString(), this.finishedTtl]));
    if (!Array.isArray(reply) || typeof reply[0] !== 'string' || !Array.isArray(reply[1])) throw new TypeError('unexpected reply from the run cancel script');
    const run = runFromHash(runId, hashFromPairs(reply[1] as unknown[]));
    const kind = reply[0];
    if (run === undefined || kind === 'missing') return { kind: 'missing' };
    if (kind !== 'cancelled' && kind !== 'requested' && kind !== 'final') throw new TypeError('unexpected reply from the run cancel script');
    return { kind, run };
  }

  /**
   * See core `RunEventLog.events`: one `XRANGE` of the run's stream (a run has a handful
   * of events: one per status change), sliced after `afterId` when it is one of them.
   * @throws DependencyUnavailableError as {@link RedisRunStore.get}.
   * @throws Error when an entry is not a valid run record.
   */
  async events(runId: string, afterId?: string): Promise<readonly RunEvent[]> {
    const entries = await this.guard('events', () => this.client.xrange(this.eventsKeyOf(runId), '-', '+'));
    const events: RunEvent[] = [];
    for (const [id, pairs] of entries) {
      const run = runFromHash(runId, hashFromPairs(pairs));
      if (run !== undefined) events.push({ id, type: runEventTypeOf(run.status), at: run.updatedAt, run });
    }
    const at = afterId === undefined ? -1 : events.findIndex((e) => e.id === afterId);
    return events.slice(at + 1);
  }

  /**
   * See core `RunEventLog.watch`. One poller per store, not a connection per watcher:
   * while anything is watched, every `eventPollMs` one pipeline of `XLEN` per watched run
   * (bounded by `operationTimeoutMs`); a run whose stream grew pokes its listeners. When
   * Redis fails or does not answer, every listener is told the error and dropped (an
   * events stream then closes, and its client resumes with `Last-Event-ID`). The timer
   * stops when the last listener unwatches.
   */
  watch(runId: string, listener: RunEventListener): () => void {
    let entry = this.watched.get(runId);
    if (entry === undefined) this.watched.set(runId, (entry = { listeners: new Set(), length: undefined }));
    const watcher: RunEventListener = (error) => listener(error);
    entry.listeners.add(watcher);
    if (!this.polling && this.pollTimer === undefined) this.pollTimer = setTimeout(() => void this.poll(), this.eventPollMs);
    return () => this.unwatch(runId, watcher);
  }

  /** How many listeners are watching runs now (for leak tests). */
  get watcherCount(): number {
    let n = 0;
    for (const entry of this.watched.values()) n += entry.listeners.size;
    return n;
  }

  private unwatch(runId: string, watcher: RunEventListener): void {
    const entry = this.watched.get(runId);
    if (entry === undefined) return;
    entry.listeners.delete(watcher);
    if (entry.listeners.size === 0) this.watched.delete(runId);
    if (this.watched.size === 0 && this.pollTimer !== undefined) {
      clearTimeout(this.pollTimer);
      this.pollTimer = undefined;
    }
  }

  private async poll(): Promise<void> {
    this.pollTimer = undefined;
    this.polling = true;
    const runIds = [...this.watched.keys()];
    try {
      const lengths = await this.guard('watch_events', () => this.pipelined(runIds.map((runId) => ['xlen', this.eventsKeyOf(runId)])));
      runIds.forEach((runId, i) => {
        const entry = this.watched.get(runId);
        const length = Number(lengths[i]);
        if (entry === undefined || entry.length === length) return;
        // The first read pokes too: an event may have come between a watcher's own read and it.
        entry.length = length;
        for (const listener of [...entry.listeners]) listener();
      });
    } catch (error) {
      this.logger.warn({ component: 'run-store', error_type: errorTypeOf(error), watched_runs: runIds.length }, 'run events: watch lost, streams closed');
      for (const runId of runIds) {
        const entry = this.watched.get(runId);
        this.watched.delete(runId);
        for (const listener of entry?.listeners ?? []) listener(error);
      }
    }
    this.polling = false;
    if (this.watched.size > 0 && this.pollTimer === undefined) this.pollTimer = setTimeout(() => void this.poll(), this.eventPollMs);
  }

  /** See core `RunStore.reportProgress` (one Lua script: set only while `running`). @throws DependencyUnavailableError as {@link RedisRunStore.get}. */
  async reportProgress(runId: string, progress: RunProgress): Promise<boolean> {
    const reply = await this.guard('report_progress', () => PROGRESS_SCRIPT.run(this.client, [this.keyOf(runId)], [progressJson(progress)]));
    return reply === 1;
  }

  /**
   * See core `RunStore.list`. Reads the account's index (or the agent's) from the page
   * position with `ZRANGEBYLEX`, then the records (a pipeline of `HGETALL`; with a status
   * filter, first one of `HGET status`, so that skipped runs cost a few bytes), until
   * `limit` + 1 runs matched, the index ends, or `maxListScan` entries were examined —
   * then the page holds what was found (maybe nothing) and `next` is the last entry
   * examined. Entries whose record is gone (while it still is) or no longer matches the
   * index are dropped (one Lua script). A record that is not a valid run record (a corrupt
   * hash, another Redis type under the key) is skipped, neither listed nor counted as a
   * run, and reported to the logger; its entry and the record are left as they are, for
   * an operator to look at (`get` of that run still throws).
   * @throws DependencyUnavailableError as {@link RedisRunStore.get}, for the whole call.
   */
  async list(accountId: string, filter: RunListFilter, page: PageRequest): Promise<Page<Run>> {
    return this.guard('list', () => this.scanIndex(accountId, filter, page));
  }

  private async scanIndex(accountId: string, filter: RunListFilter, page: PageRequest): Promise<Page<Run>> {
    const index = this.indexKeyOf(accountId, filter.agentId);
    const wanted = page.limit + 1;
    const found: Run[] = [];
    /** Entries whose record is missing, and entries whose record no longer matches the index. */
    const gone: string[] = [];
    const stale: string[] = [];
    let position = page.after;
    let scanned = 0;
    let ended = false;
    while (found.length < wanted && scanned < this.maxListScan) {
      const need = wanted - found.length;
      const count = Math.min(this.maxListScan - scanned, filter.status === undefined ? need : Math.max(need, LIST_BATCH));
      const members = await this.client.zrangebylex(index, position === undefined ? '-' : `(${position}`, '+', 'LIMIT', 0, count);
      // Entries examined in this batch: with a status filter, up to the `need`-th match.
      let examined = members;
      let candidates = members;
      if (filter.status !== undefined && members.length > 0) {
        const statuses = await this.pipelined(members.map((m) => ['hget', this.keyOf(runIdOf(m)), 'status']), true);
        candidates = [];
        let i = 0;
        for (; i < members.length && candidates.length < need; i += 1) {
          const member = members[i] as string;
          if (statuses[i] === null) gone.push(member);
          else if (statuses[i] === WRONG_TYPE) this.reportUnreadable(member, 'wrong_type');
          else if (statuses[i] === filter.status) candidates.push(member);
        }
        examined = members.slice(0, i);
      }
      const hashes = candidates.length === 0 ? [] : await this.pipelined(candidates.map((m) => ['hgetall', this.keyOf(runIdOf(m))]), true);
      for (const [i, member] of candidates.entries()) {
        const run = this.readListed(member, hashes[i]);
        if (run === null) continue;
        if (run === undefined) {
          gone.push(member);
        } else if (run.accountId !== accountId || (filter.agentId !== undefined && run.agentId !== filter.agentId) || runListKey(run) !== member) {
          stale.push(member);
        } else if (filter.status === undefined || run.status === filter.status) {
          found.push(run);
        }
      }
      scanned += examined.length;
      position = examined[examined.length - 1] ?? position;
      if (members.length < count && examined.length === members.length) {
        ended = true;
        break;
      }
    }
    if (gone.length + stale.length > 0) await PRUNE_SCRIPT.run(this.client, [index], [this.keyPrefix, gone.length, ...gone, ...stale]);
    if (found.length > page.limit) {
      const items = found.slice(0, page.limit);
      return { items, next: runListKey(items[items.length - 1] as Run) };
    }
    return ended || position === undefined || position === page.after ? { items: found } : { items: found, next: position };
  }

  /**
   * Sends `commands` in one pipeline; their replies in order.
   * @param wrongTypeAllowed - a `WRONGTYPE` reply (a key of another type) is answered
   *   {@link WRONG_TYPE} instead of thrown.
   * @throws the first command's error.
   */
  private async pipelined(commands: (string | number)[][], wrongTypeAllowed = false): Promise<unknown[]> {
    const replies = await this.client.pipeline(commands).exec();
    if (replies === null) throw new Error('the pipeline was aborted');
    return replies.map(([error, reply]) => {
      if (error === null) return reply;
      if (wrongTypeAllowed && error.message.startsWith('WRONGTYPE')) return WRONG_TYPE;
      throw error;
    });
  }

  /**
   * The run an index entry's record holds (`HGETALL` reply): `undefined` when the record
   * is gone, `null` when it cannot be read (reported, then skipped by the list).
   */
  private readListed(member: string, hash: unknown): Run | undefined | null {
    if (hash === WRONG_TYPE) {
      this.reportUnreadable(member, 'wrong_type');
      return null;
    }
    try {
      return runFromHash(runIdOf(member), (hash ?? {}) as RunHash);
    } catch {
      this.reportUnreadable(member, 'invalid_record');
      return null;
    }
  }

  /** One error line per unreadable record a list skipped: `reason` `wrong_type` (not a hash) or `invalid_record` (a hash of no known layout). */
  private reportUnreadable(member: string, reason: 'wrong_type' | 'invalid_record'): void {
    // The run id only: the record's content may hold a customer's message or files.
    this.logger.error({ component: 'run-store', run_id: runIdOf(member), reason }, 'run list: skipped a run record that is not a valid run record');
  }

  /**
   * Deletes `runId`'s record if no worker has touched it yet (`queued`, no attempt); see
   * `BullMqRunQueue`. Not bounded: it is sent on the same connection right behind a
   * transaction that got no answer, so that a paused server, once resumed, runs it after
   * that transaction. A job left without its record is skipped by the worker.
   * @returns true when a record was deleted.
   */
  async withdraw(runId: string): Promise<boolean> {
    return (await this.client.eval(WITHDRAW_SOURCE, 2, this.keyOf(runId), this.eventsKeyOf(runId))) === 1;
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
