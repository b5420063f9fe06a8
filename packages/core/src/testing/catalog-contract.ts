import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Agent } from '../domain/agent.js';
import type { Connection } from '../domain/connection.js';
import type { Page, PageRequest } from '../domain/page.js';
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
 * Every item of a list, page after page of `limit` items, following each page's `next`;
 * also checks that every page but the last is full and has a `next`, and the last has none.
 */
async function allPages<T>(list: (page: PageRequest) => Promise<Page<T>>, limit: number): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let after: string | undefined;
  for (let pages = 1; pages <= 1000; pages += 1) {
    const page = await list(after === undefined ? { limit } : { limit, after });
    assert.ok(page.items.length <= limit, `page ${pages} holds at most ${limit} items`);
    items.push(...page.items);
    if (page.next === undefined) return { items, pages };
    assert.equal(page.items.length, limit, `page ${pages} has a next page, so it is full`);
    assert.equal(typeof page.next, 'string');
    after = page.next;
  }
  throw new Error('more than 1000 pages: next never ends');
}

/** JavaScript's string order, the order the listing ports promise. */
const ascending = (values: readonly string[]): string[] => [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The behaviour every catalog shares: core's `CredentialStore`, `AgentCatalog` and
 * `ConnectionCatalog` (see each port's contract). Unknown keys answer `undefined`, never
 * an error; stored entries come back with every member the ports name (expiry to the
 * millisecond, scopes as a set); revoked credentials are absent; every account's entries
 * are found with their own account (the use cases check visibility, docs/CONTRACT.md
 * "Isolation between accounts"); and a change is seen by the next lookup, whatever the
 * earlier ones answered (an adapter that caches must not serve a stale hit or miss).
 * Listing (`listByAccount`): only that account's entries, in ascending id order (lower-case
 * UUIDs for connections), a page of at most `limit` at a time with `next` only while more
 * follow, the next page after `next` (or after any position, existing or not), an empty
 * page for an account without entries, and a change seen by the next list.
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

    it("lists an account's agents in ascending id order, page by page to the last, with name and description; never another account's", async function () {
      const mine: Agent[] = [
        { agentId: contractId('agent'), accountId: accountA, name: 'Listed one', description: 'Reads invoices.' },
        { agentId: contractId('agent'), accountId: accountA },
        { agentId: contractId('agent'), accountId: accountA, name: 'Listed three' },
        { agentId: contractId('agent'), accountId: accountA },
        { agentId: contractId('agent'), accountId: accountA, description: 'No name, a description.' },
      ];
      const theirs: Agent[] = [
        { agentId: contractId('agent'), accountId: accountB },
        { agentId: contractId('agent'), accountId: accountB },
      ];
      await h.add({ agents: [theirs[0] as Agent, ...mine, theirs[1] as Agent] });
      const order = ascending(mine.map((a) => a.agentId));
      for (const limit of [1, 2, 5, 100]) {
        const { items, pages } = await allPages((page) => h.agents.listByAccount(accountA, page), limit);
        assert.deepEqual(items.map((a) => a.agentId), order, `limit ${limit}`);
        assert.equal(pages, Math.max(1, Math.ceil(mine.length / limit)), `pages at limit ${limit}`);
      }
      const listed = (await h.agents.listByAccount(accountA, { limit: 100 })).items;
      for (const a of listed) {
        const given = mine.find((m) => m.agentId === a.agentId);
        assert.deepEqual({ agentId: a.agentId, accountId: a.accountId, name: a.name, description: a.description }, { name: undefined, description: undefined, ...given });
      }
      const b = await allPages((page) => h.agents.listByAccount(accountB, page), 1);
      assert.deepEqual(b.items.map((a) => a.agentId), ascending(theirs.map((a) => a.agentId)));
    });

    it('lists agents after any position, one that names no agent too; an account without agents gets an empty last page', async function () {
      const mine: Agent[] = [0, 1, 2, 3].map(() => ({ agentId: contractId('agent'), accountId: accountA }));
      await h.add({ agents: mine });
      const order = ascending(mine.map((a) => a.agentId));
      // Between the second and the third id ("!" sorts before every character of an id here).
      const after = `${order[1] ?? ''}!`;
      const rest = await h.agents.listByAccount(accountA, { limit: 10, after });
      assert.deepEqual(rest.items.map((a) => a.agentId), order.slice(2));
      assert.equal(rest.next, undefined);
      // A position a client forged, with characters no id holds (a NUL, which PostgreSQL's text cannot hold either).
      const forged = await h.agents.listByAccount(accountA, { limit: 10, after: `${order[1] ?? ''}\u0000\u{1F600}` });
      assert.deepEqual(forged.items.map((a) => a.agentId), order.slice(2));
      assert.deepEqual((await h.connections.listByAccount(accountA, { limit: 10, after: '\u0000' })).items, []);
      assert.deepEqual(await h.agents.listByAccount(accountB, { limit: 20 }), { items: [] });
      assert.deepEqual(await h.agents.listByAccount(contractId('acct_none'), { limit: 20 }), { items: [] });
    });

    it('lists an agent added after a list missed it (no stale list)', async function () {
      const first: Agent = { agentId: contractId('agent'), accountId: accountA };
      await h.add({ agents: [first] });
      assert.deepEqual((await h.agents.listByAccount(accountA, { limit: 20 })).items.map((a) => a.agentId), [first.agentId]);
      const second: Agent = { agentId: contractId('agent'), accountId: accountA };
      await h.add({ agents: [second] });
      assert.deepEqual((await h.agents.listByAccount(accountA, { limit: 20 })).items.map((a) => a.agentId), ascending([first.agentId, second.agentId]));
    });

    it("lists an account's connections in ascending lower-case id order, page by page to the last, with type and name; never another account's", async function () {
      const mine: Connection[] = [
        { connectionId: randomUUID(), accountId: accountA, type: 'sqlserver', name: 'Warehouse' },
        { connectionId: randomUUID().toUpperCase(), accountId: accountA, type: 'postgresql' },
        { connectionId: randomUUID(), accountId: accountA, type: 'sqlserver' },
        { connectionId: randomUUID(), accountId: accountA, type: 'snowflake', name: 'Analytics' },
        { connectionId: randomUUID(), accountId: accountA, type: 'sqlserver' },
      ];
      const theirs: Connection[] = [{ connectionId: randomUUID(), accountId: accountB, type: 'sqlserver' }];
      await h.add({ connections: [...mine, ...theirs] });
      const order = ascending(mine.map((c) => c.connectionId.toLowerCase()));
      for (const limit of [1, 2, 5, 100]) {
        const { items, pages } = await allPages((page) => h.connections.listByAccount(accountA, page), limit);
        assert.deepEqual(items.map((c) => c.connectionId.toLowerCase()), order, `limit ${limit}`);
        assert.equal(pages, Math.max(1, Math.ceil(mine.length / limit)), `pages at limit ${limit}`);
      }
      for (const c of (await h.connections.listByAccount(accountA, { limit: 100 })).items) {
        const given = mine.find((m) => m.connectionId.toLowerCase() === c.connectionId.toLowerCase());
        assert.deepEqual({ accountId: c.accountId, type: c.type, name: c.name }, { accountId: accountA, type: given?.type, name: given?.name });
      }
      const after = order[2] ?? '';
      assert.deepEqual((await h.connections.listByAccount(accountA, { limit: 100, after })).items.map((c) => c.connectionId.toLowerCase()), order.slice(3));
      assert.deepEqual((await h.connections.listByAccount(accountB, { limit: 100 })).items.map((c) => c.connectionId.toLowerCase()), [theirs[0]?.connectionId]);
      assert.deepEqual(await h.connections.listByAccount(contractId('acct_none'), { limit: 20 }), { items: [] });
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
