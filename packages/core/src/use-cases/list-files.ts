import type { DomainError } from '../domain/errors.js';
import { queryParameterError, type ListPage, type PageCursors, type PageQuery } from '../domain/page.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import { FILE_STATUSES } from '../domain/stored-file.js';
import type { Clock } from '../ports/clock.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import { fileViewOf, isFileStatus, type FileView } from './file-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/** Input of {@link ListFiles}: the query parameters of `GET /api/v1/files` as sent. */
export interface ListFilesInput {
  /** The authenticated caller: only its account's files are listed. */
  readonly principal: Principal;
  /** This call's rate-limit charge; default `UNMETERED`. */
  readonly meter?: RequestMeter;
  /** `status`: only files with this status as recorded (one of `FILE_STATUSES`). */
  readonly status?: string;
  /** `limit` and `cursor`. */
  readonly page: PageQuery;
}

/**
 * Lists the caller's files: `GET /api/v1/files?status=&limit=&cursor=`, newest first
 * (`created_at` descending, then `file_key`), paged like discovery (signed cursors bound to
 * the account and the filter). `status` is matched as recorded: a file past `expires_at`
 * that the sweep has not reached yet is listed under its recorded status and shown
 * `expired`. `status` not a file status → `validation_failed` naming `/status`.
 * Source: docs/CONTRACT.md "Files", "Discovery".
 * @throws DependencyUnavailableError when the catalog is unreachable (503).
 */
export class ListFiles {
  constructor(
    private readonly ports: { readonly catalog: FileCatalog; readonly clock: Clock },
    private readonly cursors: PageCursors,
  ) {}

  /** @returns the page (answered 200), or an error with its code. */
  async execute(input: ListFilesInput): Promise<Result<ListPage<FileView>, DomainError<'validation_failed' | 'invalid_cursor' | 'rate_limited'>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const { status } = input;
    if (status !== undefined && !isFileStatus(status)) return err(queryParameterError('validation_failed', 'status', `must be one of ${FILE_STATUSES.join(', ')}`));
    const binding = JSON.stringify(['files', input.principal.accountId, status ?? null]);
    const page = this.cursors.read(input.page, binding);
    if (!page.ok) return page;
    const found = await this.ports.catalog.list(input.principal.accountId, status !== undefined ? { status } : {}, page.value);
    const now = this.ports.clock.now();
    return ok(this.cursors.pageOf(found, binding, (file) => fileViewOf(file, now)));
  }
}
