import type { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { Clock } from '../ports/clock.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import { FILE_NOT_FOUND, fileViewOf, visibleFile, type FileView } from './file-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link GetFile}. */
export interface GetFileInput {
  /** The authenticated caller (API key, or OAuth token with `files:write`). */
  readonly principal: Principal;
  /** This call's rate-limit charge; default `UNMETERED`. */
  readonly meter?: RequestMeter;
  /** `file_key` of the path. */
  readonly fileKey: string;
}

/**
 * Reads a file: `GET /api/v1/files/{file_key}` → 200 `{data: file}`; another account's
 * file answers `not_found` exactly like a missing one. Source: docs/CONTRACT.md "Files".
 * @throws DependencyUnavailableError when the catalog is unreachable (503).
 */
export class GetFile {
  constructor(private readonly ports: { readonly catalog: FileCatalog; readonly clock: Clock }) {}

  /** @returns the file (answered 200), or `not_found` / `rate_limited`. */
  async execute(input: GetFileInput): Promise<Result<FileView, DomainError<'not_found' | 'rate_limited'>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const file = await visibleFile(this.ports.catalog, input.principal, input.fileKey);
    return file === undefined ? err(FILE_NOT_FOUND) : ok(fileViewOf(file, this.ports.clock.now()));
  }
}
