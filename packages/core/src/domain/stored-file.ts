/**
 * Files a client prepares, uploads and hands to runs. Source: docs/CONTRACT.md "Files
 * (file preparation and documents)".
 */

/** The statuses of a file: `pending` (prepared, bytes not checked yet), `ready`, `rejected` (checked and refused, see `reason`), `expired`. */
export const FILE_STATUSES = ['pending', 'ready', 'rejected', 'expired'] as const;

/** One file status. See {@link FILE_STATUSES}. */
export type FileStatus = (typeof FILE_STATUSES)[number];

/** The default of `files.max_bytes`: 100 MiB (104 857 600 bytes). Source: docs/CONTRACT.md "Files". */
export const DEFAULT_FILE_MAX_BYTES = 100 * 1024 * 1024;

/** The default life of an upload address and of a `pending` file: 1 hour, in milliseconds. Source: docs/CONTRACT.md "Files". */
export const DEFAULT_UPLOAD_TTL_MS = 60 * 60 * 1000;

/** The default of `files.retention_days`: an unreferenced `ready` file expires 7 days after it was last used. */
export const DEFAULT_FILE_RETENTION_DAYS = 7;

/**
 * The record of one file, as the file catalog keeps it (the wire view is core
 * `fileView`). Dates are instants; sizes are bytes.
 */
export interface StoredFile {
  /** The key a run request's `files[].file_key` names: `file_` and 32 lowercase hex digits (opaque to clients). */
  readonly fileKey: string;
  /** The account that prepared it; nobody else sees it. */
  readonly accountId: string;
  /** 1..255 characters, no path separator (`/`, `\`) and no control character. */
  readonly fileName: string;
  /** The declared media type, lower case, without parameters (e.g. `application/pdf`). */
  readonly contentType: string;
  /** The declared size, 1..`files.max_bytes`. */
  readonly sizeBytes: number;
  /** The declared SHA-256 (64 lowercase hex digits) until `complete`; then the digest of the bytes received. Absent: not declared and not yet checked. */
  readonly sha256?: string;
  /** Where the file is in its life. */
  readonly status: FileStatus;
  /** Why it is `rejected` or `expired`: safe, human-readable text. */
  readonly reason?: string;
  /** When it was prepared. */
  readonly createdAt: Date;
  /** When it expires: a `pending` file at the end of its upload address's life; a `ready` one `files.retention_days` after it was last used. */
  readonly expiresAt: Date;
  /** When `complete` made it `ready` or `rejected`; absent while `pending`. */
  readonly completedAt?: Date;
  /** The runs that were started with it (their ids, oldest first, at most the last 100): a live one keeps it from being deleted or expired. */
  readonly runIds: readonly string[];
}

/** The most run ids a file record keeps (core `StoredFile.runIds`). */
export const MAX_FILE_RUN_IDS = 100;

/**
 * The sort key of a file in an account's list: newest first, then by key. The
 * millisecond time is turned into a string that sorts descending as bytes (the
 * complement of the time, zero-padded), then `|`, then the key.
 */
export function fileListKey(file: Pick<StoredFile, 'createdAt' | 'fileKey'>): string {
  const inverted = (9_999_999_999_999 - file.createdAt.getTime()).toString().padStart(13, '0');
  return `${inverted}|${file.fileKey}`;
}
