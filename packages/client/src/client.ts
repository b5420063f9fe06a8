import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import createClient, { type Client } from 'openapi-fetch';
import pRetry, { AbortError } from 'p-retry';
import { apiErrorOf, SvcApiError, SvcFileRejectedError, SvcNetworkError } from './errors.js';
import type { components, operations, paths } from './generated/api.js';
import { bytesOfPath, contentTypeOf, requestBody, spooledBytes, streamedBytes, type UploadBytes, type UploadSource } from './upload.js';

export { contentTypeOf, FALLBACK_CONTENT_TYPE, type UploadSource } from './upload.js';

/** `GET /api/v1`: the API index (spec "API index object"). */
export type ApiIndex = components['schemas']['ApiIndex'];
/** A run as `GET /api/v1/runs/{run_id}` answers it (docs/CONTRACT.md "Runs"). */
export type Run = components['schemas']['Run'];
/** A run's `status`. */
export type RunStatus = Run['status'];
/** The body of `POST /api/v1/agents/{agent_id}/run`: files (Option 1) or a message only (Option 2). */
export type StartRunRequest = components['schemas']['StartRunRequest'];
/** An uploaded file reference of a run request. */
export type FileReference = components['schemas']['FileReference'];
/** `data` of the run-start answer (202). */
export type RunStartResult = components['schemas']['RunStartResult'];
/** `GET /api/v1/runs`: one page, newest first, and the cursor of the next (`null` on the last). */
export type RunList = components['schemas']['RunList'];
/** Query of `GET /api/v1/runs` (`agent_id`, `status`, `limit` 1..100, `cursor`). */
export type ListRunsQuery = NonNullable<operations['listRuns']['parameters']['query']>;
/** An agent of the caller's account. */
export type Agent = components['schemas']['Agent'];
/** `GET /api/v1/agents`: one page and the cursor of the next. */
export type AgentList = components['schemas']['AgentList'];
/** Query of `GET /api/v1/agents` (`limit`, `cursor`). */
export type ListAgentsQuery = NonNullable<operations['listAgents']['parameters']['query']>;
/** The body of a row insert. */
export type InsertRecordRequest = components['schemas']['InsertRecordRequest'];
/** The body of a row update. */
export type UpdateRecordRequest = components['schemas']['UpdateRecordRequest'];
/** `data` of a row write: `{rows_affected}`. */
export type RowWriteResult = components['schemas']['RowWriteResult'];
/**
 * A file (docs/CONTRACT.md "Files"): `file_key`, `file_name`, `content_type`, `size_bytes`
 * (bytes), `sha256`, `status`, `reason`, `created_at`, `expires_at`; the answer to
 * `POST /api/v1/files` adds `upload_url`, `upload_method` and `upload_headers`.
 */
export type File = components['schemas']['File'];
/** A file's `status`: `pending`, `ready`, `rejected` or `expired`. */
export type FileStatus = File['status'];
/** `GET /api/v1/files`: one page, newest first, and the cursor of the next (`null` on the last). */
export type FileList = components['schemas']['FileList'];
/** The body of `POST /api/v1/files`: `{file_name, content_type, size_bytes, sha256?}`. */
export type PrepareFileRequest = components['schemas']['PrepareFileRequest'];
/** Query of `GET /api/v1/files` (`status`, `limit` 1..100, `cursor`). */
export type ListFilesQuery = NonNullable<operations['listFiles']['parameters']['query']>;

/**
 * Whether a run status is final (no later change). Typed over every status of the generated
 * types, so a status the API adds does not compile until it is placed here.
 * Source: docs/CONTRACT.md "Runs" (status values) and "Runs lifecycle" (`cancelled` is final).
 */
export const FINAL_RUN_STATUS = {
  queued: false,
  running: false,
  succeeded: true,
  failed: true,
  cancelled: true,
} as const satisfies Record<RunStatus, boolean>;

/** Whether `status` is final: `succeeded`, `failed` or `cancelled`. */
export function isFinalRunStatus(status: RunStatus): boolean {
  return FINAL_RUN_STATUS[status];
}

/**
 * Per attempt, the longest wait for a whole answer: 35 s. The server's longest deliberate
 * wait is a row write on a customer database, which it answers 504 `connection_timeout` at
 * `sqlserver.request_timeout_ms` (default 30 s, docs/CONTRACT.md "Dependencies and faults");
 * 5 s more lets that answer arrive instead of cutting it off. Everything else answers within
 * `dependency_timeout_ms` (2 s) or sooner.
 */
export const DEFAULT_TIMEOUT_MS = 35_000;
/** Retries after the first attempt of a request refused with 429 or 503, or whose connection was refused. */
export const DEFAULT_MAX_RETRIES = 3;
/**
 * The longest one wait before a retry: 60 s, the default rate-limit window (per credential
 * and per agent, docs/CONTRACT.md "Rate limits"), so a default client rides out one window.
 * A `Retry-After` longer than this is not shortened (the retry would be refused again): the
 * error is thrown at once, with its `retryAfterSeconds`.
 */
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
/** The first wait when the answer gave no `Retry-After` (or there was no answer): doubled at each retry. */
export const DEFAULT_BACKOFF_MS = 500;
/**
 * The upload's PUT (to `upload_url`) fails after 60 s without progress: no chunk of the
 * body taken by the connection, or, once all was sent, no answer. An idle timeout rather
 * than a total one, because an upload's length has no useful bound (100 MiB, the default
 * `files.max_bytes`, takes about 14 minutes at 1 Mbit/s) while a working link, however
 * slow, keeps taking bytes: 60 s of nothing is a dead link or a stuck server, past the
 * 31 s that five TCP retransmissions take from the initial 1 s timeout (RFC 6298, doubling
 * each time). The server answers as soon
 * as the last byte is stored. Bound the whole upload with the call's `signal` if you need
 * to. The other requests of an upload (prepare, complete) keep {@link DEFAULT_TIMEOUT_MS}.
 */
export const DEFAULT_UPLOAD_IDLE_TIMEOUT_MS = 60_000;
/** How often {@link SvcClient.waitForRun} asks for the run: the demo processor takes ~500 ms; 1 request/s is 10% of the default 600/min. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;

/** What {@link SvcClientOptions.onRetry} is told before each wait. */
export interface RetryEvent {
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  /** Milliseconds it will wait before the next attempt. */
  readonly delayMs: number;
  /** Why: a 429/503 {@link SvcApiError}, or a `connection_refused` {@link SvcNetworkError}. */
  readonly error: SvcApiError | SvcNetworkError;
}

/** Options of {@link SvcClient}. */
export interface SvcClientOptions {
  /**
   * `{base_url}` of the API, e.g. `http://127.0.0.1:8080` (the index's `base_url`); paths
   * (`/api/v1/...`) are added to it. A trailing slash is removed.
   */
  readonly baseUrl: string;
  /** An API key (`svc-…`), sent as `X-API-Key` (spec "Authentication"). */
  readonly apiKey?: string | undefined;
  /**
   * An OAuth access token (`svcpt_…`) or an API key, sent as `Authorization: Bearer`. Access
   * tokens are accepted by the run operations only (docs/CONTRACT.md "Authentication").
   */
  readonly accessToken?: string | undefined;
  /** Per attempt, ms until the whole answer must have arrived; default {@link DEFAULT_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** Per attempt of an upload's PUT, ms without progress before it is given up; default {@link DEFAULT_UPLOAD_IDLE_TIMEOUT_MS}. */
  readonly uploadIdleTimeoutMs?: number;
  /** Retries after the first attempt; default {@link DEFAULT_MAX_RETRIES}; 0 turns retries off. */
  readonly maxRetries?: number;
  /** The longest one wait before a retry, in ms; default {@link DEFAULT_MAX_RETRY_DELAY_MS}. */
  readonly maxRetryDelayMs?: number;
  /** The first wait when no `Retry-After` says how long, in ms (doubled each time); default {@link DEFAULT_BACKOFF_MS}. */
  readonly backoffMs?: number;
  /** Called before each wait for a retry (to tell a person why nothing happens). */
  readonly onRetry?: (event: RetryEvent) => void;
  /** The `fetch` to send with; default `globalThis.fetch`. */
  readonly fetch?: (request: Request) => Promise<Response>;
}

/** Per call: cancels the call, its retries and its waits (rejects with `signal.reason`). */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
}

/**
 * Per write (run start, row insert, row update, file prepare): {@link CallOptions} and the
 * `Idempotency-Key` that makes a retry safe (docs/CONTRACT.md "Runs lifecycle").
 */
export interface WriteOptions extends CallOptions {
  /**
   * The `Idempotency-Key` sent with every attempt of this call: 1..255 printable ASCII
   * characters, scoped to the account, kept 24 h by the server. Default: a new random UUID
   * per call, so that the call's own retries (after a timeout, a reset, or a 409
   * `idempotency_key_in_use`) replay the first answer instead of doing the work twice. Pass
   * your own to make a retry of a whole call (another process, after a crash) safe too;
   * `false`: send none, and then never retry after a timeout or a reset.
   */
  readonly idempotencyKey?: string | false;
}

/** Per row write: {@link WriteOptions} and the egress route. */
export interface RecordWriteOptions extends WriteOptions {
  /**
   * Send `X-Svc-Egress: true`: the database traffic leaves from the stable egress address
   * the customer's firewall allowlists (spec "POST /api/v1/connections/{connection_id}/records").
   */
  readonly egress?: boolean;
}

/**
 * What {@link SvcClient.uploadFile} declares about the file. For a path, the name defaults
 * to the path's last segment and the size and SHA-256 are read from the file; for a stream,
 * `fileName` is required.
 */
export interface UploadFileDetails {
  /** `file_name`: 1..255 characters without a path separator or control character. */
  readonly fileName?: string;
  /** `content_type`; default by the extension of the file name ({@link contentTypeOf}), else `application/octet-stream`. */
  readonly contentType?: string;
  /**
   * A stream's exact size in bytes: then it is sent as it comes, once (a failed PUT is not
   * retried). Without it the stream is first spooled to a temporary file (in
   * `os.tmpdir()`, removed at the end) to count its size and SHA-256. Ignored for a path.
   */
  readonly sizeBytes?: number;
  /** SHA-256 of the bytes (64 lowercase hex digits), declared so the server rejects other bytes; for a path, saves the digest pass. */
  readonly sha256?: string;
}

/** Options of {@link SvcClient.uploadFile}: the `Idempotency-Key` ({@link WriteOptions}) is that of the prepare request. */
export type UploadFileOptions = WriteOptions;

/** Options of {@link SvcClient.waitForRun}. */
export interface WaitForRunOptions extends CallOptions {
  /** Milliseconds between two reads of the run; default {@link DEFAULT_POLL_INTERVAL_MS}. */
  readonly pollIntervalMs?: number;
  /** Called with the run at the first read and whenever its status or progress changed. */
  readonly onStatus?: (run: Run) => void;
}

/** What an openapi-fetch call resolves to (either `data` or `error`). */
interface Outcome<D> {
  readonly data?: D;
  readonly error?: unknown;
  readonly response: Response;
}

/**
 * The typed client of the public API (`/api/v1`), on openapi-fetch with types generated
 * from the served OpenAPI document (`./generated/api.ts`).
 *
 * Every method:
 * - sends the credential given ({@link SvcClientOptions.apiKey} or `accessToken`);
 * - resolves with the answer's `data` (the index: the whole object);
 * - throws {@link SvcApiError} for an error answer (problem details), {@link SvcNetworkError}
 *   when no whole answer arrived, and `signal.reason` when the caller's signal aborted it;
 * - gives up one attempt after `timeoutMs`, and retries (up to `maxRetries`) only what the
 *   server refused before doing any work: 429 (docs/CONTRACT.md "Rate limits": a refused
 *   request is not charged) and 503 (docs/CONTRACT.md "Dependencies and faults": a 503 never
 *   hides a half-done write or a run), waiting `Retry-After` seconds; and a refused
 *   connection (`ECONNREFUSED`: nothing reached a server). The writes (run start, row
 *   insert and update, file prepare) send an `Idempotency-Key` ({@link WriteOptions.idempotencyKey}, a new
 *   UUID per call by default), so they are also retried after a timeout or a reset and on
 *   409 `idempotency_key_in_use` (after `Retry-After`): the server replays the first answer
 *   instead of starting a second run or writing a second row. Without a key (`false`), a
 *   timeout or a reset is never retried. A file's complete is retried like them (a repeat
 *   answers the file as it is); a delete is not.
 * - {@link SvcClient.uploadFile}'s PUT is the exception to `timeoutMs`: it has an idle
 *   timeout ({@link DEFAULT_UPLOAD_IDLE_TIMEOUT_MS}).
 *
 * {@link SvcClient.raw} is the underlying openapi-fetch client, typed over every operation
 * of the document, for the operations this class has no method for (it has no retries and
 * no timeout of its own).
 */
export class SvcClient {
  /** The openapi-fetch client: `raw.GET('/api/v1/connections', {...})`; sends the credential. */
  readonly raw: Client<paths>;
  /** `{base_url}`, without a trailing slash. */
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly uploadIdleTimeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly backoffMs: number;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;
  private readonly fetchDocument: (request: Request) => Promise<Response>;

  /** @throws TypeError when both `apiKey` and `accessToken` are given (the API would answer 401 `invalid_credential`). */
  constructor(options: SvcClientOptions) {
    if (options.apiKey !== undefined && options.accessToken !== undefined) {
      throw new TypeError('give apiKey or accessToken, not both: two credentials in one request answer 401 invalid_credential');
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/u, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.uploadIdleTimeoutMs = options.uploadIdleTimeoutMs ?? DEFAULT_UPLOAD_IDLE_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
    this.backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.onRetry = options.onRetry;
    const headers: Record<string, string> =
      options.apiKey !== undefined ? { 'X-API-Key': options.apiKey } : options.accessToken !== undefined ? { Authorization: `Bearer ${options.accessToken}` } : {};
    const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.fetchDocument = fetchImpl;
    this.raw = createClient<paths>({ baseUrl: this.baseUrl, headers, fetch: fetchImpl });
  }

  /** `GET /api/v1`: the API index (no credential needed; sent anyway). */
  async index(options: CallOptions = {}): Promise<ApiIndex> {
    return this.send('GET /api/v1', (signal) => this.raw.GET('/api/v1', { signal }), options.signal);
  }

  /** `GET /openapi.yaml`: the OpenAPI 3.1 document as served, YAML text (docs/CONTRACT.md "Addresses"). */
  async openApiDocument(options: CallOptions = {}): Promise<string> {
    return this.send(
      'GET /openapi.yaml',
      async (signal) => {
        const response = await this.fetchDocument(new Request(`${this.baseUrl}/openapi.yaml`, { signal }));
        const text = await response.text();
        return response.ok ? { data: text, response } : { error: parseMaybeJson(text), response };
      },
      options.signal,
    );
  }

  /**
   * `POST /api/v1/agents/{agent_id}/run`: starts a run; resolves with `data` of the 202
   * (`status` is `queued`). Sends an `Idempotency-Key` ({@link WriteOptions.idempotencyKey}),
   * so a retry after a timeout or a reset gets the same run, never a second one.
   */
  async startRun(agentId: string, body: StartRunRequest, options: WriteOptions = {}): Promise<RunStartResult> {
    const header = idempotencyHeader(options);
    const answer = await this.send(
      `POST /api/v1/agents/${encodeURIComponent(agentId)}/run`,
      (signal) => this.raw.POST('/api/v1/agents/{agent_id}/run', { params: { path: { agent_id: agentId }, header }, body, signal }),
      options.signal,
      { repeatable: header['Idempotency-Key'] !== undefined },
    );
    return answer.data;
  }

  /** `GET /api/v1/runs/{run_id}`: the run as of now. */
  async getRun(runId: string, options: CallOptions = {}): Promise<Run> {
    const answer = await this.send(`GET /api/v1/runs/${encodeURIComponent(runId)}`, (signal) => this.raw.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: runId } }, signal }), options.signal);
    return answer.data;
  }

  /** `GET /api/v1/runs`: one page of the caller's runs, newest first; pass `next_cursor` as `cursor` for the next. */
  async listRuns(query: ListRunsQuery = {}, options: CallOptions = {}): Promise<RunList> {
    return this.send('GET /api/v1/runs', (signal) => this.raw.GET('/api/v1/runs', { params: { query }, signal }), options.signal);
  }

  /** `GET /api/v1/agents`: one page of the caller's agents. */
  async listAgents(query: ListAgentsQuery = {}, options: CallOptions = {}): Promise<AgentList> {
    return this.send('GET /api/v1/agents', (signal) => this.raw.GET('/api/v1/agents', { params: { query }, signal }), options.signal);
  }

  /** `GET /api/v1/agents/{agent_id}`: one agent of the caller's account. */
  async getAgent(agentId: string, options: CallOptions = {}): Promise<Agent> {
    const answer = await this.send(`GET /api/v1/agents/${encodeURIComponent(agentId)}`, (signal) => this.raw.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } }, signal }), options.signal);
    return answer.data;
  }

  /**
   * `POST /api/v1/connections/{connection_id}/records`: inserts one row (201). Sends an
   * `Idempotency-Key` ({@link WriteOptions.idempotencyKey}), so a retry after a timeout or a
   * reset never inserts the row twice.
   */
  async insertRecord(connectionId: string, body: InsertRecordRequest, options: RecordWriteOptions = {}): Promise<RowWriteResult> {
    const header = { ...egressHeader(options), ...idempotencyHeader(options) };
    const answer = await this.send(
      `POST /api/v1/connections/${encodeURIComponent(connectionId)}/records`,
      (signal) => this.raw.POST('/api/v1/connections/{connection_id}/records', { params: { path: { connection_id: connectionId }, header }, body, signal }),
      options.signal,
      { repeatable: header['Idempotency-Key'] !== undefined },
    );
    return answer.data;
  }

  /**
   * `PATCH /api/v1/connections/{connection_id}/records`: updates the one row whose
   * `key_column` is `key_value`; `rows_affected` 0 when none is (409 `ambiguous_key` when
   * several are, and nothing changes). Sends an `Idempotency-Key` like {@link SvcClient.insertRecord}.
   */
  async updateRecord(connectionId: string, body: UpdateRecordRequest, options: RecordWriteOptions = {}): Promise<RowWriteResult> {
    const header = { ...egressHeader(options), ...idempotencyHeader(options) };
    const answer = await this.send(
      `PATCH /api/v1/connections/${encodeURIComponent(connectionId)}/records`,
      (signal) => this.raw.PATCH('/api/v1/connections/{connection_id}/records', { params: { path: { connection_id: connectionId }, header }, body, signal }),
      options.signal,
      { repeatable: header['Idempotency-Key'] !== undefined },
    );
    return answer.data;
  }

  /**
   * `POST /api/v1/files`: declares a file (name, media type, exact size in bytes, optionally
   * its SHA-256) and resolves with it `pending`, with `upload_url`, `upload_method` (`PUT`),
   * `upload_headers` and `expires_at` (docs/CONTRACT.md "Files"). Sends an
   * `Idempotency-Key` ({@link WriteOptions.idempotencyKey}), so a retry after a timeout or a
   * reset gets the same file, never a second one. {@link SvcClient.uploadFile} does the
   * whole upload.
   *
   * @throws {@link SvcApiError} 400 `validation_failed` naming `/size_bytes` (above
   *   `files.max_bytes`, 100 MiB by default) or `/file_name`, 401/403, 429, 503.
   */
  async prepareFile(body: PrepareFileRequest, options: WriteOptions = {}): Promise<File> {
    const header = idempotencyHeader(options);
    const answer = await this.send('POST /api/v1/files', (signal) => this.raw.POST('/api/v1/files', { params: { header }, body, signal }), options.signal, {
      repeatable: header['Idempotency-Key'] !== undefined,
    });
    return answer.data;
  }

  /**
   * `POST /api/v1/files/{file_key}/complete`: the server checks the uploaded bytes (size,
   * declared SHA-256, content against `content_type`) and answers the file `ready` (its
   * `sha256` the digest of the bytes) or `rejected` with a `reason`; this resolves with
   * either (only {@link SvcClient.uploadFile} turns `rejected` into an error). Retried after
   * a timeout or a reset too: a repeated complete answers the file as it is.
   *
   * @throws {@link SvcApiError} 404, 409 `file_not_uploaded` (nothing PUT yet) or
   *   `file_not_pending` (expired), 401/403, 429, 503.
   */
  async completeFile(fileKey: string, options: CallOptions = {}): Promise<File> {
    const answer = await this.send(
      `POST /api/v1/files/${encodeURIComponent(fileKey)}/complete`,
      (signal) => this.raw.POST('/api/v1/files/{file_key}/complete', { params: { path: { file_key: fileKey } }, signal }),
      options.signal,
      { repeatable: true },
    );
    return answer.data;
  }

  /** `GET /api/v1/files/{file_key}`: the file's record as of now (never its bytes). @throws {@link SvcApiError} 404 for an unknown file or another account's. */
  async getFile(fileKey: string, options: CallOptions = {}): Promise<File> {
    const answer = await this.send(`GET /api/v1/files/${encodeURIComponent(fileKey)}`, (signal) => this.raw.GET('/api/v1/files/{file_key}', { params: { path: { file_key: fileKey } }, signal }), options.signal);
    return answer.data;
  }

  /** `GET /api/v1/files`: one page of the caller's files, newest first; pass `next_cursor` as `cursor` for the next. */
  async listFiles(query: ListFilesQuery = {}, options: CallOptions = {}): Promise<FileList> {
    return this.send('GET /api/v1/files', (signal) => this.raw.GET('/api/v1/files', { params: { query }, signal }), options.signal);
  }

  /**
   * `DELETE /api/v1/files/{file_key}` (204): deletes the file's record and bytes. Not
   * retried after a timeout or a reset (a repeat after a delete that happened answers 404).
   *
   * @throws {@link SvcApiError} 404, or 409 `file_in_use` while a queued or running run uses it.
   */
  async deleteFile(fileKey: string, options: CallOptions = {}): Promise<void> {
    await this.send(
      `DELETE /api/v1/files/${encodeURIComponent(fileKey)}`,
      async (signal) => {
        const outcome = await this.raw.DELETE('/api/v1/files/{file_key}', { params: { path: { file_key: fileKey } }, signal });
        // 204 has no body: openapi-fetch gives `data: undefined`, which send() would take for an error.
        return outcome.response.ok ? { data: true as const, response: outcome.response } : outcome;
      },
      options.signal,
    );
  }

  /**
   * Uploads a file whole: prepare ({@link SvcClient.prepareFile}), PUT the bytes to
   * `upload_url`, complete ({@link SvcClient.completeFile}); resolves with the `ready` file,
   * whose `file_key`, `file_name` and `content_type` a run start names in `files`.
   *
   * The bytes are streamed, never held whole in memory:
   * - a path: `stat` gives the size; one streaming pass computes the SHA-256 (declared, so
   *   the server rejects other bytes) unless `details.sha256` gives it; a second pass is the
   *   PUT, read again from the start for each retry;
   * - a stream with `details.sizeBytes`: sent as it comes, in one pass (not retried);
   * - a stream without it: spooled to a temporary file first (`os.tmpdir()`, mode 0600 in a
   *   0700 directory, removed at the end; the disk needs room for one copy), counting its
   *   size and SHA-256.
   *
   * The PUT goes to the absolute `upload_url` with exactly `upload_headers` and
   * `Content-Length`, and no credential (the URL carries its own signature). It is given up
   * after {@link SvcClientOptions.uploadIdleTimeoutMs} without progress
   * ({@link DEFAULT_UPLOAD_IDLE_TIMEOUT_MS}), never for its total length; a repeatable
   * source is retried like a keyed write (the server keeps nothing of a broken upload, and a
   * second PUT replaces the first). A failed upload leaves a `pending` file that expires at
   * its `expires_at`.
   *
   * @throws {@link SvcFileRejectedError} when `complete` answers the file `rejected` (the
   *   reason in the message and in `reason`); {@link SvcApiError} / {@link SvcNetworkError}
   *   from any of the three requests (the PUT's errors name its URL without the signature);
   *   the file system's error for an unreadable path; TypeError for a stream without
   *   `fileName`, or a path that is not a regular file.
   */
  async uploadFile(path: string, details?: Omit<UploadFileDetails, 'sizeBytes'>, options?: UploadFileOptions): Promise<File>;
  async uploadFile(stream: Readable | AsyncIterable<Uint8Array | string>, details: UploadFileDetails & { readonly fileName: string }, options?: UploadFileOptions): Promise<File>;
  async uploadFile(source: UploadSource, details: UploadFileDetails = {}, options: UploadFileOptions = {}): Promise<File> {
    const fileName = details.fileName ?? (typeof source === 'string' ? basename(source) : undefined);
    if (fileName === undefined) throw new TypeError('uploadFile: give details.fileName when the source is a stream');
    const bytes =
      typeof source === 'string'
        ? await bytesOfPath(source, details.sha256, options.signal)
        : details.sizeBytes === undefined
          ? await spooledBytes(source, details.sha256, options.signal)
          : streamedBytes(source, details.sizeBytes, details.sha256);
    try {
      const prepared = await this.prepareFile(
        { file_name: fileName, content_type: details.contentType ?? contentTypeOf(fileName), size_bytes: bytes.sizeBytes, ...(bytes.sha256 !== undefined ? { sha256: bytes.sha256 } : {}) },
        options,
      );
      await this.putBytes(prepared, bytes, options.signal);
      const file = await this.completeFile(prepared.file_key, { signal: options.signal });
      if (file.status === 'rejected') throw new SvcFileRejectedError(file);
      return file;
    } finally {
      await bytes.dispose();
    }
  }

  /** The PUT of an upload: `bytes` to the prepared file's `upload_url`, with its `upload_headers` and no credential. */
  private async putBytes(file: File, bytes: UploadBytes, signal: AbortSignal | undefined): Promise<void> {
    const url = file.upload_url;
    if (url === undefined) throw new TypeError(`the prepared file ${file.file_key} has no upload_url`);
    const target = new URL(url);
    await this.send(
      // The query is the upload's signature: kept out of error messages and logs.
      `${file.upload_method ?? 'PUT'} ${target.origin}${target.pathname}`,
      async (attemptSignal, progress) => {
        const headers = new Headers(file.upload_headers);
        headers.set('Content-Length', String(bytes.sizeBytes));
        const request = new Request(url, { method: file.upload_method ?? 'PUT', headers, body: requestBody(bytes.open(), progress), duplex: 'half', signal: attemptSignal });
        const response = await this.fetchDocument(request);
        progress();
        // The API's own address answers {data: file}; an S3 presigned URL an empty body: neither is needed.
        const text = await response.text();
        return response.ok ? { data: true as const, response } : { error: parseMaybeJson(text), response };
      },
      signal,
      { repeatable: bytes.repeatable, retries: bytes.repeatable ? this.maxRetries : 0, deadline: { kind: 'idle', ms: this.uploadIdleTimeoutMs } },
    );
  }

  /**
   * Reads the run every `pollIntervalMs` until its status is final (`succeeded`, `failed` or
   * `cancelled`, {@link FINAL_RUN_STATUS}) and resolves with it, whatever the final status:
   * a failed run is an answer, not an error. Each read retries 429/503 after `Retry-After`
   * as every call does. Runs forever unless the run ends or `signal` aborts it (then it
   * rejects with `signal.reason`, e.g. `AbortSignal.timeout(ms)`'s `TimeoutError`).
   *
   * @throws {@link SvcApiError} (404 for an unknown run, 401, ...) or {@link SvcNetworkError} from a read.
   */
  async waitForRun(runId: string, options: WaitForRunOptions = {}): Promise<Run> {
    const interval = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    let seen = '';
    for (;;) {
      const run = await this.getRun(runId, { signal: options.signal });
      const state = JSON.stringify([run.status, run.progress?.percent, run.progress?.message]);
      if (state !== seen) {
        seen = state;
        options.onStatus?.(run);
      }
      if (isFinalRunStatus(run.status)) return run;
      await abortableSleep(interval, options.signal);
    }
  }

  /**
   * One call with the timeout per attempt and the retries of the class comment. p-retry
   * counts the attempts and stops on the signal; the wait itself is done here, in
   * `onFailedAttempt` (the pattern p-retry documents for a delay of one's own), because it
   * is the server's `Retry-After`, not a backoff formula.
   */
  private async send<D>(
    /** `METHOD /path` with the path parameters filled in (or `METHOD https://host/path`), for {@link SvcNetworkError.request}. */
    operation: string,
    /** One attempt; `progress` restarts an idle deadline (a no-op for a total one). */
    call: (signal: AbortSignal, progress: () => void) => Promise<Outcome<D>>,
    signal: AbortSignal | undefined,
    how: SendOptions = {},
  ): Promise<D> {
    const [method = '', path = ''] = operation.split(' ');
    const label = /^https?:\/\//u.test(path) ? `${method} ${path}` : `${method} ${this.baseUrl}${path}`;
    const repeatable = how.repeatable === true;
    const spec = how.deadline ?? { kind: 'total', ms: this.timeoutMs };
    const attempt = async (): Promise<D> => {
      const deadline = startDeadline(spec);
      const both = signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]);
      let outcome: Outcome<D>;
      try {
        outcome = await call(both, deadline.progress);
      } catch (error) {
        if (signal?.aborted === true) throw new AbortError('aborted by the caller');
        const failure = networkErrorOf(label, error, deadline.signal.aborted, spec);
        throw failure.kind === 'connection_refused' || repeatable ? failure : new AbortError(failure);
      } finally {
        deadline.clear();
      }
      if (outcome.error !== undefined || outcome.data === undefined) {
        const error = apiErrorOf(outcome.response, outcome.error);
        const retryable = error.status === 429 || error.status === 503 || (repeatable && error.status === 409 && error.code === 'idempotency_key_in_use');
        throw retryable ? error : new AbortError(error);
      }
      return outcome.data;
    };
    try {
      return await pRetry(attempt, {
        retries: how.retries ?? this.maxRetries,
        minTimeout: 0,
        maxTimeout: 0,
        signal,
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          if (retriesLeft === 0) return;
          const failure = error as SvcApiError | SvcNetworkError;
          const delayMs =
            failure instanceof SvcApiError && failure.retryAfterSeconds !== undefined
              ? failure.retryAfterSeconds * 1000
              : this.backoffMs * 2 ** (attemptNumber - 1);
          if (delayMs > this.maxRetryDelayMs) throw failure;
          this.onRetry?.({ attempt: attemptNumber, delayMs, error: failure });
          await abortableSleep(delayMs, signal);
        },
      });
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      throw error;
    }
  }
}

/** How long one attempt may take: `ms` in all (`total`), or `ms` without progress (`idle`). */
interface AttemptDeadline {
  readonly kind: 'total' | 'idle';
  readonly ms: number;
}

/** How {@link SvcClient.send} treats one call beyond its defaults. */
interface SendOptions {
  /**
   * True when sending the request again cannot do its work twice (every attempt carries one
   * `Idempotency-Key`, or the operation is idempotent, or a repeated upload replaces the
   * first): a timeout, a reset and a 409 `idempotency_key_in_use` are retried too.
   */
  readonly repeatable?: boolean;
  /** Retries after the first attempt; default the client's `maxRetries`. */
  readonly retries?: number;
  /** Default: `total`, the client's `timeoutMs`. */
  readonly deadline?: AttemptDeadline;
}

/** A deadline of one attempt: its signal aborts at the deadline; `progress` moves an idle one on. */
function startDeadline(spec: AttemptDeadline): { readonly signal: AbortSignal; readonly progress: () => void; readonly clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`${spec.kind} deadline of ${spec.ms} ms`, 'TimeoutError')), spec.ms);
  return { signal: controller.signal, progress: spec.kind === 'idle' ? () => void timer.refresh() : () => undefined, clear: () => clearTimeout(timer) };
}

/** The `Idempotency-Key` header of a write: the caller's key, a new UUID, or none (`false`). */
function idempotencyHeader(options: WriteOptions): { 'Idempotency-Key'?: string } {
  if (options.idempotencyKey === false) return {};
  return { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() };
}

/** `X-Svc-Egress: true` when the row write asks for the egress route. */
function egressHeader(options: RecordWriteOptions): { 'X-Svc-Egress'?: 'true' } {
  return options.egress === true ? { 'X-Svc-Egress': 'true' } : {};
}

/** Waits `ms`; rejects with `signal.reason` when it aborts first. */
async function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    throw error;
  }
}

/** A body that is JSON when it parses, else its text (a non-problem error page). */
function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The system error code of a failed fetch: undici puts it on `cause` (or on each error of an AggregateError there). */
function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  const inner = (cause as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(inner)) {
    const codes = inner.map((e: unknown) => (e as { code?: unknown }).code);
    if (codes.length > 0 && codes.every((c) => c === 'ECONNREFUSED')) return 'ECONNREFUSED';
  }
  return undefined;
}

/** The {@link SvcNetworkError} of a call that threw (no answer, or no whole answer in time). */
function networkErrorOf(label: string, error: unknown, timedOut: boolean, deadline: AttemptDeadline): SvcNetworkError {
  if (timedOut) return new SvcNetworkError('timeout', label, deadline.kind === 'idle' ? `no progress for ${deadline.ms} ms` : `no whole answer within ${deadline.ms} ms`, error);
  const code = causeCode(error);
  if (code === 'ECONNREFUSED') return new SvcNetworkError('connection_refused', label, 'connection refused: is the API server running at this address?', error);
  // undici's own message is "fetch failed"; what failed is in its cause.
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const message = [error, cause].filter((e): e is Error => e instanceof Error).map((e) => e.message).join(': ') || String(error);
  return new SvcNetworkError('network', label, code === undefined ? message : `${message} (${code})`, error);
}
