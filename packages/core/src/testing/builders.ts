import type { Agent } from '../domain/agent.js';
import type { Connection } from '../domain/connection.js';
import type { FileReference } from '../domain/file-reference.js';
import type { Principal } from '../domain/principal.js';
import type { Run } from '../domain/run.js';
import type { StoredCredential } from '../ports/credential-store.js';
import { sha256Hex } from '../use-cases/authenticate.js';

/** Account id used by the builders unless told otherwise. */
export const ACCOUNT_A = 'acct_a';
/** A second account, for "not visible to the caller" cases. */
export const ACCOUNT_B = 'acct_b';

/** A valid file reference; override any member. */
export function aFileReference(overrides: Partial<FileReference> = {}): FileReference {
  return { file_key: 'uploads/report.pdf', file_name: 'report.pdf', content_type: 'application/pdf', ...overrides };
}

/** `n` distinct valid file references. */
export function fileReferences(n: number): FileReference[] {
  return Array.from({ length: n }, (_, i) => aFileReference({ file_key: `uploads/f${i}.pdf`, file_name: `f${i}.pdf` }));
}

/** A `sqlserver` connection of {@link ACCOUNT_A}; override any member. */
export function aConnection(overrides: Partial<Connection> = {}): Connection {
  return { connectionId: '3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11', accountId: ACCOUNT_A, type: 'sqlserver', ...overrides };
}

/** An agent of {@link ACCOUNT_A}; override any member. */
export function anAgent(overrides: Partial<Agent> = {}): Agent {
  return { agentId: 'agent_demo', accountId: ACCOUNT_A, ...overrides };
}

/** An API-key principal of {@link ACCOUNT_A}; override any member. */
export function aPrincipal(overrides: Partial<Principal> = {}): Principal {
  return { accountId: ACCOUNT_A, credentialId: 'key_1', kind: 'api_key', scopes: new Set(), ...overrides };
}

/**
 * A stored credential for `secret` (its SHA-256 digest); kind from the prefix.
 * @param secret - e.g. `svc-test-key` or `svcpt_test-token`.
 */
export function aStoredCredential(secret: string, overrides: Partial<StoredCredential> = {}): StoredCredential {
  return {
    credentialId: `cred_${secret.slice(-6)}`,
    accountId: ACCOUNT_A,
    kind: secret.startsWith('svcpt_') ? 'oauth' : 'api_key',
    sha256: sha256Hex(secret),
    scopes: [],
    ...overrides,
  };
}

/** A queued run of {@link ACCOUNT_A}; override any member. */
export function aRun(overrides: Partial<Run> = {}): Run {
  const at = new Date('2026-01-01T00:00:00Z');
  return {
    runId: '00000000-0000-4000-8000-0000000000aa',
    workflowRunId: '00000000-0000-4000-8000-0000000000bb',
    agentId: 'agent_demo',
    accountId: ACCOUNT_A,
    status: 'queued',
    createdAt: at,
    updatedAt: at,
    request: { kind: 'message', message: 'hello' },
    attempts: 0,
    ...overrides,
  };
}
