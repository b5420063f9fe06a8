/**
 * `@svc/example-embedded`: the core's use cases called from another service, without
 * HTTP. Everything is wired by hand with the in-memory adapters the core ships; a real
 * embedder swaps in its own credential store, agent catalog, queue and limiter.
 */
import { randomBytes } from 'node:crypto';
import {
  Authenticate,
  GetRun,
  InMemoryAgentCatalog,
  InMemoryCredentialStore,
  InMemoryRateLimitStore,
  InMemoryRunQueue,
  InMemoryRunStore,
  RandomIdGenerator,
  RateLimitPolicy,
  sha256Hex,
  StartRun,
  SystemClock,
  type DomainError,
  type Result,
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

/** What {@link main} produces: the run-start result, then the run as read back. */
export interface EmbeddedOutput {
  /** The answer of `StartRun` (what `POST .../run` answers in `data`). */
  readonly run_start: RunStartResult;
  /** The answer of `GetRun` for that run (what `GET {status_url}` answers in `data`). */
  readonly run: RunView;
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
 * Wires the core with in-memory adapters, authenticates an API key, starts a run with
 * one file and reads it back.
 *
 * @throws {@link EmbeddedCallError} when a use case refuses (it does not, as wired here).
 */
export async function main(options: EmbeddedOptions = {}): Promise<EmbeddedOutput> {
  const baseUrl = options.baseUrl ?? 'http://127.0.0.1:8080';
  const clock = new SystemClock();

  // The secret is made here and only its digest is stored, as in any real store.
  const apiKey = `svc-${randomBytes(24).toString('base64url')}`;
  const credentials = new InMemoryCredentialStore([
    { credentialId: 'key_embedded', accountId: DEMO_ACCOUNT_ID, kind: 'api_key', sha256: sha256Hex(apiKey), scopes: [] },
  ]);
  const agents = new InMemoryAgentCatalog([{ agentId: DEMO_AGENT_ID, accountId: DEMO_ACCOUNT_ID, name: 'Invoice reader' }]);
  const rateLimits = new RateLimitPolicy(new InMemoryRateLimitStore(clock), undefined, clock);
  const runs = new InMemoryRunStore();
  const queue = new InMemoryRunQueue(runs);

  const authenticate = new Authenticate(credentials, clock);
  const startRun = new StartRun(agents, queue, new RandomIdGenerator(), clock, { baseUrl });
  const getRun = new GetRun(runs, { baseUrl });

  const starter = valueOrThrow(await authenticate.execute({ apiKeys: [apiKey], authorizations: [], operation: 'startRun' }));
  const started = await startRun.execute({
    principal: starter,
    meter: rateLimits.meterFor(starter),
    agentId: DEMO_AGENT_ID,
    body: {
      files: [{ file_key: 'uploads/invoice-2026-001.pdf', file_name: 'invoice-2026-001.pdf', content_type: 'application/pdf' }],
      message: 'Extract the invoice total and due date.',
    },
  });
  const runStart = valueOrThrow(started);

  const reader = valueOrThrow(await authenticate.execute({ apiKeys: [apiKey], authorizations: [], operation: 'getRun' }));
  const read = await getRun.execute({ principal: reader, meter: rateLimits.meterFor(reader), runId: runStart.run_id });
  return { run_start: runStart, run: valueOrThrow(read) };
}
