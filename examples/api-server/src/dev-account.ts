import { randomBytes } from 'node:crypto';
import { sha256Hex } from '@svc/core';
import type { AccountSettings } from './settings.js';

/** Agent id of the development account. */
export const DEV_AGENT_ID = 'agent_demo';
/** The development account's `sqlserver` connection (backed by in-memory demo tables). */
export const DEV_SQLSERVER_CONNECTION_ID = '6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f';
/** The development account's `postgresql` connection (writes refused: 400). */
export const DEV_POSTGRESQL_CONNECTION_ID = '0b7e6c5d-4a3b-4c2d-9e1f-0a9b8c7d6e5f';

/** A development account with fresh secrets, shown once at start. */
export interface DevAccount {
  readonly account: AccountSettings;
  readonly apiKey: string;
  readonly accessToken: string;
}

/** A fresh secret with `prefix` and 32 random bytes (256 bits) in base64url. */
export function newSecret(prefix: 'svc-' | 'svcpt_'): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/**
 * The account served when no configuration file is given: a fresh API key and OAuth
 * access token (scopes runs:write and runs:read, valid 24 h), the demo agent, a
 * `sqlserver` connection on in-memory demo tables and a `postgresql` connection.
 */
export function devAccount(now: Date = new Date()): DevAccount {
  const apiKey = newSecret('svc-');
  const accessToken = newSecret('svcpt_');
  return {
    apiKey,
    accessToken,
    account: {
      id: 'acct_dev',
      apiKeys: [{ id: 'key_dev', sha256: sha256Hex(apiKey), scopes: [] }],
      oauthTokens: [
        { id: 'tok_dev', sha256: sha256Hex(accessToken), scopes: ['runs:write', 'runs:read'], expiresAt: new Date(now.getTime() + 24 * 3600 * 1000) },
      ],
      agents: [{ id: DEV_AGENT_ID, name: 'Demo agent', description: 'The demo processor: finishes a run in about half a second; a message containing [fail] ends it failed.' }],
      connections: [
        { id: DEV_SQLSERVER_CONNECTION_ID, type: 'sqlserver', name: 'Demo SQL Server (in memory)' },
        { id: DEV_POSTGRESQL_CONNECTION_ID, type: 'postgresql', name: 'Demo PostgreSQL (read only)' },
      ],
      webhookEndpoints: [],
    },
  };
}
