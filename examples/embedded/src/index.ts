/**
 * `@svc/example-embedded`: the core's use cases called from another service, without
 * HTTP, with an agent runtime plugged in. `createCore` wires everything; only the
 * credentials and the agent are given, every other port is the core's in-memory default
 * (clock, ids, rate limits, run queue and store). A real embedder passes its own ports
 * (or the Redis-backed ones of the adapter packages) to the same call.
 */
import { randomBytes } from 'node:crypto';
import {
  createCore,
  FINAL_RUN_STATUSES,
  inProcessPrincipal,
  InMemoryAgentCatalog,
  InMemoryCredentialStore,
  RunFailedError,
  sha256Hex,
  type Core,
  type DomainError,
  type Principal,
  type Result,
  type RunProcessor,
  type RunStartResult,
  type RunView,
} from '@svc/core';

/** Account the demo credential and agent belong to. */
export const DEMO_ACCOUNT_ID = 'acct_embedded';
/** Agent the demo starts a run for. */
export const DEMO_AGENT_ID = 'agent_invoices';

/** Options of {@link main}. */
export interface EmbeddedOptions {
  /** Base URL the `status_url` of a run hangs off; default `http://127.0.0.1:8080`. */
  readonly baseUrl?: string;
}

/** What {@link main} produces: the run-start result, then the run as read back once it ended. */
export interface EmbeddedOutput {
  /** The answer of `StartRun` (what `POST .../run` answers in `data`). */
  readonly run_start: RunStartResult;
  /** The answer of `GetRun` once the run is final (what `GET {status_url}` answers in `data`). */
  readonly run: RunView;
  /** The final run started by an in-process caller, without a credential. */
  readonly in_process_run: RunView;
}

/** A use case answered an expected failure the demo did not plan for. */
export class EmbeddedCallError extends Error {
  override readonly name = 'EmbeddedCallError';

  /** @param error - the domain error, whose `detail` is safe to print. */
  constructor(readonly error: DomainError) {
    super(`${error.code}: ${error.detail}`);
  }
}

// An embedder handles every error code; the demo only has the happy path to show.
function valueOrThrow<T>(result: Result<T, DomainError>): T {
  if (!result.ok) throw new EmbeddedCallError(result.error);
  return result.value;
}

/**
 * A stand-in agent runtime: it "reads" each file of a run, reporting progress per file,
 * and answers a made-up total. A file that is not a PDF fails the run at once (a
 * `RunFailedError` is not retried); any other error would be retried.
 */
export const invoiceReader: RunProcessor = {
  async process(run, { signal, reportProgress }) {
    const files = run.request.kind === 'files' ? run.request.files : [];
    for (const [i, file] of files.entries()) {
      signal.throwIfAborted();
      if (file.content_type !== 'application/pdf') throw new RunFailedError(`${file.file_name} is not a PDF.`);
      await reportProgress({ percent: Math.round((100 * (i + 1)) / files.length), message: `Read ${file.file_name}` });
    }
    return { ok: true, output: { files_read: files.length, total: '1234.50', currency: 'EUR' } };
  },
};

/**
 * Reads `runId` until it is final, on the core's clock.
 * @throws Error when it is not final within `deadlineMs` (5000 ms).
 */
async function finalRun(core: Core, principal: Principal, runId: string, deadlineMs = 5000): Promise<RunView> {
  for (const end = Date.now() + deadlineMs; Date.now() < end; await core.clock.sleep(10)) {
    const run = valueOrThrow(await core.getRun.execute({ principal, runId }));
    if (FINAL_RUN_STATUSES.has(run.status)) return run;
  }
  throw new Error(`run ${runId} did not end within ${deadlineMs} ms`);
}

/**
 * Wires the core in one call, plugs {@link invoiceReader} in, authenticates an API key,
 * starts a run with one file, waits for it to succeed and reads it back; then starts a
 * second run as an in-process caller, without any credential.
 *
 * @throws {@link EmbeddedCallError} when a use case refuses (it does not, as wired here).
 */
export async function main(options: EmbeddedOptions = {}): Promise<EmbeddedOutput> {
  // The secret is made here and only its digest is stored, as in any real store.
  const apiKey = `svc-${randomBytes(24).toString('base64url')}`;
  const core = createCore(
    {
      credentials: new InMemoryCredentialStore([{ credentialId: 'key_embedded', accountId: DEMO_ACCOUNT_ID, kind: 'api_key', sha256: sha256Hex(apiKey), scopes: [] }]),
      agents: new InMemoryAgentCatalog([{ agentId: DEMO_AGENT_ID, accountId: DEMO_ACCOUNT_ID, name: 'Invoice reader' }]),
    },
    // This service keeps its documents in its own store and passes their keys as they are:
    // run starts do not look them up among files uploaded through the API (docs/CONTRACT.md "Files").
    { baseUrl: options.baseUrl ?? 'http://127.0.0.1:8080', files: { verifyKeys: false } },
  );
  await core.startWorker(invoiceReader);
  try {
    // A caller with a credential: authenticated, and charged to its rate-limit windows.
    const caller = valueOrThrow(await core.authenticate.execute({ apiKeys: [apiKey], authorizations: [], operation: 'startRun' }));
    const runStart = valueOrThrow(
      await core.startRun.execute({
        principal: caller,
        meter: core.rateLimits.meterFor(caller),
        agentId: DEMO_AGENT_ID,
        body: {
          files: [{ file_key: 'uploads/invoice-2026-001.pdf', file_name: 'invoice-2026-001.pdf', content_type: 'application/pdf' }],
          message: 'Extract the invoice total and due date.',
        },
      }),
    );
    const run = await finalRun(core, caller, runStart.run_id);

    // A caller inside this service: no credential, no rate limit (no meter given).
    const service = inProcessPrincipal(DEMO_ACCOUNT_ID, 'nightly-job');
    const second = valueOrThrow(await core.startRun.execute({ principal: service, agentId: DEMO_AGENT_ID, body: { message: 'Summarise last month.' } }));
    return { run_start: runStart, run, in_process_run: await finalRun(core, service, second.run_id) };
  } finally {
    await core.close();
  }
}
