import type { Notifier } from '../ports/notifier.js';
import { validationFailed, type DomainError, type ValidationIssue } from '../domain/errors.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import { essenceOf, fileStatusAt } from './file-view.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { Run } from '../domain/run.js';
import type { RunRequest } from '../domain/run-request.js';
import type { FileReference } from '../domain/file-reference.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { RunQueue } from '../ports/run-queue.js';
import { validateStartRunBody, type StartRunBody, type WireBody } from '../schemas/validate.js';
import { visibleAgent } from './find-agent.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';
import { statusUrlOf } from './run-view.js';
import type { Building } from '../domain/building.js';

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
  /**
   * Where the file keys of a run request are checked (docs/CONTRACT.md "Files"): each must
   * name a `ready` file of the caller's account whose `file_name` and `content_type` match;
   * the run is then recorded with each file (`FileCatalog.addRun`, which moves its expiry
   * `retentionMs` on). Absent (`files.verify_keys: false`): keys are opaque.
   */
  readonly files?: { readonly catalog: FileCatalog; readonly retentionMs: number };
}

/** The background files of a run request that names none: one frozen array for all (16 bytes a held run fewer). */
const NO_FILES: readonly FileReference[] = Object.freeze([]);

/** The notifier's rejection, dropped (it logs its own failures): one function, not one a run start. */
const ignore = (): undefined => undefined;

function requestOf(body: StartRunBody): RunRequest {
  if ('files' in body) {
    // Optional members assigned, not spread in: a conditional spread copies the object
    // (CopyDataProperties) on every run start.
    const request: Building<Extract<RunRequest, { kind: 'files' }>> = {
      kind: 'files',
      files: body.files,
      processTogether: body.process_together ?? false,
      backgroundFiles: body.background_files ?? NO_FILES,
    };
    if (body.message !== undefined) request.message = body.message;
    if (body.notification_email !== undefined) request.notificationEmail = body.notification_email;
    return request;
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
    const runId = this.ids.newId();
    // Only a run with files and a file catalog claims any (no promise round otherwise).
    if (request.kind === 'files' && this.settings.files !== undefined) {
      const issues = await this.claimFiles(request, this.settings.files, principal.accountId, runId, now);
      if (issues.length > 0) return err(validationFailed(issues));
    }
    const run: Building<Run> = {
      runId,
      workflowRunId: this.ids.newId(),
      agentId: input.agentId,
      accountId: principal.accountId,
      status: 'queued',
      createdAt: now,
      updatedAt: now,
      request,
      attempts: 0,
    };
    if (input.requestId !== undefined) run.requestId = input.requestId;
    await this.queue.enqueue(run);
    // Not awaited: the notifier logs its own failures (core Notifier contract), and the answer does not wait for webhooks.
    this.settings.notifier?.runChanged?.({ type: 'run.queued', at: now, run }).catch(ignore);
    return ok({
      run_id: run.runId,
      workflow_run_id: run.workflowRunId,
      status: 'queued',
      status_url: statusUrlOf(this.settings.baseUrl, run.runId),
      message: describe(request),
    });
  }

  /**
   * Checks every file key of `request` and records the run with each file; the issues
   * found (none: all are the caller's `ready` files, now recorded with the run).
   */
  private async claimFiles(
    request: Extract<RunRequest, { kind: 'files' }>,
    files: NonNullable<StartRunSettings['files']>,
    accountId: string,
    runId: string,
    now: Date,
  ): Promise<ValidationIssue[]> {
    const named = [
      ...request.files.map((file, i) => ({ file, path: `/files/${i}/file_key` })),
      ...request.backgroundFiles.map((file, i) => ({ file, path: `/background_files/${i}/file_key` })),
    ];
    const found = await Promise.all(named.map(({ file }) => files.catalog.get(file.file_key)));
    const issues: ValidationIssue[] = [];
    named.forEach(({ file, path }, i) => {
      const stored = found[i];
      // Another account's file answers exactly like a missing one.
      if (stored?.accountId !== accountId) return void issues.push({ path, message: 'names no file of this account' });
      const status = fileStatusAt(stored, now);
      if (status !== 'ready') return void issues.push({ path, message: `names a file that is ${status}, not ready` });
      if (stored.fileName !== file.file_name) return void issues.push({ path, message: `names a file whose file_name is ${JSON.stringify(stored.fileName)}, not ${JSON.stringify(file.file_name)}` });
      if (stored.contentType !== essenceOf(file.content_type)) {
        issues.push({ path, message: `names a file whose content_type is ${stored.contentType}, not ${essenceOf(file.content_type)}` });
      }
    });
    if (issues.length > 0) return issues;
    const until = new Date(now.getTime() + files.retentionMs);
    const keys = [...new Set(named.map(({ file }) => file.file_key))];
    const recorded = await Promise.all(keys.map((key) => files.catalog.addRun(key, runId, until)));
    // A file that stopped being ready since it was read (deleted, expired): refused like one that never was.
    keys.forEach((key, i) => {
      if (recorded[i] !== undefined) return;
      for (const { file, path } of named) if (file.file_key === key) issues.push({ path, message: 'names a file that is no longer ready' });
    });
    return issues;
  }
}
