import type { DomainError } from '../domain/errors.js';
import { MAX_RESOURCE_ID_LENGTH } from '../domain/limits.js';
import { queryParameterError, type ListPage, type PageCursors, type PageQuery } from '../domain/page.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import { RUN_STATUSES, type RunStatus } from '../domain/run.js';
import type { RunStore } from '../ports/run-store.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';
import { viewOf, type RunView } from './run-view.js';

/** Input of {@link ListRuns}: the query parameters of `GET /api/v1/runs` as sent (absent when not sent). */
export interface ListRunsInput {
  /** The authenticated caller (API key, or OAuth token with `runs:read`): only its account's runs are listed. */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** `agent_id`: only this agent's runs. One that names no agent of the account gives an empty list, never 404. */
  readonly agentId?: string;
  /** `status`: only runs with this status (one of `RUN_STATUSES`), as it is when the page is read. */
  readonly status?: string;
  /** `limit` and `cursor`. */
  readonly page: PageQuery;
}

/**
 * What {@link ListRuns} answers: at most `limit` runs, newest first, each as `GET
 * {status_url}` shows it, and `nextCursor` (signed for this account and these filters)
 * when more runs may follow. A page may be short, even empty, while `nextCursor` is
 * present (a status filter over many runs).
 */
export type RunList = ListPage<RunView>;

/** Codes {@link ListRuns} can produce. */
export type ListRunsErrorCode = 'validation_failed' | 'invalid_cursor' | 'rate_limited';

/**
 * Lists the caller's runs: `GET /api/v1/runs?agent_id=&status=&limit=&cursor=`, newest
 * first (`createdAt` descending, then run id), only the caller's account. Charges the
 * meter first, like `GetRun`, so that a refused or invalid request is charged once too.
 * `status` not a run status → `validation_failed` naming `/status`; `limit` and
 * `cursor` as core `PageCursors.read` reads them (`/limit`; a cursor of another
 * account or other filters: `invalid_cursor`). An `agent_id` that
 * is empty or names no agent of the account answers an empty list. Rejects (HTTP 503)
 * only when the run store is unreachable.
 * Source: docs/CONTRACT.md "Discovery", "Isolation between accounts";
 * docs/decisions.md "Discovery: listing runs".
 */
export class ListRuns {
  constructor(
    private readonly runs: RunStore,
    private readonly settings: { readonly baseUrl: string },
    private readonly cursors: PageCursors,
  ) {}

  /** @returns the page (answered 200), or an error with its code. */
  async execute(input: ListRunsInput): Promise<Result<RunList, DomainError<ListRunsErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const { status } = input;
    if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status)) {
      return err(queryParameterError('validation_failed', 'status', `must be one of ${RUN_STATUSES.join(', ')}`));
    }
    const { agentId } = input;
    const binding = JSON.stringify(['runs', input.principal.accountId, agentId ?? null, status ?? null]);
    const page = this.cursors.read(input.page, binding);
    if (!page.ok) return page;
    // An id no agent can have: nothing to ask the store.
    if (agentId !== undefined && (agentId.length === 0 || agentId.length > MAX_RESOURCE_ID_LENGTH)) return ok({ items: [] });
    const filter = { ...(agentId !== undefined ? { agentId } : {}), ...(status !== undefined ? { status: status as RunStatus } : {}) };
    const found = await this.runs.list(input.principal.accountId, filter, page.value);
    return ok(this.cursors.pageOf(found, binding, (run) => viewOf(run, this.settings.baseUrl)));
  }
}
