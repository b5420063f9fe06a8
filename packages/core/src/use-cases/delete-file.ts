import { domainError, type DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { StoredFile } from '../domain/stored-file.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import type { FileStore } from '../ports/file-store.js';
import type { RunStore } from '../ports/run-store.js';
import { FILE_NOT_FOUND, visibleFile } from './file-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link DeleteFile}. */
export interface DeleteFileInput {
  /** The authenticated caller (API key, or OAuth token with `files:write`). */
  readonly principal: Principal;
  /** This call's rate-limit charge; default `UNMETERED`. */
  readonly meter?: RequestMeter;
  /** `file_key` of the path. */
  readonly fileKey: string;
}

/** The id of a `queued` or `running` run started with `file`, or `undefined` when none is. */
export async function liveRunOf(file: StoredFile, runs: RunStore): Promise<string | undefined> {
  const found = await Promise.all(file.runIds.map((runId) => runs.get(runId)));
  return found.find((run) => run?.status === 'queued' || run?.status === 'running')?.runId;
}

/**
 * Deletes a file, its record and its bytes: `DELETE /api/v1/files/{file_key}` → 204;
 * `file_in_use` (409) while a `queued` or `running` run was started with it; another
 * account's file answers `not_found` like a missing one. Charges the credential's window
 * first. Source: docs/CONTRACT.md "Files".
 * @throws DependencyUnavailableError when the catalog, the store or the run store is unreachable (503; nothing deleted, or the bytes only: a retry finishes it).
 */
export class DeleteFile {
  constructor(private readonly ports: { readonly catalog: FileCatalog; readonly store: FileStore; readonly runs: RunStore }) {}

  /** @returns nothing (answered 204), or an error with its code. */
  async execute(input: DeleteFileInput): Promise<Result<undefined, DomainError<'not_found' | 'file_in_use' | 'rate_limited'>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const file = await visibleFile(this.ports.catalog, input.principal, input.fileKey);
    if (file === undefined) return err(FILE_NOT_FOUND);
    const live = await liveRunOf(file, this.ports.runs);
    if (live !== undefined) return err(domainError('file_in_use', `The file is used by run ${live}, which is not final yet; cancel it or wait for it to end.`));
    await this.ports.store.remove(file.fileKey);
    await this.ports.catalog.remove(file.fileKey);
    return ok(undefined);
  }
}
