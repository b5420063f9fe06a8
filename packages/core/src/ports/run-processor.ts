import type { Readable } from 'node:stream';
import type { JsonValue, Run } from '../domain/run.js';

/**
 * How processing a run ended, as a processor resolves it:
 * - `{ok: true, output?}`: the run `succeeded`; `output` (any JSON value, at most
 *   `MAX_RUN_OUTPUT_BYTES` as JSON) is stored with the run and shown at `GET {status_url}`;
 * - `{ok: false, reason}`: the run `failed` at once with `reason` (safe, human-readable
 *   text shown as `failure_reason`); an answer, not an accident, so never retried.
 * Source: docs/decisions.md "Run processors".
 */
export type RunProcessingResult = { readonly ok: true; readonly output?: JsonValue } | { readonly ok: false; readonly reason: string };

/** What a processor passes to {@link RunProcessingContext.reportProgress}. */
export interface ProgressReport {
  /** Done so far, 0..100; absent when unknown. */
  readonly percent?: number;
  /** Safe, human-readable step, at most 1000 characters. */
  readonly message?: string;
}

/** A file of a run, as {@link RunFiles.open} describes it. Sizes in bytes. Source: docs/CONTRACT.md "Files". */
export interface RunFile {
  readonly fileKey: string;
  readonly fileName: string;
  /** Media type, lower case, without parameters. */
  readonly contentType: string;
  readonly sizeBytes: number;
  /** SHA-256 of the bytes, 64 lowercase hex digits. */
  readonly sha256: string;
}

/** An opened file of a run: its metadata and its bytes as a stream (read it once, or destroy it). */
export interface OpenedRunFile extends RunFile {
  readonly stream: Readable;
}

/**
 * The files of one run, for its processor (`context.files`). Source: docs/CONTRACT.md "Files".
 */
export interface RunFiles {
  /**
   * Opens one of the run's files (`files[].file_key` or `background_files[].file_key` of its request).
   * @throws RunFailedError (not retryable) when `fileKey` is not one of the run's files, or the file is gone or not `ready`.
   * @throws DependencyUnavailableError when the file storage is unreachable (the attempt is retried).
   */
  open(fileKey: string): Promise<OpenedRunFile>;
}

/** Gives each run's processor its {@link RunFiles}: core `StoredRunFiles` on a file catalog and store. */
export interface RunFileSource {
  /** The files of `run`. */
  forRun(run: Run): RunFiles;
}

/**
 * What a processor gets with each attempt of a run. Source: docs/decisions.md "Run processors".
 */
export interface RunProcessingContext {
  /**
   * Aborts when the attempt must stop: the worker is shutting down past its grace (the
   * run is then tried again by another worker where the queue is durable), or the run is
   * cancelled. A processor stops its work promptly and rejects (with `signal.reason`).
   */
  readonly signal: AbortSignal;
  /** This attempt's number: 1 for the first, 2 for the first retry, and so on. */
  readonly attempt: number;
  /** Attempts the worker makes at most before the run fails (the backend's `attempts`). */
  readonly maxAttempts: number;
  /**
   * Records the run's `progress`, shown at `GET {status_url}` (replacing the last report).
   * Resolves false when the run is no longer `running` (e.g. it was cancelled).
   * @throws RangeError when `percent` is not in 0..100, or `message` is over 1000 characters.
   * @throws when the run store is unreachable.
   */
  reportProgress(progress: ProgressReport): Promise<boolean>;
  /** The run's files, read as streams (the worker's `files` source; without one every `open` fails the run). */
  readonly files: RunFiles;
}

/**
 * The agent runtime: does the work of one run. Supplied by the embedder or the operator
 * (`startServer(settings, {processor})`, `createWorker({backend, processor})`); the API
 * server ships a demo processor.
 *
 * Contract (docs/decisions.md "Run processors"):
 * - resolves how the run ended ({@link RunProcessingResult});
 * - rejects for a failure: retried with the backend's backoff until its attempts are
 *   spent (then `failed` with a safe reason, never the error's message), unless the error
 *   is a `RunFailedError` with `retryable: false`, which fails the run at once;
 * - honours `context.signal`;
 * - tolerates being called again for the same run after a crash (at-least-once).
 */
export interface RunProcessor {
  process(run: Run, context: RunProcessingContext): Promise<RunProcessingResult>;
}
