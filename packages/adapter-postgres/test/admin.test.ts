import { randomBytes, randomUUID } from 'node:crypto';
import { sha256Hex, SUPPORTED_SCOPES } from '@svc/core';
import { expect } from 'chai';
import {
  CatalogDuplicateError,
  CatalogError,
  CatalogInUseError,
  CatalogInvalidError,
  CatalogNotFoundError,
  type PostgresCatalog,
} from '@svc/adapter-postgres';
import { migratedDatabase, psql, type TestCatalogDatabase } from './support/database.js';

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

const SECRET_FORMAT = /^svc-[A-Za-z0-9_-]{43}$/u;
const TOKEN_FORMAT = /^svcpt_[A-Za-z0-9_-]{43}$/u;
let n = 0;
const fresh = (prefix: string): string => `${prefix}_${Date.now().toString(36)}_${(n += 1)}`;

describe('PostgresCatalog administration', function () {
  let db: TestCatalogDatabase;
  let catalog: PostgresCatalog;
  let account: string;
  before(async function () {
    db = await migratedDatabase();
    catalog = await db.open();
  });
  after(async function () {
    await db?.drop();
  });
  beforeEach(async function () {
    account = (await catalog.admin.addAccount(fresh('acct'))).accountId;
  });

  describe('accounts', function () {
    it('adds, lists (oldest first) and removes an empty account; an unknown one is not found', async function () {
      const other = await catalog.admin.addAccount(fresh('acct'));
      const ids = (await catalog.admin.listAccounts()).map((a) => a.accountId);
      expect(ids).to.include.members([account, other.accountId]);
      expect(ids.indexOf(account)).to.be.lessThan(ids.indexOf(other.accountId));
      expect(await catalog.admin.removeAccount(other.accountId)).to.deep.equal({ accountId: other.accountId, removed: { credentials: 0, agents: 0, connections: 0, webhookEndpoints: 0 } });
      expect((await catalog.admin.listAccounts()).map((a) => a.accountId)).to.not.include(other.accountId);
      const error = await rejection(catalog.admin.removeAccount(other.accountId));
      expect(error).to.be.instanceOf(CatalogNotFoundError).and.include({ code: 'not_found', entity: 'account', id: other.accountId });
    });

    it('lists each account with how much it owns (live credentials only); a list filtered by an unknown account is not found', async function () {
      await catalog.admin.createApiKey({ accountId: account });
      const revoked = await catalog.admin.createApiKey({ accountId: account });
      await catalog.admin.revokeApiKey(revoked.credential.credentialId);
      await catalog.admin.createAccessToken({ accountId: account, scopes: ['runs:read'] });
      await catalog.admin.addAgent({ accountId: account });
      await catalog.admin.addConnection({ accountId: account, type: 'postgresql' });
      await catalog.admin.addConnection({ accountId: account, type: 'sqlserver' });
      const summary = (await catalog.admin.listAccounts()).find((a) => a.accountId === account);
      expect(summary).to.deep.include({ accountId: account, apiKeys: 1, accessTokens: 1, agents: 1, connections: 2 });
      for (const list of [
        () => catalog.admin.listApiKeys({ accountId: 'acct_typo' }),
        () => catalog.admin.listAccessTokens({ accountId: 'acct_typo' }),
        () => catalog.admin.listAgents({ accountId: 'acct_typo' }),
        () => catalog.admin.listConnections({ accountId: 'acct_typo' }),
      ]) {
        expect(await rejection(list())).to.be.instanceOf(CatalogNotFoundError).and.include({ entity: 'account', id: 'acct_typo' });
      }
    });

    it('generates an id when none is given, and refuses an id with a slash or whitespace', async function () {
      const made = await catalog.admin.addAccount();
      expect(made.accountId).to.match(/^acct_[A-Za-z0-9_-]{16}$/u);
      for (const bad of ['a/b', 'a b', '', 'x'.repeat(129)]) {
        expect(await rejection(catalog.admin.addAccount(bad)), bad).to.be.instanceOf(CatalogInvalidError).and.include({ code: 'invalid', field: 'accountId' });
      }
    });

    it('refuses to remove an account that owns things, naming the counts; with cascade removes all it owns', async function () {
      const key = await catalog.admin.createApiKey({ accountId: account });
      const revoked = await catalog.admin.createApiKey({ accountId: account });
      await catalog.admin.revokeApiKey(revoked.credential.credentialId);
      await catalog.admin.addAgent({ accountId: account, id: fresh('agent') });
      await catalog.admin.addConnection({ accountId: account, type: 'postgresql' });
      await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep'), url: 'https://hooks.example.com/svc', secret: { env: 'SVC_TEST_WEBHOOK_SECRET' } });
      const error = await rejection(catalog.admin.removeAccount(account));
      expect(error).to.be.instanceOf(CatalogInUseError).and.deep.include({ code: 'in_use', owned: { credentials: 1, agents: 1, connections: 1, webhookEndpoints: 1 } });
      expect((error as Error).message).to.equal(
        `account "${account}" still owns 1 live credential(s), 1 agent(s), 1 connection(s) and 1 webhook endpoint(s); remove them first, or remove the account with cascade`,
      );
      expect(await catalog.credentials.findByDigest(key.credential.sha256), 'nothing removed').to.not.equal(undefined);
      const removed = await catalog.admin.removeAccount(account, { cascade: true });
      expect(removed).to.deep.equal({ accountId: account, removed: { credentials: 2, agents: 1, connections: 1, webhookEndpoints: 1 } });
      expect(await catalog.credentials.findByDigest(key.credential.sha256)).to.equal(undefined);
      expect(await catalog.agents.listByAccount(account, { limit: 20 })).to.deep.equal({ items: [] });
    });

    it('removes an account whose credentials are all revoked without cascade (revoked ones go with it)', async function () {
      const key = await catalog.admin.createApiKey({ accountId: account });
      await catalog.admin.revokeApiKey(key.credential.credentialId);
      expect((await catalog.admin.removeAccount(account)).removed.credentials).to.equal(1);
    });
  });

  describe('API keys', function () {
    it('creates a key: the secret once (svc- + 43 base64url characters), its digest stored and found by lookups', async function () {
      const { secret, credential } = await catalog.admin.createApiKey({ accountId: account, id: fresh('key') });
      expect(secret).to.match(SECRET_FORMAT);
      expect(credential).to.deep.include({ accountId: account, kind: 'api_key', sha256: sha256Hex(secret), scopes: [] });
      expect(credential.createdAt).to.be.instanceOf(Date);
      expect((await catalog.credentials.findByDigest(sha256Hex(secret)))?.credentialId).to.equal(credential.credentialId);
      const stored = await psql(`select * from "${db.schema}".credentials where id = $1`, [credential.credentialId]);
      expect(JSON.stringify(stored.rows)).to.not.include(secret.slice(4));
    });

    it('lists keys (live and revoked) with ids and digests, never a secret', async function () {
      const live = await catalog.admin.createApiKey({ accountId: account });
      const revoked = await catalog.admin.createApiKey({ accountId: account });
      await catalog.admin.revokeApiKey(revoked.credential.credentialId);
      const listed = await catalog.admin.listApiKeys({ accountId: account });
      expect(listed.map((k) => [k.credentialId, k.revokedAt !== undefined])).to.deep.equal([
        [live.credential.credentialId, false],
        [revoked.credential.credentialId, true],
      ]);
      const text = JSON.stringify(listed);
      for (const secret of [live.secret, revoked.secret]) expect(text).to.not.include(secret.slice(4));
      expect((await catalog.admin.listApiKeys()).map((k) => k.credentialId)).to.include(live.credential.credentialId);
      expect(await catalog.admin.listAccessTokens({ accountId: account })).to.deep.equal([]);
    });

    it('revokes a key: lookups stop finding it; revoking it again changes nothing; an unknown id is not found', async function () {
      const { secret, credential } = await catalog.admin.createApiKey({ accountId: account });
      expect(await catalog.credentials.findByDigest(sha256Hex(secret))).to.not.equal(undefined);
      const revoked = await catalog.admin.revokeApiKey(credential.credentialId);
      expect(revoked.revokedAt).to.be.instanceOf(Date);
      expect(await catalog.credentials.findByDigest(sha256Hex(secret))).to.equal(undefined);
      expect((await catalog.admin.revokeApiKey(credential.credentialId)).revokedAt?.getTime()).to.equal(revoked.revokedAt?.getTime());
      expect(await rejection(catalog.admin.revokeApiKey('key_nobody'))).to.be.instanceOf(CatalogNotFoundError).and.include({ entity: 'api_key' });
      // An access token's id is not an API key's.
      const token = await catalog.admin.createAccessToken({ accountId: account, scopes: ['runs:read'] });
      expect(await rejection(catalog.admin.revokeApiKey(token.credential.credentialId))).to.be.instanceOf(CatalogNotFoundError);
    });

    it('rotates a key: a new secret under the same id, the old one stops working; a revoked key is not rotated', async function () {
      const first = await catalog.admin.createApiKey({ accountId: account });
      expect(await catalog.credentials.findByDigest(sha256Hex(first.secret))).to.not.equal(undefined);
      const rotated = await catalog.admin.rotateApiKey(first.credential.credentialId);
      expect(rotated.secret).to.match(SECRET_FORMAT).and.not.equal(first.secret);
      expect(rotated.credential.credentialId).to.equal(first.credential.credentialId);
      expect(await catalog.credentials.findByDigest(sha256Hex(first.secret))).to.equal(undefined);
      expect((await catalog.credentials.findByDigest(sha256Hex(rotated.secret)))?.credentialId).to.equal(first.credential.credentialId);
      await catalog.admin.revokeApiKey(first.credential.credentialId);
      expect(await rejection(catalog.admin.rotateApiKey(first.credential.credentialId))).to.be.instanceOf(CatalogInvalidError).and.include({ field: 'id' });
      expect(await rejection(catalog.admin.rotateApiKey('key_nobody'))).to.be.instanceOf(CatalogNotFoundError);
    });

    it('replaces a credential\'s digest with that of a secret minted elsewhere (a key, or a token with a new expiry); the old secret stops working', async function () {
      const key = await catalog.admin.createApiKey({ accountId: account });
      const newKey = `svc-${randomBytes(32).toString('base64url')}`;
      const replaced = await catalog.admin.replaceCredentialDigest({ kind: 'api_key', id: key.credential.credentialId, sha256: sha256Hex(newKey) });
      expect(replaced).to.deep.include({ credentialId: key.credential.credentialId, accountId: account, sha256: sha256Hex(newKey) });
      expect(await catalog.credentials.findByDigest(sha256Hex(key.secret))).to.equal(undefined);
      expect((await catalog.credentials.findByDigest(sha256Hex(newKey)))?.credentialId).to.equal(key.credential.credentialId);

      const token = await catalog.admin.createAccessToken({ accountId: account, scopes: ['runs:write'], expiresAt: new Date(Date.now() + 60_000) });
      const newToken = `svcpt_${randomBytes(32).toString('base64url')}`;
      const later = new Date(Date.now() + 7_200_000);
      await catalog.admin.replaceCredentialDigest({ kind: 'oauth', id: token.credential.credentialId, sha256: sha256Hex(newToken), expiresAt: later });
      const found = await catalog.credentials.findByDigest(sha256Hex(newToken));
      expect(found).to.deep.include({ credentialId: token.credential.credentialId, scopes: ['runs:write'] });
      expect(found?.expiresAt?.getTime()).to.equal(later.getTime());

      // The wrong kind, a taken digest, a revoked credential, a malformed digest.
      expect(await rejection(catalog.admin.replaceCredentialDigest({ kind: 'oauth', id: key.credential.credentialId, sha256: sha256Hex('x') }))).to.be.instanceOf(CatalogNotFoundError);
      expect(await rejection(catalog.admin.replaceCredentialDigest({ kind: 'api_key', id: key.credential.credentialId, sha256: sha256Hex(newToken) })))
        .to.be.instanceOf(CatalogDuplicateError)
        .and.deep.include({ what: 'digest', existing: { entity: 'access_token', id: token.credential.credentialId, accountId: account } });
      await catalog.admin.revokeAccessToken(token.credential.credentialId);
      expect(await rejection(catalog.admin.replaceCredentialDigest({ kind: 'oauth', id: token.credential.credentialId, sha256: sha256Hex('y') }))).to.be.instanceOf(CatalogInvalidError);
      expect(await rejection(catalog.admin.replaceCredentialDigest({ kind: 'api_key', id: key.credential.credentialId, sha256: 'abc' }))).to.be.instanceOf(CatalogInvalidError).and.include({ field: 'sha256' });
    });

    it('refuses a key for an unknown account', async function () {
      expect(await rejection(catalog.admin.createApiKey({ accountId: 'acct_nobody' })))
        .to.be.instanceOf(CatalogNotFoundError)
        .and.include({ entity: 'account', id: 'acct_nobody' });
    });
  });

  describe('access tokens', function () {
    it('creates a token with scopes and an expiry: svcpt_ secret once, digest found with scopes and expiry', async function () {
      const expiresAt = new Date(Date.now() + 3_600_000);
      const { secret, credential } = await catalog.admin.createAccessToken({ accountId: account, scopes: [...SUPPORTED_SCOPES], expiresAt });
      expect(secret).to.match(TOKEN_FORMAT);
      const found = await catalog.credentials.findByDigest(sha256Hex(secret));
      expect(found).to.deep.include({ credentialId: credential.credentialId, kind: 'oauth', accountId: account });
      expect([...(found?.scopes ?? [])].sort()).to.deep.equal([...SUPPORTED_SCOPES].sort());
      expect(found?.expiresAt?.getTime()).to.equal(expiresAt.getTime());
      expect((await catalog.admin.listAccessTokens({ accountId: account })).map((t) => t.credentialId)).to.deep.equal([credential.credentialId]);
    });

    it('refuses no scope, an unknown scope and an expiry not in the future, naming the field', async function () {
      const cases: [Parameters<PostgresCatalog['admin']['createAccessToken']>[0], string][] = [
        [{ accountId: account, scopes: [] }, 'scopes'],
        [{ accountId: account, scopes: ['runs:write', 'admin'] }, 'scopes'],
        [{ accountId: account, scopes: ['runs:read'], expiresAt: new Date(Date.now() - 1000) }, 'expiresAt'],
        [{ accountId: account, scopes: ['runs:read'], expiresAt: new Date(Number.NaN) }, 'expiresAt'],
      ];
      for (const [input, field] of cases) expect(await rejection(catalog.admin.createAccessToken(input)), field).to.be.instanceOf(CatalogInvalidError).and.include({ field });
      expect(await catalog.admin.listAccessTokens({ accountId: account })).to.deep.equal([]);
    });

    it('revokes a token: lookups stop finding it', async function () {
      const { secret, credential } = await catalog.admin.createAccessToken({ accountId: account, scopes: ['runs:write'] });
      await catalog.admin.revokeAccessToken(credential.credentialId);
      expect(await catalog.credentials.findByDigest(sha256Hex(secret))).to.equal(undefined);
    });
  });

  describe('agents', function () {
    it('adds with name and description, lists per account (cached discovery and admin), removes', async function () {
      const id = fresh('agent');
      const added = await catalog.admin.addAgent({ accountId: account, id, name: 'Invoices', description: 'Reads invoices' });
      expect(added).to.deep.include({ agentId: id, accountId: account, name: 'Invoices', description: 'Reads invoices' });
      expect(await catalog.agents.findById(id)).to.deep.include({ agentId: id, accountId: account, name: 'Invoices', description: 'Reads invoices' });
      expect((await catalog.agents.listByAccount(account, { limit: 20 })).items.map((a) => a.agentId)).to.deep.equal([id]);
      expect((await catalog.admin.listAgents({ accountId: account })).map((a) => a.agentId)).to.deep.equal([id]);
      expect(await catalog.admin.removeAgent(id)).to.deep.include({ agentId: id, accountId: account, name: 'Invoices' });
      expect(await catalog.agents.findById(id)).to.equal(undefined);
      expect(await catalog.agents.listByAccount(account, { limit: 20 })).to.deep.equal({ items: [] });
      expect(await rejection(catalog.admin.removeAgent(id))).to.be.instanceOf(CatalogNotFoundError).and.include({ entity: 'agent' });
    });
  });

  describe('connections', function () {
    const KEY = randomBytes(32).toString('base64');

    it('adds a connection without details (demo tables): found, listed, no details; removed', async function () {
      const added = await catalog.admin.addConnection({ accountId: account, type: 'sqlserver', name: 'Demo' });
      expect(added.connectionId).to.match(/^[0-9a-f-]{36}$/u);
      expect(added.sqlserver).to.equal(undefined);
      expect(await catalog.connections.findById(added.connectionId)).to.deep.include({ accountId: account, type: 'sqlserver', name: 'Demo' });
      expect((await catalog.connections.listByAccount(account, { limit: 20 })).items.map((c) => c.connectionId)).to.deep.equal([added.connectionId]);
      expect(await catalog.connectionDetails(added.connectionId)).to.equal(undefined);
      expect(await catalog.admin.removeConnection(added.connectionId.toUpperCase())).to.deep.include({ connectionId: added.connectionId, name: 'Demo' });
      expect(await catalog.connections.findById(added.connectionId)).to.equal(undefined);
      expect(await rejection(catalog.admin.removeConnection(added.connectionId))).to.be.instanceOf(CatalogNotFoundError);
    });

    it('stores a password as the name of an environment variable, resolved only by connectionDetails', async function () {
      const env = `SVC_TEST_PASSWORD_${randomBytes(4).toString('hex').toUpperCase()}`;
      const added = await catalog.admin.addConnection({
        accountId: account,
        type: 'sqlserver',
        sqlserver: { host: 'db.internal', database: 'sales', user: 'writer', password: { env } },
      });
      expect(added.sqlserver).to.deep.equal({ host: 'db.internal', port: 1433, database: 'sales', user: 'writer', password: { env }, encrypt: true, trustServerCertificate: false });
      const error = await rejection(catalog.connectionDetails(added.connectionId));
      expect(error).to.be.instanceOf(CatalogError).and.include({ code: 'secret_unavailable' });
      expect((error as Error).message).to.include(env);
      process.env[env] = 'from-the-environment';
      try {
        expect(await catalog.connectionDetails(added.connectionId)).to.deep.equal({
          host: 'db.internal',
          port: 1433,
          database: 'sales',
          user: 'writer',
          password: 'from-the-environment',
          encrypt: true,
          trustServerCertificate: false,
        });
      } finally {
        delete process.env[env];
      }
    });

    it('stores a given password encrypted (AES-256-GCM, never in clear), decrypted only by connectionDetails', async function () {
      const keyed = await db.open({ encryptionKey: { key: KEY } });
      const password = `pw-${randomBytes(8).toString('hex')}`;
      const added = await keyed.admin.addConnection({
        accountId: account,
        type: 'sqlserver',
        sqlserver: { host: '10.0.0.5', port: 14330, database: 'sales', user: 'writer', password: { value: password }, encrypt: false, trustServerCertificate: true },
      });
      expect(added.sqlserver?.password).to.deep.equal({ encrypted: true });
      const rows = await psql(`select * from "${db.schema}".connections where id = $1`, [added.connectionId]);
      expect(JSON.stringify(rows.rows)).to.not.include(password);
      expect(rows.rows[0]?.['password_encrypted']).to.match(/^v1:[A-Za-z0-9+/=]+$/u);
      expect(JSON.stringify(await keyed.admin.listConnections({ accountId: account }))).to.not.include(password);
      expect((await keyed.connectionDetails(added.connectionId))?.password).to.equal(password);
      // Another key does not open it, and says so without the password.
      const otherKey = await db.open({ encryptionKey: { key: randomBytes(32) } });
      const error = await rejection(otherKey.connectionDetails(added.connectionId));
      expect(error).to.be.instanceOf(CatalogError).and.include({ code: 'secret_unavailable' });
      expect((error as Error).message).to.not.include(password);
      // A ciphertext copied to another connection's row does not open there (the id is authenticated).
      const copy = await keyed.admin.addConnection({
        accountId: account,
        type: 'sqlserver',
        sqlserver: { host: 'h', database: 'd', user: 'u', password: { value: 'other' } },
      });
      await psql(`update "${db.schema}".connections set password_encrypted = $1 where id = $2`, [rows.rows[0]?.['password_encrypted'], copy.connectionId]);
      expect(await rejection(keyed.connectionDetails(copy.connectionId))).to.include({ code: 'secret_unavailable' });
    });

    it('refuses a password value without a key, naming the environment variable; and details on another type', async function () {
      const keyless = await db.open({ encryptionKey: { env: 'SVC_TEST_NO_SUCH_KEY' } });
      const error = await rejection(
        keyless.admin.addConnection({ accountId: account, type: 'sqlserver', sqlserver: { host: 'h', database: 'd', user: 'u', password: { value: 'secret-pw' } } }),
      );
      expect(error).to.be.instanceOf(CatalogError).and.include({ code: 'key' });
      expect((error as Error).message).to.include('SVC_TEST_NO_SUCH_KEY').and.not.include('secret-pw');
      const wrongType = await rejection(
        catalog.admin.addConnection({ accountId: account, type: 'postgresql', sqlserver: { host: 'h', database: 'd', user: 'u', password: { env: 'X' } } }),
      );
      expect(wrongType).to.be.instanceOf(CatalogInvalidError).and.include({ field: 'sqlserver' });
      for (const [input, field] of [
        [{ accountId: account, type: 'sqlserver', id: 'not-a-uuid' }, 'id'],
        [{ accountId: account, type: '' }, 'type'],
        [{ accountId: account, type: 'sqlserver', sqlserver: { host: 'h', database: 'd', user: 'u', port: 70000, password: { env: 'X' } } }, 'sqlserver.port'],
        [{ accountId: account, type: 'sqlserver', sqlserver: { host: 'h', database: 'd', user: 'u', password: { env: 'NOT-A-NAME' } } }, 'sqlserver.password.env'],
      ] as const) {
        expect(await rejection(catalog.admin.addConnection(input)), field).to.be.instanceOf(CatalogInvalidError).and.include({ field });
      }
      expect(await catalog.admin.listConnections({ accountId: account })).to.deep.equal([]);
    });
  });

  describe('ids and digests unique across the whole catalog (docs/CONTRACT.md "Isolation between accounts")', function () {
    it('refuses an id used by any other kind of entry, in any account, naming the holder and its account', async function () {
      const other = (await catalog.admin.addAccount(fresh('acct'))).accountId;
      const key = await catalog.admin.createApiKey({ accountId: other, id: fresh('shared') });
      const agentId = fresh('agent');
      await catalog.admin.addAgent({ accountId: other, id: agentId });
      const connection = await catalog.admin.addConnection({ accountId: other, type: 'postgresql' });
      // Thunks: each attempt starts after the one before has been refused.
      const attempts: [() => Promise<unknown>, string, string][] = [
        [() => catalog.admin.addAgent({ accountId: account, id: key.credential.credentialId }), key.credential.credentialId, `api key "${key.credential.credentialId}" of account "${other}"`],
        [() => catalog.admin.createApiKey({ accountId: account, id: agentId }), agentId, `agent "${agentId}" of account "${other}"`],
        [() => catalog.admin.createAccessToken({ accountId: account, id: other, scopes: ['runs:read'] }), other, `account "${other}" of account "${other}"`],
        [() => catalog.admin.addAccount(agentId), agentId, `agent "${agentId}" of account "${other}"`],
        [() => catalog.admin.addAgent({ accountId: account, id: connection.connectionId }), connection.connectionId, `connection "${connection.connectionId}" of account "${other}"`],
        [() => catalog.admin.addConnection({ accountId: account, id: connection.connectionId.toUpperCase(), type: 'x' }), connection.connectionId, `connection "${connection.connectionId}"`],
        [() => catalog.admin.addAgent({ accountId: other, id: agentId }), agentId, `agent "${agentId}" of account "${other}"`],
      ];
      for (const [attempt, id, holder] of attempts) {
        const error = await rejection(attempt());
        expect(error, id).to.be.instanceOf(CatalogDuplicateError).and.include({ code: 'duplicate', what: 'id', value: id });
        expect((error as Error).message, id).to.include(`id "${id}" is already used by ${holder}`);
      }
      expect(await catalog.admin.listAgents({ accountId: account })).to.deep.equal([]);
      expect(await catalog.admin.listApiKeys({ accountId: account })).to.deep.equal([]);
    });

    it('refuses a digest already held by a credential of another account, naming it (no silent last-wins)', async function () {
      const other = (await catalog.admin.addAccount(fresh('acct'))).accountId;
      const { secret, credential } = await catalog.admin.createApiKey({ accountId: other });
      const error = await rejection(catalog.admin.importCredential({ credentialId: fresh('key'), accountId: account, kind: 'api_key', sha256: sha256Hex(secret), scopes: [] }));
      expect(error).to.be.instanceOf(CatalogDuplicateError).and.deep.include({
        what: 'digest',
        existing: { entity: 'api_key', id: credential.credentialId, accountId: other },
      });
      expect((error as Error).message).to.equal(`this secret (its SHA-256 digest) is already used by api key "${credential.credentialId}" of account "${other}"`);
      expect((await catalog.credentials.findByDigest(sha256Hex(secret)))?.accountId).to.equal(other);
    });

    it('refuses the same through psql: the triggers keep the ids unique whoever writes', async function () {
      const agentId = fresh('agent');
      await catalog.admin.addAgent({ accountId: account, id: agentId });
      const error = await rejection(psql(`insert into "${db.schema}".connections (id, account_id, type) values ($1, $2, 'x'), ($1, $2, 'x')`, [randomUUID(), account]));
      expect(error).to.include({ code: '23505' });
      const again = await rejection(psql(`insert into "${db.schema}".accounts (id) values ($1)`, [agentId]));
      expect(again).to.include({ code: '23505', constraint: 'catalog_ids_pkey' });
      // Removing an entry frees its id; truncating a table frees all of its ids.
      await catalog.admin.removeAgent(agentId);
      await catalog.admin.addAccount(agentId);
      await catalog.admin.removeAccount(agentId);
    });
  });
});
