import { domainError, type DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { StoredFile } from '../domain/stored-file.js';
import type { Clock } from '../ports/clock.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import type { FileContentFacts, FileStore } from '../ports/file-store.js';
import { FILE_NOT_FOUND, fileStatusAt, fileViewOf, visibleFile, type FileView, type ResolvedFileSettings } from './file-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link CompleteFile}. */
export interface CompleteFileInput {
  /** The authenticated caller (API key, or OAuth token with `files:write`). */
  readonly principal: Principal;
  /** This call's rate-limit charge; default `UNMETERED`. */
  readonly meter?: RequestMeter;
  /** `file_key` of the path. */
  readonly fileKey: string;
}

/** Codes {@link CompleteFile} can produce. */
export type CompleteFileErrorCode = 'not_found' | 'file_not_pending' | 'file_not_uploaded' | 'rate_limited';

// Types file-type names differently from how clients commonly declare them: either
// spelling of each pair is the same type.
const SAME_TYPE: Readonly<Record<string, string>> = { 'text/xml': 'application/xml', 'application/x-zip-compressed': 'application/zip', 'audio/mp3': 'audio/mpeg', 'image/jpg': 'image/jpeg' };
const canonical = (type: string): string => SAME_TYPE[type] ?? type;
// file-type is imported at the first completion, not with the core: a process that never
// completes a file does not hold it (~5 MiB of RSS at start; bench/BENCHMARKS.md "RSS idle").
let sniffer: Promise<{ sniff: typeof import('file-type').fileTypeFromBuffer; sniffable: ReadonlySet<string> }> | undefined;
const loadSniffer = (): NonNullable<typeof sniffer> =>
  (sniffer ??= import('file-type').then(({ fileTypeFromBuffer, supportedMimeTypes }) => ({
    sniff: fileTypeFromBuffer,
    sniffable: new Set<string>([...supportedMimeTypes].map(canonical)),
  })));

/**
 * Why the bytes contradict the declared type, or `undefined` when they do not: the type
 * the `file-type` package sniffs from the first bytes differs from the declared one; or it
 * sniffs nothing while the declared type is one it always recognises (a "PDF" without the
 * PDF signature). A type it cannot sniff (text, CSV, JSON) is taken as declared.
 */
export async function typeContradiction(declared: string, head: Uint8Array): Promise<string | undefined> {
  const { sniff, sniffable } = await loadSniffer();
  const sniffed = await sniff(head);
  const want = canonical(declared);
  if (sniffed === undefined) return sniffable.has(want) ? `The bytes are not ${declared}: they do not start as such a file does.` : undefined;
  if (canonical(sniffed.mime) === want) return undefined;
  return `The bytes are ${sniffed.mime}, not the declared ${declared}.`;
}

/**
 * Checks the uploaded bytes of a `pending` file: `POST /api/v1/files/{file_key}/complete`
 * → 200 `{data: file}`, `ready` (the bytes committed, `sha256` their digest, `expires_at`
 * now + `files.retention_days`) or `rejected` with a `reason` (the bytes removed): a size
 * other than `size_bytes`, a digest other than the declared `sha256`, or a type the bytes
 * contradict ({@link typeContradiction}). A file already `ready` or `rejected` answers as
 * it is (a retried complete is harmless); an `expired` one → `file_not_pending`; nothing
 * uploaded yet → `file_not_uploaded` (409: PUT the bytes first). Another account's file
 * answers `not_found` like a missing one. Charges the credential's window first.
 * The bytes are committed before the record says `ready`, so a `ready` file always has
 * them. Source: docs/CONTRACT.md "Files".
 *
 * @throws DependencyUnavailableError when the catalog or the store is unreachable (503; the file stays `pending`).
 */
export class CompleteFile {
  constructor(
    private readonly ports: { readonly catalog: FileCatalog; readonly store: FileStore; readonly clock: Clock },
    private readonly settings: ResolvedFileSettings,
  ) {}

  /** @returns the checked file (answered 200), or an error with its code. */
  async execute(input: CompleteFileInput): Promise<Result<FileView, DomainError<CompleteFileErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const file = await visibleFile(this.ports.catalog, input.principal, input.fileKey);
    if (file === undefined) return err(FILE_NOT_FOUND);
    const now = this.ports.clock.now();
    const status = fileStatusAt(file, now);
    if (status === 'ready' || status === 'rejected') return ok(fileViewOf(file, now));
    if (status !== 'pending') return err(domainError('file_not_pending', `The file is ${status}; prepare it again.`));
    const facts = await this.ports.store.examine(file.fileKey);
    if (facts === undefined) return err(domainError('file_not_uploaded', 'No bytes were uploaded for the file yet: PUT them to upload_url first.'));
    const reason = await this.rejection(file, facts);
    let next: StoredFile;
    if (reason === undefined) {
      await this.ports.store.commit(file.fileKey);
      next = { ...file, status: 'ready', sha256: facts.sha256, completedAt: now, expiresAt: new Date(now.getTime() + this.settings.retentionMs) };
    } else {
      await this.ports.store.remove(file.fileKey);
      next = { ...file, status: 'rejected', reason, completedAt: now };
    }
    const replaced = await this.ports.catalog.replace(next, 'pending');
    // Another complete won the race (the same bytes, the same outcome), or the file was deleted meanwhile.
    if (replaced.file === undefined) return err(FILE_NOT_FOUND);
    return ok(fileViewOf(replaced.file, now));
  }

  private async rejection(file: StoredFile, facts: FileContentFacts): Promise<string | undefined> {
    if (facts.sizeBytes !== file.sizeBytes) return `The upload has ${facts.sizeBytes} bytes, not the ${file.sizeBytes} declared as size_bytes.`;
    if (file.sha256 !== undefined && facts.sha256 !== file.sha256) return `The SHA-256 of the upload is ${facts.sha256}, not the declared ${file.sha256}.`;
    return typeContradiction(file.contentType, facts.head);
  }
}
