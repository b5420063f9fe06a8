import type { FileCatalog, FileListFilter, FileStatus, Logger, Page, PageRequest, StoredFile } from '@svc/core';
import { FILE_STATUSES, fileListKey, MAX_FILE_RUN_IDS, silentLogger, tracerOf, withSpan } from '@svc/core';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import type { Redis } from 'ioredis';
import { quitWithin } from './close-within.js';
import { guardRedis } from './dependency-guard.js';
import { LuaScript } from './lua-script.js';
import { createRedisClient, requestClientOptions, type RedisConnectionOptions } from './redis-client.js';
import { hashFromPairs } from './run-record.js';
import { ADAPTER_QUEUE_TRACER_NAME, REDIS_SPAN_ATTRIBUTES } from './tracing.js';

// Key layout (prefix `p`; see RedisFileCatalog):
//   p:file:<fileKey>                  the record, a hash (fields: fileArgs)
//   p:file-list:all:<accountId>       every file of the account  } sorted sets, score 0,
//   p:file-list:<status>:<accountId>  its files with that status } members core fileListKey
//   p:file-due                        pending and ready files: score expiresAt (ms), member the file key
// The account id ends its keys and the scope (`all` or a status: no `:` in either) comes
// before it, so no two accounts or scopes share a key and no escaping is needed. The
// record of an index member is the text after the member's first `|` (fileListKey puts
// only digits before it). The scripts below write the record and every index together,
// so an index holds exactly the files whose record says so.

/**
 * Creates the record unless the key exists, and indexes it.
 * KEYS: the record, the account's `all` index, the account's index of the file's status, the due set.
 * ARGV: the index member (core `fileListKey`), the due score ('' when the status is
 * neither pending nor ready), the file key, then the HSET field/value pairs.
 * Returns 1 when created, 0 when the key existed (nothing changed).
 */
const CREATE = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[4], ARGV[2], ARGV[3]) end
return 1
`);

/**
 * Compare-and-set of the whole record on its status, keeping `runIds` as stored.
 * KEYS: the record, the new `all` index, the new status's index, the due set.
 * ARGV: the expected status, the new index member, the new due score ('' when the new
 * status is neither pending nor ready), the file key, the index key prefix
 * (`p:file-list:`), then the HSET field/value pairs without `runIds`.
 * The old index entries are found from the stored record (account, status, member:
 * a replace may change any of them). Returns {applied (0|1), HGETALL after or as found}.
 */
const REPLACE = new LuaScript(`
local cur = redis.call('HMGET', KEYS[1], 'status', 'accountId', 'listKey', 'runIds')
if not cur[1] then return {0, {}} end
if cur[1] ~= ARGV[1] then return {0, redis.call('HGETALL', KEYS[1])} end
-- Checked before the first write: a script that fails midway keeps what it wrote.
if not (cur[2] and cur[3] and cur[4]) then return redis.error_reply('ERR not a valid file record') end
redis.call('ZREM', ARGV[5] .. 'all:' .. cur[2], cur[3])
redis.call('ZREM', ARGV[5] .. cur[1] .. ':' .. cur[2], cur[3])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('HSET', KEYS[1], 'runIds', cur[4])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
redis.call('ZADD', KEYS[3], 0, ARGV[2])
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4])
else
  redis.call('ZREM', KEYS[4], ARGV[4])
end
return {1, redis.call('HGETALL', KEYS[1])}
`);

/**
 * Records a run on a `ready` file: appends the run id to the JSON array `runIds`
 * (dropping the oldest beyond the most kept), and moves `expiresAt` (and the due score)
 * when the one given is later.
 * KEYS: the record, the due set. ARGV: the run id, expiresAt (ms), the most run ids
 * kept, the file key. Returns HGETALL after, or an empty array when the file is missing
 * or not ready (nothing changed).
 */
const ADD_RUN = new LuaScript(`
local cur = redis.call('HMGET', KEYS[1], 'status', 'runIds', 'expiresAt')
if cur[1] ~= 'ready' then return {} end
-- Read and checked before the first write: a script that fails midway keeps what it wrote.
local ids = cjson.decode(cur[2])
local expires = tonumber(cur[3])
if type(ids) ~= 'table' or not expires then return redis.error_reply('ERR not a valid file record') end
ids[#ids + 1] = ARGV[1]
local most = tonumber(ARGV[3])
while #ids > most do table.remove(ids, 1) end
redis.call('HSET', KEYS[1], 'runIds', cjson.encode(ids))
if tonumber(ARGV[2]) > expires then
  redis.call('HSET', KEYS[1], 'expiresAt', ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
end
return redis.call('HGETALL', KEYS[1])
`);

/**
 * Deletes the record and its index entries. KEYS: the record, the due set. ARGV: the
 * index key prefix (`p:file-list:`), the file key. Returns 1 when a record was deleted.
 */
const REMOVE = new LuaScript(`
local cur = redis.call('HMGET', KEYS[1], 'status', 'accountId', 'listKey')
redis.call('ZREM', KEYS[2], ARGV[2])
if not cur[1] then return 0 end
redis.call('ZREM', ARGV[1] .. 'all:' .. cur[2], cur[3])
redis.call('ZREM', ARGV[1] .. cur[1] .. ':' .. cur[2], cur[3])
return redis.call('DEL', KEYS[1])
`);

/**
 * One list page, read atomically: up to `count` members after the position, and the
 * record of each. KEYS: the index. ARGV: the ZRANGEBYLEX minimum ('-' or '(' and the
 * position), count, the record key prefix (`p:file:`). Returns {members, HGETALL each}.
 */
const LIST = new LuaScript(`
local members = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], '+', 'LIMIT', 0, tonumber(ARGV[2]))
local records = {}
for i, member in ipairs(members) do
  local bar = string.find(member, '|', 1, true)
  records[i] = redis.call('HGETALL', ARGV[3] .. string.sub(member, bar + 1))
end
return {members, records}
`);

/**
 * The soonest due files, read atomically. KEYS: the due set. ARGV: now (ms), limit, the
 * record key prefix. Returns HGETALL of each, soonest first.
 */
const DUE = new LuaScript(`
local keys = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local records = {}
for i, key in ipairs(keys) do records[i] = redis.call('HGETALL', ARGV[3] .. key) end
return records
`);

/** Layout version written in field `v`. */
const LAYOUT = '1';

/** The statuses whose files `due` answers (and the due set holds). */
const LIVE: ReadonlySet<FileStatus> = new Set(['pending', 'ready']);

/** Settings of {@link RedisFileCatalog}. */
export interface RedisFileCatalogSettings {
  /** Keys are `<prefix>:file:<fileKey>`, `<prefix>:file-list:…` and `<prefix>:file-due`; default `svc`. */
  readonly prefix?: string;
  /**
   * Bound in ms of each call: past it, or at once when Redis is disconnected, the call
   * rejects with the core's `DependencyUnavailableError` (the request answers 503).
   * Default {@link DEFAULT_FILE_CATALOG_TIMEOUT_MS}.
   */
  readonly operationTimeoutMs?: number;
  /** Where connection losses of a client of its own ({@link RedisFileCatalog.connect}) are logged (error code only). */
  readonly logger?: Logger;
}

/**
 * Default of {@link RedisFileCatalogSettings.operationTimeoutMs}: 1000 ms, half of
 * docs/CONTRACT.md's default `dependency_timeout_ms` (2000), because a file request also
 * charges the rate limiter, whose Redis call has its own share of that bound (the same
 * split as the run queue's `DEFAULT_OPERATION_TIMEOUT_MS`).
 */
export const DEFAULT_FILE_CATALOG_TIMEOUT_MS = 1000;

/**
 * The core {@link FileCatalog} in Redis, shared by every instance on it: one hash per
 * file (`<prefix>:file:<fileKey>`; dates as epoch milliseconds, so that a script compares
 * them as numbers; `runIds` a JSON array), per account a sorted set of its files and one
 * per status (all scores 0, members core `fileListKey`, so members sort as bytes: newest
 * first, read with `ZRANGEBYLEX` from the page position), and one sorted set of the
 * `pending` and `ready` files by `expiresAt` for `due`.
 *
 * Every call is one round trip: `get` an `HGETALL`; `create`, `replace`, `addRun`,
 * `remove`, `list` and `due` one Lua script each, which writes (or reads) the record
 * and its indexes together, atomically: the indexes never disagree with the records, so
 * a list page is exact (`limit` + 1 members read, no scan) and a status filter reads its
 * own index. Records are kept until `remove` (the core expires and removes them).
 * Scripts reach keys they compute (the old indexes of a replaced record, the records of
 * a page), so, like `RedisRunStore`, this is not made for Redis Cluster.
 *
 * Every call turns a lost, failing or silent Redis into the core's
 * `DependencyUnavailableError` within `operationTimeoutMs`; a key under the prefix that
 * holds no valid file record throws an `Error` naming the file key only (a bug: 500).
 * Source: docs/CONTRACT.md "Files"; core `ports/file-catalog.ts`.
 */
export class RedisFileCatalog implements FileCatalog {
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly tracer: Tracer;

  /**
   * @param client - an ioredis client with request options (`requestClientOptions`: no
   *   offline queue, a command timeout), so a lost Redis fails fast.
   * @param settings - key prefix and the bound of a call.
   * @param ownsClient - true: {@link RedisFileCatalog.close} quits it.
   */
  constructor(
    private readonly client: Redis,
    settings: RedisFileCatalogSettings = {},
    private readonly ownsClient = false,
  ) {
    this.prefix = settings.prefix ?? 'svc';
    this.timeoutMs = settings.operationTimeoutMs ?? DEFAULT_FILE_CATALOG_TIMEOUT_MS;
    this.tracer = tracerOf(ADAPTER_QUEUE_TRACER_NAME);
  }

  /**
   * A catalog on a client of its own (request options, bounded by `operationTimeoutMs`),
   * connected and answering PING.
   * @param redis - a `redis://` URL or ioredis options; never logged (it may hold a password).
   * @throws Error when Redis does not answer (the client is closed again); the error names no host.
   */
  static async connect(redis: string | RedisConnectionOptions, settings: RedisFileCatalogSettings = {}): Promise<RedisFileCatalog> {
    const timeoutMs = settings.operationTimeoutMs ?? DEFAULT_FILE_CATALOG_TIMEOUT_MS;
    const client = createRedisClient(redis, { ...requestClientOptions(timeoutMs), lazyConnect: true }, settings.logger ?? silentLogger, 'file-catalog');
    try {
      // With the offline queue off, the first command must wait for the connection.
      await client.connect();
      await client.ping();
    } catch (error) {
      client.disconnect();
      throw new Error('Redis for the file catalog does not answer', { cause: error });
    }
    return new RedisFileCatalog(client, settings, true);
  }

  /** The Redis key of a file's record. */
  keyOf(fileKey: string): string {
    return `${this.prefix}:file:${fileKey}`;
  }

  /** The Redis key of the list index of `accountId`'s files: all of them, or those with `status`. */
  indexKeyOf(accountId: string, status?: FileStatus): string {
    return `${this.indexPrefix}${status ?? 'all'}:${accountId}`;
  }

  /** The Redis key of the set of `pending` and `ready` files by `expiresAt`. */
  get dueKey(): string {
    return `${this.prefix}:file-due`;
  }

  private get indexPrefix(): string {
    return `${this.prefix}:file-list:`;
  }

  /**
   * See core `FileCatalog.create` (one Lua script: the record and its indexes).
   * @throws Error when a file with that key exists.
   * @throws DependencyUnavailableError when Redis is unreachable or does not answer in time.
   * @throws RangeError when a date of `file` is invalid.
   */
  async create(file: StoredFile): Promise<void> {
    const member = fileListKey(file);
    const args = [member, dueScore(file), file.fileKey, ...fileArgs(file), 'runIds', JSON.stringify(file.runIds)];
    const keys = [this.keyOf(file.fileKey), this.indexKeyOf(file.accountId), this.indexKeyOf(file.accountId, file.status), this.dueKey];
    const created = await this.guard('create', () => CREATE.run(this.client, keys, args));
    if (created !== 1) throw new Error(`a file with key ${file.fileKey} exists`);
  }

  /**
   * See core `FileCatalog.get`.
   * @throws DependencyUnavailableError as {@link RedisFileCatalog.create}.
   * @throws Error when the key holds no valid file record.
   */
  async get(fileKey: string): Promise<StoredFile | undefined> {
    const hash = await this.guard('get', () => this.client.hgetall(this.keyOf(fileKey)));
    return fileFromHash(fileKey, hash);
  }

  /**
   * See core `FileCatalog.replace` (one Lua script: a compare-and-set on the status that
   * moves the file's index entries with it).
   * @throws DependencyUnavailableError as {@link RedisFileCatalog.create}.
   * @throws Error when the key holds no valid file record (left as it was).
   * @throws RangeError when a date of `file` is invalid.
   */
  async replace(file: StoredFile, expected: FileStatus): Promise<{ readonly applied: boolean; readonly file: StoredFile | undefined }> {
    const keys = [this.keyOf(file.fileKey), this.indexKeyOf(file.accountId), this.indexKeyOf(file.accountId, file.status), this.dueKey];
    const args = [expected, fileListKey(file), dueScore(file), file.fileKey, this.indexPrefix, ...fileArgs(file)];
    const reply = await this.guard('replace', () => REPLACE.run(this.client, keys, args));
    if (!Array.isArray(reply) || !Array.isArray(reply[1])) throw new TypeError('unexpected reply from the file replace script');
    return { applied: reply[0] === 1, file: fileFromHash(file.fileKey, hashFromPairs(reply[1] as unknown[])) };
  }

  /** See core `FileCatalog.addRun` (one Lua script). @throws as {@link RedisFileCatalog.get}; RangeError when `expiresAt` is invalid. */
  async addRun(fileKey: string, runId: string, expiresAt: Date): Promise<StoredFile | undefined> {
    const args = [runId, msOf(expiresAt, 'expiresAt'), MAX_FILE_RUN_IDS, fileKey];
    const reply = await this.guard('add_run', () => ADD_RUN.run(this.client, [this.keyOf(fileKey), this.dueKey], args));
    if (!Array.isArray(reply)) throw new TypeError('unexpected reply from the file add-run script');
    return fileFromHash(fileKey, hashFromPairs(reply as unknown[]));
  }

  /**
   * See core `FileCatalog.list`: one Lua script reads `limit` + 1 members of the
   * account's index (of the status, with a filter) after the position, and their
   * records, atomically; `next` is the member of the page's last file when more follow.
   * Any string is a position (`ZRANGEBYLEX` compares bytes).
   * @throws as {@link RedisFileCatalog.get}.
   */
  async list(accountId: string, filter: FileListFilter, page: PageRequest): Promise<Page<StoredFile>> {
    if (!(page.limit >= 1)) return { items: [] };
    const limit = Math.floor(page.limit);
    const min = page.after === undefined ? '-' : `(${page.after}`;
    const reply = await this.guard('list', () => LIST.run(this.client, [this.indexKeyOf(accountId, filter.status)], [min, limit + 1, `${this.prefix}:file:`]));
    if (!Array.isArray(reply) || !Array.isArray(reply[0]) || !Array.isArray(reply[1])) throw new TypeError('unexpected reply from the file list script');
    const members = (reply[0] as unknown[]).map(String);
    const records = reply[1] as unknown[][];
    const items: StoredFile[] = [];
    for (const [i, member] of members.slice(0, limit).entries()) {
      const file = fileFromHash(member.slice(member.indexOf('|') + 1), hashFromPairs(records[i] ?? []));
      // Defence in depth: the scripts keep the index and the records together.
      if (file !== undefined && file.accountId === accountId && (filter.status === undefined || file.status === filter.status)) items.push(file);
    }
    return members.length > limit ? { items, next: members[limit - 1] as string } : { items };
  }

  /** See core `FileCatalog.remove` (one Lua script: the record and its index entries). @throws DependencyUnavailableError as {@link RedisFileCatalog.create}. */
  async remove(fileKey: string): Promise<void> {
    await this.guard('remove', () => REMOVE.run(this.client, [this.keyOf(fileKey), this.dueKey], [this.indexPrefix, fileKey]));
  }

  /**
   * See core `FileCatalog.due`: one Lua script reads the due set up to `now` (at most
   * `limit`, soonest first; files of the same `expiresAt` by key) and the records.
   * @throws as {@link RedisFileCatalog.get}; RangeError when `now` is invalid.
   */
  async due(now: Date, limit: number): Promise<readonly StoredFile[]> {
    if (!(limit >= 1)) return [];
    const nowMs = msOf(now, 'now');
    const reply = await this.guard('due', () => DUE.run(this.client, [this.dueKey], [nowMs, Math.floor(limit), `${this.prefix}:file:`]));
    if (!Array.isArray(reply)) throw new TypeError('unexpected reply from the file due script');
    const files: StoredFile[] = [];
    for (const pairs of reply as unknown[][]) {
      const hash = hashFromPairs(pairs);
      const file = fileFromHash(hash.fileKey ?? '(unknown)', hash);
      if (file !== undefined && LIVE.has(file.status) && file.expiresAt.getTime() <= nowMs) files.push(file);
    }
    return files;
  }

  /** Whether Redis answers a PING within the bound. Never rejects. */
  async ping(): Promise<boolean> {
    return this.guard('ping', () => this.client.ping()).then(
      () => true,
      () => false,
    );
  }

  /** Quits the client when this catalog made it ({@link RedisFileCatalog.connect}), within `QUIT_TIMEOUT_MS`; else nothing. */
  async close(): Promise<void> {
    if (this.ownsClient) await quitWithin(this.client);
  }

  /** One bounded Redis operation (see `guardRedis`), in a client span `redis file_catalog.<name>`. */
  private guard<T>(name: string, operation: () => Promise<T>): Promise<T> {
    return withSpan(this.tracer, `redis file_catalog.${name}`, REDIS_SPAN_ATTRIBUTES, () => guardRedis('redis', this.timeoutMs, operation), SpanKind.CLIENT);
  }
}

/** Epoch milliseconds of `date`. @throws RangeError when it is an invalid Date. */
function msOf(date: Date, field: string): number {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`${field} is not a valid date`);
  return ms;
}

/** The score of `file` in the due set (its `expiresAt` in ms), or '' when its status keeps it out. */
function dueScore(file: StoredFile): number | '' {
  return LIVE.has(file.status) ? msOf(file.expiresAt, 'expiresAt') : '';
}

/**
 * The hash fields of `file` but `runIds` (which only `create` and `addRun` write), as
 * `HSET` arguments: field, value, field, value, ... Dates are epoch ms; `listKey` is
 * core `fileListKey`, kept so that `replace` and `remove` find the index entries.
 */
function fileArgs(file: StoredFile): (string | number)[] {
  const args: (string | number)[] = [
    'v', LAYOUT,
    'fileKey', file.fileKey,
    'accountId', file.accountId,
    'fileName', file.fileName,
    'contentType', file.contentType,
    'sizeBytes', file.sizeBytes,
    'status', file.status,
    'createdAt', msOf(file.createdAt, 'createdAt'),
    'expiresAt', msOf(file.expiresAt, 'expiresAt'),
    'listKey', fileListKey(file),
  ];
  if (file.sha256 !== undefined) args.push('sha256', file.sha256);
  if (file.reason !== undefined) args.push('reason', file.reason);
  if (file.completedAt !== undefined) args.push('completedAt', msOf(file.completedAt, 'completedAt'));
  return args;
}

/**
 * The file held in a hash; `undefined` for an empty hash (no such key).
 * @throws Error when the hash is not a file record of a known layout (a bug, or a
 *   foreign key under the prefix); the message names the file key only.
 */
function fileFromHash(fileKey: string, hash: Record<string, string>): StoredFile | undefined {
  if (Object.keys(hash).length === 0) return undefined;
  const corrupt = (): Error => new Error(`file record ${fileKey} is not a valid layout-${LAYOUT} record`);
  const { v, accountId, fileName, contentType, status, sha256, reason } = hash;
  if (v !== LAYOUT || hash.fileKey === undefined || accountId === undefined || fileName === undefined || contentType === undefined) throw corrupt();
  if (status === undefined || !(FILE_STATUSES as readonly string[]).includes(status)) throw corrupt();
  const sizeBytes = Number(hash.sizeBytes);
  const createdAt = Number(hash.createdAt);
  const expiresAt = Number(hash.expiresAt);
  const completedAt = hash.completedAt === undefined ? undefined : Number(hash.completedAt);
  if (![sizeBytes, createdAt, expiresAt, completedAt ?? 0].every(Number.isFinite)) throw corrupt();
  let runIds: unknown;
  try {
    runIds = JSON.parse(hash.runIds ?? '');
  } catch {
    throw corrupt();
  }
  if (!Array.isArray(runIds) || !runIds.every((id) => typeof id === 'string')) throw corrupt();
  return {
    fileKey: hash.fileKey,
    accountId,
    fileName,
    contentType,
    sizeBytes,
    ...(sha256 !== undefined ? { sha256 } : {}),
    status: status as FileStatus,
    ...(reason !== undefined ? { reason } : {}),
    createdAt: new Date(createdAt),
    expiresAt: new Date(expiresAt),
    ...(completedAt !== undefined ? { completedAt: new Date(completedAt) } : {}),
    runIds: runIds as string[],
  };
}
