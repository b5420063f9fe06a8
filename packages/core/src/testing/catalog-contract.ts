import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Agent } from '../domain/agent.js';
import type { Connection } from '../domain/connection.js';
import { SCOPE_RUNS_READ, SCOPE_RUNS_WRITE } from '../domain/principal.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { CredentialStore, StoredCredential } from '../ports/credential-store.js';
import { InMemoryAgentCatalog, InMemoryConnectionCatalog, InMemoryCredentialStore } from '../memory/in-memory-catalogs.js';
import { sha256Hex } from '../use-cases/authenticate.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What a {@link CatalogHarness} is told to put into its catalog. */
export interface CatalogEntries {
  /** Credentials to store as they are (digest, kind, scopes, expiry; expired ones too). */
  readonly credentials?: readonly StoredCredential[];
  readonly agents?: readonly Agent[];
  readonly connections?: readonly Connection[];
}

/**
 * What the {@link catalogContract} needs: the three read ports of one catalog, and a way
 * to change what it holds the way its own administration does.
 */
export interface CatalogHarness {
  readonly credentials: CredentialStore;
  readonly agents: AgentCatalog;
  readonly connections: ConnectionCatalog;
  /**
   * Puts `entries` into the catalog, creating the accounts they name when the catalog
   * needs accounts to exist first. Every id and digest the suite passes is fresh (never
   * used before in this catalog), so a harness may share one catalog between tests.
   * Once the promise resolves, the ports' lookups see the entries.
   */
  add(entries: CatalogEntries): Promise<void>;
  /** Revokes the credential with this id; once the promise resolves, lookups no longer find it. */
  revoke(credentialId: string): Promise<void>;
  /** Frees what the harness made (clients, schemas). */
  close(): Promise<void>;
}

let issued = 0;
/** An id no other test of this process uses (ids are unique across a whole catalog). */
function contractId(what: string): string {
  issued += 1;
  return `catalog_contract_${what}_${Date.now().toString(36)}_${issued}`;
}

/** A fresh secret with an API key's or access token's prefix (docs/api-spec.md "Authentication"). */
function freshSecret(prefix: 'svc-' | 'svcpt_'): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** The members the ports promise, so that an adapter may return more (timestamps, names). */
function credentialView(c: StoredCredential | undefined): unknown {
  if (c === undefined) return undefined;
  return { credentialId: c.credentialId, accountId: c.accountId, kind: c.kind, sha256: c.sha256, scopes: [...c.scopes].sort(), expiresAt: c.expiresAt?.getTime() };
}

/**
 * The behaviour every catalog shares: core's `CredentialStore`, `AgentCatalog` and
 * `ConnectionCatalog` (see each port's contract). Unknown keys answer `undefined`, never
 * an error; stored entries come back with every member the ports name (expiry to the
 * millisecond, scopes as a set); revoked credentials are absent; every account's entries
 * are found with their own account (the use cases check visibility, docs/CONTRACT.md
 * "Isolation between accounts"); and a change is seen by the next lookup, whatever the
 * earlier ones answered (an adapter that caches must not serve a stale hit or miss).
 * Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a harness for each test (closed after it).
 * @param runner - the runner to register with: `{ describe, it, beforeEach, afterEach }`
 *   from `node:test`, mocha or another BDD runner ({@link TestRunner}); default mocha's
 *   globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function catalogContract(name: string, makeHarness: () => Promise<CatalogHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'catalogContract');
  describe(`Catalog contract: ${name}`, function () {
    let h: CatalogHarness;
    let accountA: string;
    let accountB: string;
    beforeEach(async function () {
      h = await makeHarness();
      accountA = contractId('acct_a');
      accountB = contractId('acct_b');
    });
    afterEach(async function () {
      await h.close();
    });

    function anApiKey(accountId: string): { secret: string; stored: StoredCredential } {
      const secret = freshSecret('svc-');
      return { secret, stored: { credentialId: contractId('key'), accountId, kind: 'api_key', sha256: sha256Hex(secret), scopes: [] } };
    }

    it('answers undefined for an unknown digest, and for a value that is no digest at all', async function () {
      assert.equal(await h.credentials.findByDigest(sha256Hex(freshSecret('svc-'))), undefined);
      assert.equal(await h.credentials.findByDigest('not-a-digest'), undefined);
      assert.equal(await h.credentials.findByDigest(''), undefined);
    });

    it('finds an API key by the digest of its secret: id, account, kind, digest, no scopes, no expiry', async function () {
      const key = anApiKey(accountA);
      await h.add({ credentials: [key.stored] });
      const found = await h.credentials.findByDigest(sha256Hex(key.secret));
      assert.deepEqual(credentialView(found), credentialView(key.stored));
      assert.equal(found?.expiresAt, undefined);
    });

    it('finds an OAuth access token with its scopes and its expiry to the millisecond, an expired one too', async function () {
      const live = freshSecret('svcpt_');
      const expired = freshSecret('svcpt_');
      const tokens: StoredCredential[] = [
        { credentialId: contractId('tok'), accountId: accountA, kind: 'oauth', sha256: sha256Hex(live), scopes: [SCOPE_RUNS_WRITE, SCOPE_RUNS_READ], expiresAt: new Date(Date.now() + 3_600_123) },
        // Expired tokens stay findable: Authenticate answers `expired_credential`, not `invalid_credential`.
        { credentialId: contractId('tok'), accountId: accountA, kind: 'oauth', sha256: sha256Hex(expired), scopes: [SCOPE_RUNS_READ], expiresAt: new Date(Date.now() - 60_007) },
      ];
      await h.add({ credentials: tokens });
      assert.deepEqual(credentialView(await h.credentials.findByDigest(sha256Hex(live))), credentialView(tokens[0]));
      assert.deepEqual(credentialView(await h.credentials.findByDigest(sha256Hex(expired))), credentialView(tokens[1]));
    });

    it('finds the credentials of every account, each with its own account', async function () {
      const a = anApiKey(accountA);
      const b = anApiKey(accountB);
      await h.add({ credentials: [a.stored, b.stored] });
      assert.equal((await h.credentials.findByDigest(sha256Hex(a.secret)))?.accountId, accountA);
      assert.equal((await h.credentials.findByDigest(sha256Hex(b.secret)))?.accountId, accountB);
    });

    it('no longer finds a revoked credential, even one found just before; the account keeps its others', async function () {
      const revoked = anApiKey(accountA);
      const kept = anApiKey(accountA);
      await h.add({ credentials: [revoked.stored, kept.stored] });
      assert.equal((await h.credentials.findByDigest(sha256Hex(revoked.secret)))?.credentialId, revoked.stored.credentialId);
      await h.revoke(revoked.stored.credentialId);
      assert.equal(await h.credentials.findByDigest(sha256Hex(revoked.secret)), undefined);
      assert.equal((await h.credentials.findByDigest(sha256Hex(kept.secret)))?.credentialId, kept.stored.credentialId);
    });

    it('finds a credential added after a lookup of its digest missed (no stale miss)', async function () {
      const key = anApiKey(accountA);
      assert.equal(await h.credentials.findByDigest(key.stored.sha256), undefined);
      await h.add({ credentials: [key.stored] });
      assert.equal((await h.credentials.findByDigest(key.stored.sha256))?.credentialId, key.stored.credentialId);
    });

    it('answers undefined for an unknown agent id', async function () {
      assert.equal(await h.agents.findById(contractId('agent_unknown')), undefined);
    });

    it('finds agents with their account and name (absent when it has none), in every account', async function () {
      const named: Agent = { agentId: contractId('agent'), accountId: accountA, name: 'Contract agent' };
      const unnamed: Agent = { agentId: contractId('agent'), accountId: accountB };
      await h.add({ agents: [named, unnamed] });
      const a = await h.agents.findById(named.agentId);
      assert.deepEqual({ agentId: a?.agentId, accountId: a?.accountId, name: a?.name }, { ...named });
      const b = await h.agents.findById(unnamed.agentId);
      assert.deepEqual({ agentId: b?.agentId, accountId: b?.accountId, name: b?.name }, { ...unnamed, name: undefined });
    });

    it('finds an agent added after a lookup of its id missed (no stale miss)', async function () {
      const agent: Agent = { agentId: contractId('agent'), accountId: accountA };
      assert.equal(await h.agents.findById(agent.agentId), undefined);
      await h.add({ agents: [agent] });
      assert.equal((await h.agents.findById(agent.agentId))?.accountId, accountA);
    });

    it('answers undefined for an unknown connection UUID, and for an id that is no UUID', async function () {
      assert.equal(await h.connections.findById(randomUUID()), undefined);
      assert.equal(await h.connections.findById('not-a-uuid'), undefined);
      assert.equal(await h.connections.findById(''), undefined);
    });

    it('finds connections with their account and type, in every account, by the UUID in any case', async function () {
      const writable: Connection = { connectionId: randomUUID(), accountId: accountA, type: 'sqlserver' };
      const other: Connection = { connectionId: randomUUID(), accountId: accountB, type: 'postgresql' };
      await h.add({ connections: [writable, other] });
      for (const c of [writable, other]) {
        for (const asked of [c.connectionId, c.connectionId.toUpperCase()]) {
          const found = await h.connections.findById(asked);
          assert.deepEqual({ connectionId: found?.connectionId.toLowerCase(), accountId: found?.accountId, type: found?.type }, c, asked);
        }
      }
    });

    it('finds a connection added after a lookup of its id missed (no stale miss)', async function () {
      const connection: Connection = { connectionId: randomUUID(), accountId: accountA, type: 'sqlserver' };
      assert.equal(await h.connections.findById(connection.connectionId), undefined);
      await h.add({ connections: [connection] });
      assert.equal((await h.connections.findById(connection.connectionId))?.accountId, accountA);
    });
  });
}

/**
 * A {@link CatalogHarness} over fresh in-memory catalogs (`InMemoryCredentialStore`,
 * `InMemoryAgentCatalog`, `InMemoryConnectionCatalog`): the embedded default and the fakes,
 * run through {@link catalogContract} under any runner.
 */
export function inMemoryCatalogHarness(): Promise<CatalogHarness> {
  const credentials = new InMemoryCredentialStore();
  const agents = new InMemoryAgentCatalog();
  const connections = new InMemoryConnectionCatalog();
  return Promise.resolve({
    credentials,
    agents,
    connections,
    add: (entries) => {
      for (const c of entries.credentials ?? []) credentials.add(c);
      for (const a of entries.agents ?? []) agents.add(a);
      for (const c of entries.connections ?? []) connections.add(c);
      return Promise.resolve();
    },
    revoke: (credentialId) => Promise.resolve(credentials.revoke(credentialId)),
    close: () => Promise.resolve(),
  });
}
