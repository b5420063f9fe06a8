import { domainError, type DomainError } from '../domain/errors.js';
import { errorTypeOf } from '../domain/error-type.js';
import { MAX_RESOURCE_ID_LENGTH } from '../domain/limits.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { Clock } from '../ports/clock.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import type { Notifier } from '../ports/notifier.js';
import type { RunStore } from '../ports/run-store.js';
import { noopTelemetry, type Telemetry } from '../ports/telemetry.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';
import { viewOf, type RunView } from './run-view.js';

/** Input of {@link CancelRun}. */
export interface CancelRunInput {
  /** The authenticated caller (API key, or OAuth token with `runs:write`). */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED`. */
  readonly meter?: RequestMeter;
  /** `run_id` from the path. */
  readonly runId: string;
}

/** Codes {@link CancelRun} can produce. */
export type CancelRunErrorCode = 'not_found' | 'run_final' | 'rate_limited';

/** Collaborators of {@link CancelRun}. */
export interface CancelRunDeps {
  readonly runs: RunStore;
  readonly clock: Clock;
  /** Told when this cancel made a queued run `cancelled` (the other final changes are the worker's); default nobody. */
  readonly notifier?: Notifier;
  readonly telemetry?: Telemetry;
  readonly logger?: Logger;
}

/**
 * Cancels a run: `POST /api/v1/runs/{run_id}/cancel` (core `RunStore.requestCancel`).
 * A `queued` run is `cancelled` at once (its queue's job is then skipped by whichever
 * worker takes it: the worker's move to `running` is refused for a final run) and the
 * notifier is told, once; a `running` run keeps running with `cancel_requested_at` set
 * until its worker sees it (core `RunLifecycle`, within its `cancelPollMs`), fires the
 * processor's signal and makes it `cancelled`. Asking again while it stops answers the
 * same. Another account's run answers `not_found` exactly like a missing one; a final run
 * `run_final`. Charged once, to the credential's window (like the run start).
 * Source: docs/CONTRACT.md "Runs lifecycle", "Isolation between accounts".
 */
export class CancelRun {
  private readonly telemetry: Telemetry;
  private readonly logger: Logger;

  constructor(
    private readonly deps: CancelRunDeps,
    private readonly settings: { readonly baseUrl: string },
  ) {
    this.telemetry = deps.telemetry ?? noopTelemetry;
    this.logger = deps.logger ?? silentLogger;
  }

  /**
   * @returns the run as of the answer (answered 200), or an error with its code.
   * @throws DependencyUnavailableError when the run store is unreachable (HTTP 503).
   */
  async execute(input: CancelRunInput): Promise<Result<RunView, DomainError<CancelRunErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const found = input.runId.length <= MAX_RESOURCE_ID_LENGTH ? await this.deps.runs.get(input.runId) : undefined;
    if (found === undefined || found.accountId !== input.principal.accountId) return err(domainError('not_found', 'The run was not found.'));
    const outcome = await this.deps.runs.requestCancel(input.runId, this.deps.clock.now());
    if (outcome.kind === 'missing') return err(domainError('not_found', 'The run was not found.'));
    if (outcome.kind === 'final') return err(domainError('run_final', `The run is already ${outcome.run.status}; only a queued or running run can be cancelled.`));
    if (outcome.kind === 'cancelled') {
      this.telemetry.runFinished('cancelled');
      this.logger.info({ run_id: outcome.run.runId, status: 'cancelled', attempts: outcome.run.attempts }, 'run finished');
      // Not awaited (as StartRun's run.queued): an SMTP server down must not hold the answer
      // for its retries; notify logs its own failures.
      void this.notify(outcome.run);
    }
    return ok(viewOf(outcome.run, this.settings.baseUrl));
  }

  private async notify(run: Parameters<Notifier['runFinished']>[0]): Promise<void> {
    if (this.deps.notifier === undefined) return;
    try {
      await this.deps.notifier.runFinished(run);
    } catch (error) {
      // The Notifier contract: its failures never change the run, nor the answer.
      this.logger.warn({ run_id: run.runId, error_type: errorTypeOf(error) }, 'run notification failed');
    }
  }
}
