import { domainError, type DomainError } from '../domain/errors.js';
import { err, ok, type Result } from '../domain/result.js';
import type { UploadAddresses } from '../domain/upload-address.js';
import type { Clock } from '../ports/clock.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import type { FileStore } from '../ports/file-store.js';
import { FILE_NOT_FOUND, fileStatusAt, fileViewOf, type FileView } from './file-view.js';

/** Input of {@link ReceiveFileUpload}: a `PUT` to the API's own upload address. */
export interface ReceiveFileUploadInput {
  /** `file_key` of the path. */
  readonly fileKey: string;
  /** The `expires` query parameter (unix seconds), as sent. */
  readonly expires?: string;
  /** The `signature` query parameter, as sent. */
  readonly signature?: string;
  /** The request's `Content-Length`, when it sent one (a chunked body has none). */
  readonly contentLength?: number;
  /** The bytes, streamed: read at most up to the first byte past the declared size. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Aborts when the client goes away: nothing is kept. */
  readonly signal?: AbortSignal;
}

/** Codes {@link ReceiveFileUpload} can produce. */
export type ReceiveFileUploadErrorCode = 'upload_url_invalid' | 'not_found' | 'file_not_pending' | 'upload_too_large' | 'upload_size_mismatch';

/**
 * Takes the bytes of a `pending` file at the API's own signed upload address (the
 * filesystem store; core `UploadAddresses`): `PUT {upload_url}` → 200 `{data: file}`
 * (still `pending`: `complete` checks and makes it `ready`). No credential: the signature
 * is the authorization, so no rate-limit window is charged. Answers, reading nothing of
 * the body unless all is well: a bad or expired signature → `upload_url_invalid` (403); no
 * such file → `not_found`; not `pending` → `file_not_pending`; a `Content-Length` above
 * `size_bytes` → `upload_too_large` (413), below → `upload_size_mismatch` (400). The body
 * is streamed to the store, which writes at most `size_bytes` bytes: more →
 * `upload_too_large`, fewer → `upload_size_mismatch`, and nothing is kept either way; a
 * second PUT replaces the first. Source: docs/CONTRACT.md "Files".
 *
 * @throws DependencyUnavailableError when the catalog or the store is unreachable or full (503; nothing kept).
 * @throws the signal's reason when the client went away (nothing kept).
 */
export class ReceiveFileUpload {
  constructor(private readonly ports: { readonly catalog: FileCatalog; readonly store: FileStore; readonly clock: Clock; readonly addresses: UploadAddresses }) {}

  /** @returns the file, still `pending` (answered 200), or an error with its code. */
  async execute(input: ReceiveFileUploadInput): Promise<Result<FileView, DomainError<ReceiveFileUploadErrorCode>>> {
    const now = this.ports.clock.now();
    const check = this.ports.addresses.check(input.fileKey, input.expires, input.signature, now);
    if (check !== 'valid') {
      const detail = check === 'expired' ? 'The upload address has expired; prepare the file again.' : 'The upload address is not valid: use upload_url exactly as the prepare answered it.';
      return err(domainError('upload_url_invalid', detail));
    }
    const file = await this.ports.catalog.get(input.fileKey);
    if (file === undefined) return err(FILE_NOT_FOUND);
    const status = fileStatusAt(file, now);
    if (status !== 'pending') return err(domainError('file_not_pending', `The file is ${status}; only a pending file takes an upload.`));
    const sizeError = (received: string): DomainError<'upload_too_large' | 'upload_size_mismatch'> =>
      domainError(received === 'more' ? 'upload_too_large' : 'upload_size_mismatch', `The upload has ${received} bytes than size_bytes (${file.sizeBytes}) declared when the file was prepared; nothing was kept.`);
    if (input.contentLength !== undefined && input.contentLength !== file.sizeBytes) return err(sizeError(input.contentLength > file.sizeBytes ? 'more' : 'fewer'));
    const written = await this.ports.store.write(file.fileKey, input.body, file.sizeBytes, input.signal);
    if (written.kind !== 'stored') return err(sizeError(written.kind === 'too_large' ? 'more' : 'fewer'));
    return ok(fileViewOf(file, now));
  }
}
