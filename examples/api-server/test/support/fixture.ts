import { sha256Hex } from '@svc/core';
import { leakScan } from '../../../../tools/test-support/leak-scan.js';
import { freePort } from './server-process.js';

/** Secrets the tests present; the configuration holds only their SHA-256 digests. */
export const SECRETS = {
  keyA: 'svc-e2e-account-a-key-1-Zq8v0Jm2xT4nW7rB',
  keyA2: 'svc-e2e-account-a-key-2-Lp3sY6cH9dK1fG5u',
  keyB: 'svc-e2e-account-b-key-1-Qw2eR4tY6uI8oP0a',
  tokenWrite: 'svcpt_e2e-token-runs-write-Aa1Bb2Cc3Dd4Ee5F',
  tokenNoScope: 'svcpt_e2e-token-no-scope-Gg6Hh7Ii8Jj9Kk0L',
  tokenExpired: 'svcpt_e2e-token-expired-Mm1Nn2Oo3Pp4Qq5R',
} as const;
for (const secret of Object.values(SECRETS)) leakScan.registerCredential(secret, secret.startsWith('svcpt_') ? 'OAuth token secret (fixture)' : 'API key secret (fixture)');

/** Account A: a `sqlserver` connection on the in-memory demo table, and a `postgresql` one. */
export const SQL_A = '3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11';
export const PG_A = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
/** Account B's `sqlserver` connection. */
export const SQL_B = 'c0ffee00-1234-4abc-8def-0123456789ab';
/** Agents of account A: one per concern so that the per-agent windows stay apart. */
export const AGENTS = { main: 'agent_main', bounds: 'agent_bounds', limit: 'agent_limit', spare: 'agent_spare' } as const;
/** Account B's agent. */
export const AGENT_B = 'agent_b';

/** Ports and URLs of one server. */
export interface Addresses {
  readonly port: number;
  readonly egressPort: number;
  readonly url: string;
  readonly egressUrl: string;
}

/** Two free ports, and the URLs that match them. */
export async function addresses(): Promise<Addresses> {
  const port = await freePort();
  let egressPort = await freePort();
  while (egressPort === port) egressPort = await freePort();
  return { port, egressPort, url: `http://127.0.0.1:${port}`, egressUrl: `http://127.0.0.1:${egressPort}` };
}

/** Index overrides the test expects to see in `GET /api/v1`. */
export const INDEX = {
  name: 'E2E Agent Runs API',
  documentation_url: 'https://docs.e2e.example/api',
  access_request_url: 'https://e2e.example/access',
  trial: { available: true, duration_days: 14, invite_required: true },
  public_sandbox_available: false,
} as const;

/** The configuration file of the e2e server (see config.example.yaml). */
export function e2eConfig(a: Addresses, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    base_url: a.url,
    listen: { host: '127.0.0.1', port: a.port },
    egress: { url: a.egressUrl, listen: { host: '127.0.0.1', port: a.egressPort } },
    rate_limits: { credential: { requests: 600, window_seconds: 60 }, agent: { requests: 30, window_seconds: 60 } },
    worker: { enabled: false },
    log_level: 'info',
    shutdown_grace_ms: 10_000,
    index: INDEX,
    // Runs here name made-up file keys (the shapes of a run start): files.test.ts checks real keys.
    files: { verify_keys: false },
    accounts: [
      {
        id: 'acct_a',
        api_keys: [
          { id: 'key_a1', sha256: sha256Hex(SECRETS.keyA) },
          { id: 'key_a2', sha256: sha256Hex(SECRETS.keyA2) },
        ],
        oauth_tokens: [
          { id: 'tok_write', sha256: sha256Hex(SECRETS.tokenWrite), scopes: ['runs:write', 'runs:read'], expires_at: '2099-01-01T00:00:00Z' },
          { id: 'tok_noscope', sha256: sha256Hex(SECRETS.tokenNoScope), scopes: [] },
          { id: 'tok_expired', sha256: sha256Hex(SECRETS.tokenExpired), scopes: ['runs:write'], expires_at: '2020-01-01T00:00:00Z' },
        ],
        agents: Object.values(AGENTS).map((id) => ({ id })),
        connections: [
          { id: SQL_A, type: 'sqlserver' },
          { id: PG_A, type: 'postgresql' },
        ],
      },
      {
        id: 'acct_b',
        api_keys: [{ id: 'key_b1', sha256: sha256Hex(SECRETS.keyB) }],
        agents: [{ id: AGENT_B }],
        connections: [{ id: SQL_B, type: 'sqlserver' }],
      },
    ],
    ...extra,
  };
}
