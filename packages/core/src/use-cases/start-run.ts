import type { Notifier } from '../ports/notifier.js';
import { validationFailed, type DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { Run } from '../domain/run.js';
import type { RunRequest } from '../domain/run-request.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { RunQueue } from '../ports/run-queue.js';
import { validateStartRunBody, type StartRunBody, type WireBody } from '../schemas/validate.js';
import { visibleAgent } from './find-agent.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';
import { statusUrlOf } from './run-view.js';

/** Input of {@link StartRun}. */
export interface StartRunInput {
  /** The authenticated caller (API key, or OAuth token with `runs:write`). */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** The agent (`agent_id` of the path). */
  readonly agentId: string;
  /** The run request: a typed body, or the unvalidated body of a wire door ({@link WireBody}); validated either way. */
  readonly body: StartRunBody | WireBody;
  /** Id of the request that starts the run (HTTP `X-Request-Id`), stored as the run's `requestId` for its log lines. */
  readonly requestId?: string;
}

/** The run-start result, as on the wire. Source: docs/api-spec.md "Run-start result". */
export interface RunStartResult {
  readonly run_id: string;
  readonly workflow_run_id: string;
  readonly status: 'queued';
  /** `{base_url}/api/v1/runs/{run_id}`; also sent as `Location`. */
  readonly status_url: string;
  readonly message: string;
}

/** Codes {@link StartRun} can produce. */
export type StartRunErrorCode = 'validation_failed' | 'not_found' | 'rate_limited';

/** Settings of {@link StartRun}. */
export interface StartRunSettings {
  /** Absolute base URL without a trailing slash, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /**
   * Told of `run.queued` once the run is recorded (webhook endpoints that subscribe to it),
   * without waiting: the 202 never waits for it, and its failure is its own (logged by the
   * notifier). Default: nobody.
   */
  readonly notifier?: Notifier;
}

function requestOf(body: StartRunBody): RunRequest {
  if ('files' in body) {
    return {
      kind: 'files',
      files: body.files,
      processTogether: body.process_together ?? false,
      backgroundFiles: body.background_files ?? [],
      ...(body.message !== undefined ? { message: body.message } : {}),
      ...(body.notification_email !== undefined ? { notificationEmail: body.notification_email } : {}),
    };
  }
  return { kind: 'message', message: body.message };
}

function describe(request: RunRequest): string {
  if (request.kind === 'message') return 'Run queued with a message.';
  const n = request.files.length;
  const bg = request.backgroundFiles.length;
  return `Run queued with ${n} file${n === 1 ? '' : 's'}${bg > 0 ? ` and ${bg} background file${bg === 1 ? '' : 's'}` : ''}.`;
}

/**
 * Starts an asynchronous run: `POST /api/v1/agents/{agent_id}/run`.
 *
 * Steps: validate the body (Option 1 files or Option 2 message, `validation_failed`);
 * find the agent (`visibleAgent`: `not_found`, the same for another account's); charge the request
 * (`input.meter`: the credential's window and, for a valid request to a visible agent, the
 * agent's window too, 30 / 60 s by default) in one
 * all-or-none charge (`rate_limited`); record and enqueue the run; answer `queued`.
 * Source: docs/api-spec.md "POST /api/v1/agents/{agent_id}/run", "Limits"; docs/CONTRACT.md "Runs".
 *
 * @throws when the queue is unreachable (nothing was promised: the caller answers 5xx).
 */
export class StartRun {
  constructor(
    private readonly agents: AgentCatalog,
    private readonly queue: RunQueue,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly settings: StartRunSettings,
  ) {}

  /** @returns the run-start result (answered 202), or an error with its code. */
  async execute(input: StartRunInput): Promise<Result<RunStartResult, DomainError<StartRunErrorCode>>> {
    const { principal } = input;
    const body = validateStartRunBody(input.body);
    const meter = input.meter ?? UNMETERED;
    if (!body.ok) {
      // Refused without touching the catalog; charged to the credential's window only.
      const refused = await meter.charge();
      return err(refused ?? validationFailed(body.error));
    }
    const agent = await visibleAgent(this.agents, principal, input.agentId);
    const refused = await meter.charge(agent.ok ? input.agentId : undefined);
    if (refused !== undefined) return err(refused);
    if (!agent.ok) return agent;

    const now = this.clock.now();
    const request = requestOf(body.value);
    const run: Run = {
      runId: this.ids.newId(),
      workflowRunId: this.ids.newId(),
      agentId: input.agentId,
      accountId: principal.accountId,
      status: 'queued',
      createdAt: now,
      updatedAt: now,
      request,
      attempts: 0,
      ...(input.requestId !== undefined ? { requestId: input.requestId } : {}),
    };
    await this.queue.enqueue(run);
    // Not awaited: the notifier logs its own failures (core Notifier contract), and the answer does not wait for webhooks.
    this.settings.notifier?.runChanged?.({ type: 'run.queued', at: now, run }).catch(() => undefined);
    return ok({
      run_id: run.runId,
      workflow_run_id: run.workflowRunId,
      status: 'queued',
      status_url: statusUrlOf(this.settings.baseUrl, run.runId),
      message: describe(request),
    });
  }
}
