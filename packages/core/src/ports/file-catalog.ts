import type { Page, PageRequest } from '../domain/page.js';
import type { FileStatus, StoredFile } from '../domain/stored-file.js';

/** Which files of an account {@link FileCatalog.list} answers: all, or those with this status. */
export interface FileListFilter {
  /** Only the files whose status is this one when the page is read. */
  readonly status?: FileStatus;
}

/**
 * Holds the records of files (core `StoredFile`): who prepared each, what was declared,
 * and where it is in its life. The bytes are a {@link FileStore}'s.
 *
 * Contract (suite `fileCatalogContract` in `@svc/core/testing`): `get` resolves
 * `undefined` for an unknown key; `create` adds a new record (a key given twice is a bug
 * of the caller: it rejects); `replace` is a compare-and-set on the status, atomic with
 * respect to every other `replace`, `addRun` and `remove` of that key; `list` pages
 * through one account's files newest first (core `fileListKey`, compared as UTF-8 bytes),
 * never answering another account's; `due` answers files whose `expiresAt` is not after
 * `now` and whose status is `pending` or `ready`. Every call rejects only when the
 * catalog is unreachable. Source: docs/CONTRACT.md "Files".
 */
export interface FileCatalog {
  /** Adds `file`. @throws when a file with that key exists, or the catalog is unreachable. */
  create(file: StoredFile): Promise<void>;
  /** @returns the file, or `undefined` when there is none with that key. */
  get(fileKey: string): Promise<StoredFile | undefined>;
  /**
   * Replaces the record of `file.fileKey` with `file` when its current status is
   * `expected`; `runIds` are kept as stored (they change only through `addRun`).
   * @returns the record after (applied) or as found (not applied; `undefined` when there is none).
   */
  replace(file: StoredFile, expected: FileStatus): Promise<{ readonly applied: boolean; readonly file: StoredFile | undefined }>;
  /**
   * Records that run `runId` was started with the file, when it is `ready`: `runId` is
   * appended to `runIds` (the oldest dropped beyond core `MAX_FILE_RUN_IDS`) and
   * `expiresAt` becomes `expiresAt` when that is later.
   * @returns the record after, or `undefined` when there is none or it is not `ready`.
   */
  addRun(fileKey: string, runId: string, expiresAt: Date): Promise<StoredFile | undefined>;
  /** One page of the files of `accountId` that match `filter`; the position is a `fileListKey`. */
  list(accountId: string, filter: FileListFilter, page: PageRequest): Promise<Page<StoredFile>>;
  /** Removes the record (nothing when there is none). */
  remove(fileKey: string): Promise<void>;
  /** At most `limit` files `pending` or `ready` whose `expiresAt` ≤ `now`, soonest first. */
  due(now: Date, limit: number): Promise<readonly StoredFile[]>;
}
