// The API server the client and CLI tests call: examples/api-server started as a process
// (from source, as the end-to-end suites start it) on free loopback ports, with one account
// whose secrets only these tests know, the demo processor as its worker, and a per-agent
// run limit small enough to meet a 429 within a test.
import { createHash } from 'node:crypto';
import { leakScan } from '../../../../tools/test-support/leak-scan.js';
import { startInstance, tempDir, type Child } from '../../../../examples/api-server/test/support/server-process.js';

/** Secrets of the test account; the configuration holds only their SHA-256 digests. */
export const API_KEY = 'svc-client-tests-key-4c7d2e9a1b3f5e8d0a6c';
export const ACCESS_TOKEN = 'svcpt_client-tests-token-8e1f3a5c7b9d2e4f6a0b';
export const OTHER_KEY = 'svc-client-tests-other-key-1a2b3c4d5e6f7a8b';
leakScan.registerCredential(API_KEY, 'API key secret (client tests)');
leakScan.registerCredential(ACCESS_TOKEN, 'OAuth token secret (client tests)');
leakScan.registerCredential(OTHER_KEY, 'API key secret (client tests)');

/** The account's agent for ordinary runs. */
export const AGENT = 'agent_client';
/** An agent used only to meet the per-agent limit (its window is apart from {@link AGENT}'s). */
export const LIMITED_AGENT = 'agent_limited';
/** An agent used only by the CLI tests, so that their runs do not share {@link AGENT}'s window. */
export const CLI_AGENT = 'agent_cli';
/**
 * An agent used only by the runs started with the access token, so that they do not share
 * {@link AGENT}'s window (a start there right after the API-key runs waited ~3 s for a 429's Retry-After).
 */
export const TOKEN_AGENT = 'agent_token';
/** A `sqlserver` connection on the in-memory demo tables (`dbo.orders`: id, sku, qty, note, status). */
export const SQL_CONNECTION = '5b2c7e1a-9d4f-4a3b-8e6c-1f0a2b3c4d5e';
/** A `postgresql` connection: writes answer 400 `writes_not_supported`. */
export const PG_CONNECTION = 'e4d3c2b1-a0f9-4e8d-b7c6-5a4b3c2d1e0f';
/** Run starts per agent per window: the second start within {@link AGENT_WINDOW_SECONDS} answers 429. */
export const AGENT_REQUESTS = 2;
export const AGENT_WINDOW_SECONDS = 3;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A running API server and what stops it. */
export interface ApiServer {
  /** `{base_url}`: `http://127.0.0.1:<port>`. */
  readonly base: string;
  readonly child: Child;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts the server and resolves once `/readyz` answers 200.
 *
 * @param agentRequests - run starts per agent per {@link AGENT_WINDOW_SECONDS}; default {@link AGENT_REQUESTS}.
 */
export async function startApiServer(agentRequests = AGENT_REQUESTS): Promise<ApiServer> {
  const dir = await tempDir();
  try {
    const child = await startInstance(dir.path, 'main', {
      rate_limits: { credential: { requests: 600, window_seconds: 60 }, agent: { requests: agentRequests, window_seconds: AGENT_WINDOW_SECONDS } },
      worker: { enabled: true },
      accounts: [
        {
          id: 'acct_client',
          api_keys: [{ id: 'key_client', sha256: sha256(API_KEY) }],
          oauth_tokens: [{ id: 'tok_client', sha256: sha256(ACCESS_TOKEN), scopes: ['runs:write', 'runs:read'], expires_at: '2099-01-01T00:00:00Z' }],
          agents: [{ id: AGENT }, { id: LIMITED_AGENT }, { id: CLI_AGENT }, { id: TOKEN_AGENT }],
          connections: [
            { id: SQL_CONNECTION, type: 'sqlserver' },
            { id: PG_CONNECTION, type: 'postgresql' },
          ],
        },
        { id: 'acct_other', api_keys: [{ id: 'key_other', sha256: sha256(OTHER_KEY) }], agents: [], connections: [] },
      ],
    });
    return {
      base: child.base,
      child,
      async stop() {
        await child.kill();
        await dir.remove();
      },
    };
  } catch (error) {
    await dir.remove();
    throw error;
  }
}
