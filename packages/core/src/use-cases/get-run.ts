import { domainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok } from '../domain/result.js';
import type { RunStore } from '../ports/run-store.js';
import { rateLimited, type Metered, type RequestQuota } from './request-quota.js';
import { viewOf, type RunView } from './run-view.js';

/** Input of {@link GetRun}. */
export interface GetRunInput {
  /** The authenticated caller (API key, or OAuth token with `runs:read`). */
  readonly principal: Principal;
  /** `run_id` from the path. */
  readonly runId: string;
}

/** Codes {@link GetRun} can produce. */
export type GetRunErrorCode = 'not_found' | 'rate_limited';

/**
 * Reads a run at its `status_url`: `GET /api/v1/runs/{run_id}`.
 * Another account's run answers `not_found` exactly like a missing one.
 * Source: CONTRACT.md "Runs".
 */
export class GetRun {
  constructor(
    private readonly runs: RunStore,
    private readonly quota: RequestQuota,
    private readonly settings: { readonly baseUrl: string },
  ) {}

  /** @returns the run view (answered 200), or an error with its code. */
  async execute(input: GetRunInput): Promise<Metered<RunView, GetRunErrorCode>> {
    const rateLimit = await this.quota.charge(input.principal);
    if (!rateLimit.allowed) return { result: err(rateLimited(rateLimit)), rateLimit };
    const run = input.runId.length <= 128 ? await this.runs.get(input.runId) : undefined;
    if (run === undefined || run.accountId !== input.principal.accountId) {
      return { result: err(domainError('not_found', 'The run was not found.')), rateLimit };
    }
    return { result: ok(viewOf(run, this.settings.baseUrl)), rateLimit };
  }
}
