import type { Readable } from 'node:stream';

/** How a client sends a file's bytes: `PUT` `url` with exactly `headers`. Source: docs/CONTRACT.md "Files". */
export interface UploadTarget {
  /** Absolute URL; it carries its own authorization (a signature) and expires. */
  readonly url: string;
  /** Always `PUT`. */
  readonly method: 'PUT';
  /** Headers the client sends with the bytes, as they are (e.g. `Content-Type`). */
  readonly headers: Readonly<Record<string, string>>;
}

/** What a {@link FileStore} measured of a file's bytes. */
export interface FileContentFacts {
  /** Bytes stored. */
  readonly sizeBytes: number;
  /** SHA-256 of the bytes, 64 lowercase hex digits. */
  readonly sha256: string;
  /** The first bytes (at most {@link FILE_HEAD_BYTES}), for sniffing the content's type. */
  readonly head: Uint8Array;
}

/** How many leading bytes {@link FileContentFacts.head} holds at most: what the `file-type` package reads to sniff a type (4100). */
export const FILE_HEAD_BYTES = 4100;

/**
 * What {@link FileStore.write} did: `stored` with the facts of the bytes; `too_large` —
 * the body had more than the declared size (nothing past the declared size was written,
 * and nothing is kept); `too_short` — the body ended before the declared size (nothing
 * is kept).
 */
export type FileWriteOutcome =
  | { readonly kind: 'stored'; readonly facts: FileContentFacts }
  | { readonly kind: 'too_large' | 'too_short' };

/**
 * Keeps the bytes of files, by file key (core `StoredFile.fileKey`, `file_` and hex
 * digits: safe as a path or object name). The records are a `FileCatalog`'s.
 *
 * A file's bytes go through two states: uploaded (written or PUT, not yet checked) and
 * committed (checked `ready`: what `open` reads). Contract (suite `fileStoreContract` in
 * `@svc/core/testing`):
 * - `write` streams `body` and keeps at most `sizeBytes` bytes, never buffering the
 *   whole body; only a body of exactly `sizeBytes` is kept, replacing any earlier
 *   upload of that key, and a reader never sees a half-written one;
 * - `examine` measures the uploaded (or committed) bytes; `undefined` when there are none;
 * - `commit` makes the uploaded bytes the committed ones (atomically: a reader sees the
 *   old or the new, never a mix); committing twice is harmless;
 * - `open` reads the committed bytes as a stream; `undefined` when there are none;
 * - `remove` deletes both; removing what is not there is harmless.
 * Every call rejects with core `DependencyUnavailableError` (dependency `file_storage`)
 * when the storage cannot be reached or is full, within the adapter's timeout; nothing
 * half-written is then left examinable. Source: docs/CONTRACT.md "Files".
 */
export interface FileStore {
  /**
   * Where a client PUTs the bytes itself (an S3 presigned URL), when this store takes
   * uploads directly; absent when the bytes go through the API (the filesystem store:
   * the API's own signed upload address, then `write`).
   * @param expiresAt - when the address stops working.
   */
  readonly presignUpload?: (file: { readonly fileKey: string; readonly contentType: string; readonly sizeBytes: number }, expiresAt: Date) => Promise<UploadTarget>;
  /**
   * Stores `body` as the uploaded bytes of `fileKey` when it holds exactly `sizeBytes`
   * bytes; reading stops at the first byte past `sizeBytes`.
   * @param signal - aborts the write (the client went away): nothing is kept, and it rejects with `signal.reason`.
   */
  write(fileKey: string, body: AsyncIterable<Uint8Array>, sizeBytes: number, signal?: AbortSignal): Promise<FileWriteOutcome>;
  /** @returns the facts of the uploaded (else the committed) bytes, or `undefined` when there are none. */
  examine(fileKey: string): Promise<FileContentFacts | undefined>;
  /** Makes the uploaded bytes the committed ones. @throws Error when nothing was uploaded. */
  commit(fileKey: string): Promise<void>;
  /** @returns the committed bytes as a stream, or `undefined` when there are none. */
  open(fileKey: string): Promise<Readable | undefined>;
  /** Deletes the uploaded and committed bytes of `fileKey`. */
  remove(fileKey: string): Promise<void>;
}
