import { domainError, validationFailed, type DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { StoredFile } from '../domain/stored-file.js';
import type { UploadAddresses } from '../domain/upload-address.js';
import type { Clock } from '../ports/clock.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import type { FileStore, UploadTarget } from '../ports/file-store.js';
import type { IdGenerator } from '../ports/id-generator.js';
import { validatePrepareFileBody, type PrepareFileBody, type WireBody } from '../schemas/validate.js';
import { essenceOf, fileUrlOf, fileViewOf, type FileView, type ResolvedFileSettings } from './file-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link PrepareFile}. */
export interface PrepareFileInput {
  /** The authenticated caller (API key, or OAuth token with `files:write`). */
  readonly principal: Principal;
  /** This call's rate-limit charge; default `UNMETERED`. */
  readonly meter?: RequestMeter;
  /** `{file_name, content_type, size_bytes, sha256?}`: typed, or as a wire door received it. */
  readonly body: PrepareFileBody | WireBody;
}

/** What {@link PrepareFile} answers: the `pending` file with its upload address, and its `Location`. */
export interface PreparedFile {
  readonly file: FileView;
  /** `{base_url}/api/v1/files/{file_key}`. */
  readonly location: string;
}

/** Codes {@link PrepareFile} can produce. */
export type PrepareFileErrorCode = 'validation_failed' | 'rate_limited';

/**
 * Prepares a file: `POST /api/v1/files` → 201 with a `pending` file, its `upload_url`
 * (the store's presigned URL, or the API's own signed address when the bytes go through
 * the API), `upload_method: "PUT"`, `upload_headers`, and `expires_at` (now +
 * `uploadTtlMs`). Charges the credential's window first. `size_bytes` above
 * `files.max_bytes` → `validation_failed` naming `/size_bytes`. Source: docs/CONTRACT.md "Files".
 *
 * @throws DependencyUnavailableError when the catalog or the store is unreachable (nothing was promised: 503).
 */
export class PrepareFile {
  constructor(
    private readonly ports: { readonly catalog: FileCatalog; readonly store: FileStore; readonly ids: IdGenerator; readonly clock: Clock; readonly addresses: UploadAddresses },
    private readonly settings: ResolvedFileSettings & { readonly baseUrl: string },
  ) {}

  /** @returns the prepared file (answered 201), or an error with its code. */
  async execute(input: PrepareFileInput): Promise<Result<PreparedFile, DomainError<PrepareFileErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const body = validatePrepareFileBody(input.body);
    if (!body.ok) return err(validationFailed(body.error));
    const { maxBytes } = this.settings;
    if (body.value.size_bytes > maxBytes) {
      const message = `must be at most ${maxBytes} bytes (files.max_bytes)`;
      return err(domainError('validation_failed', `/size_bytes: ${message}`, { errors: [{ path: '/size_bytes', message }] }));
    }
    const now = this.ports.clock.now();
    const file: StoredFile = {
      fileKey: `file_${this.ports.ids.newId().replace(/-/gu, '').toLowerCase()}`,
      accountId: input.principal.accountId,
      fileName: body.value.file_name,
      contentType: essenceOf(body.value.content_type),
      sizeBytes: body.value.size_bytes,
      ...(body.value.sha256 !== undefined ? { sha256: body.value.sha256 } : {}),
      status: 'pending',
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.settings.uploadTtlMs),
      runIds: [],
    };
    const upload: UploadTarget =
      this.ports.store.presignUpload !== undefined
        ? await this.ports.store.presignUpload(file, file.expiresAt)
        : { url: this.ports.addresses.addressOf(file.fileKey, file.expiresAt), method: 'PUT', headers: { 'Content-Type': file.contentType } };
    await this.ports.catalog.create(file);
    return ok({ file: fileViewOf(file, now, upload), location: fileUrlOf(this.settings.baseUrl, file.fileKey) });
  }
}
