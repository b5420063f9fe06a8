import { domainError } from '../domain/errors.js';
import { MAX_RESOURCE_ID_LENGTH } from '../domain/limits.js';
import type { Principal } from '../domain/principal.js';
import type { DomainError } from '../domain/errors.js';
import { err, ok, type Result } from '../domain/result.js';
import type { RunStore } from '../ports/run-store.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';
import { viewOf, type RunView } from './run-view.js';

/** Input of {@link GetRun}. */
export interface GetRunInput {
  /** The authenticated caller (API key, or OAuth token with `runs:read`). */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** `run_id` from the path. */
  readonly runId: string;
}

/** Codes {@link GetRun} can produce. */
export type GetRunErrorCode = 'not_found' | 'rate_limited';

/**
 * Reads a run at its `status_url`: `GET /api/v1/runs/{run_id}`.
 * Another account's run answers `not_found` exactly like a missing one.
 * Source: docs/CONTRACT.md "Runs".
 */
export class GetRun {
  constructor(
    private readonly runs: RunStore,
    private readonly settings: { readonly baseUrl: string },
  ) {}

  /** @returns the run view (answered 200), or an error with its code. */
  async execute(input: GetRunInput): Promise<Result<RunView, DomainError<GetRunErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const run = input.runId.length <= MAX_RESOURCE_ID_LENGTH ? await this.runs.get(input.runId) : undefined;
    if (run === undefined || run.accountId !== input.principal.accountId) return err(domainError('not_found', 'The run was not found.'));
    return ok(viewOf(run, this.settings.baseUrl));
  }
}
