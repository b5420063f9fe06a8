import { FILE_STATUSES, type FileStatus, type StoredFile } from '../domain/stored-file.js';
import { DEFAULT_FILE_MAX_BYTES, DEFAULT_FILE_RETENTION_DAYS, DEFAULT_UPLOAD_TTL_MS } from '../domain/stored-file.js';
import { domainError, type DomainError } from '../domain/errors.js';
import { MAX_RESOURCE_ID_LENGTH } from '../domain/limits.js';
import type { Principal } from '../domain/principal.js';
import type { UploadTarget } from '../ports/file-store.js';
import type { FileCatalog } from '../ports/file-catalog.js';

/**
 * A file as the file operations answer it. Times are RFC 3339 strings in UTC. Source:
 * docs/CONTRACT.md "Files".
 */
export interface FileView {
  readonly file_key: string;
  readonly file_name: string;
  readonly content_type: string;
  readonly size_bytes: number;
  /** The digest of the bytes once `ready`; before, the declared one, or null. */
  readonly sha256: string | null;
  readonly status: FileStatus;
  readonly reason: string | null;
  readonly created_at: string;
  readonly expires_at: string;
  /** Only in the answer to a prepare: where to PUT the bytes. */
  readonly upload_url?: string;
  readonly upload_method?: 'PUT';
  readonly upload_headers?: Readonly<Record<string, string>>;
}

/** Settings of the file use cases (`files.*` of the server's config). Source: docs/CONTRACT.md "Files". */
export interface FileSettings {
  /** Largest `size_bytes` a prepare accepts, in bytes; default 104 857 600 (100 MiB). */
  readonly maxBytes?: number;
  /** Life of an upload address and of a `pending` file, in milliseconds; default 3 600 000 (1 h). */
  readonly uploadTtlMs?: number;
  /** Days an unreferenced `ready` file is kept after it was last used; default 7. */
  readonly retentionDays?: number;
  /**
   * Whether a run start checks its file keys (a `ready` file of the caller's account, same
   * name and type); default true. False keeps keys opaque, for embedders whose files live elsewhere.
   */
  readonly verifyKeys?: boolean;
}

/** {@link FileSettings} with every default filled in. */
export interface ResolvedFileSettings {
  readonly maxBytes: number;
  readonly uploadTtlMs: number;
  /** `retentionDays` in milliseconds. */
  readonly retentionMs: number;
  readonly verifyKeys: boolean;
}

/**
 * Fills in the defaults of `settings`.
 * @throws RangeError when `maxBytes` or `uploadTtlMs` is not a whole number ≥ 1, or `retentionDays` not > 0.
 */
export function resolveFileSettings(settings: FileSettings = {}): ResolvedFileSettings {
  const maxBytes = settings.maxBytes ?? DEFAULT_FILE_MAX_BYTES;
  const uploadTtlMs = settings.uploadTtlMs ?? DEFAULT_UPLOAD_TTL_MS;
  const retentionDays = settings.retentionDays ?? DEFAULT_FILE_RETENTION_DAYS;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError('files maxBytes must be a whole number ≥ 1');
  if (!Number.isSafeInteger(uploadTtlMs) || uploadTtlMs < 1) throw new RangeError('files uploadTtlMs must be a whole number ≥ 1');
  if (!(retentionDays > 0) || !Number.isFinite(retentionDays)) throw new RangeError('files retentionDays must be > 0');
  return { maxBytes, uploadTtlMs, retentionMs: Math.round(retentionDays * 86_400_000), verifyKeys: settings.verifyKeys ?? true };
}

/** The status of `file` at `now`: a `pending` or `ready` file past its `expiresAt` reads as `expired` before the sweep records it. */
export function fileStatusAt(file: StoredFile, now: Date): FileStatus {
  if ((file.status === 'pending' || file.status === 'ready') && file.expiresAt.getTime() <= now.getTime()) return 'expired';
  return file.status;
}

/** True when `value` is a file status (a `status` query parameter). */
export function isFileStatus(value: string): value is FileStatus {
  return (FILE_STATUSES as readonly string[]).includes(value);
}

/** Renders `file` for the wire as of `now`, with the upload address of a prepare when given. */
export function fileViewOf(file: StoredFile, now: Date, upload?: UploadTarget): FileView {
  const status = fileStatusAt(file, now);
  return {
    file_key: file.fileKey,
    file_name: file.fileName,
    content_type: file.contentType,
    size_bytes: file.sizeBytes,
    sha256: file.sha256 ?? null,
    status,
    reason: file.reason ?? (status === 'expired' ? expiryReason(file) : null),
    created_at: file.createdAt.toISOString(),
    expires_at: file.expiresAt.toISOString(),
    ...(upload !== undefined ? { upload_url: upload.url, upload_method: upload.method, upload_headers: upload.headers } : {}),
  };
}

/** The `reason` of an expired file. */
export function expiryReason(file: Pick<StoredFile, 'status' | 'completedAt'>): string {
  return file.completedAt === undefined ? 'The file was not uploaded and completed before its upload address expired.' : 'The file was not used by a run for files.retention_days.';
}

/** `{base_url}/api/v1/files/{file_key}`: the file's `Location`. */
export function fileUrlOf(baseUrl: string, fileKey: string): string {
  return `${baseUrl}/api/v1/files/${encodeURIComponent(fileKey)}`;
}

/** The media type `contentType` names, for comparing: lower case, parameters and spaces removed. */
export function essenceOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** The 404 of a file that is missing or another account's (the same answer). */
export const FILE_NOT_FOUND: DomainError<'not_found'> = domainError('not_found', 'The file was not found.');

/** The caller's file `fileKey`, or `undefined` when there is none or it is another account's. */
export async function visibleFile(files: FileCatalog, principal: Principal, fileKey: string): Promise<StoredFile | undefined> {
  if (fileKey.length === 0 || fileKey.length > MAX_RESOURCE_ID_LENGTH) return undefined;
  const file = await files.get(fileKey);
  return file?.accountId === principal.accountId ? file : undefined;
}
