import { randomBytes, randomUUID } from 'node:crypto';
import { DependencyUnavailableError, sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { expect } from 'chai';
import { migrateCatalog, PostgresCatalog, type PostgresCatalogOptions } from '@svc/adapter-postgres';
import { freePort } from '../../../tools/test-support/ports.js';
import { migratedDatabase, psql, type TestCatalogDatabase } from './support/database.js';
import { startBlackhole, TcpProxy } from './support/tcp-proxy.js';

// docs/CONTRACT.md "Dependencies and faults": the catalog database lost → every lookup
// rejects with the core's DependencyUnavailableError('catalog') (HTTP 503) within the
// bound, never a raw driver error, never an unbounded wait; and no host, port, user or
// password in what it carries. Then the catalog serves again once the database is back.
const BOUND_MS = 500;
/** Generous slack over the bound for a loaded 2-core machine; the measured figures are printed. */
const SLACK_MS = 700;
const slowest: Record<string, number> = {};

/** Runs `work`, records how long it took, asserts the bound + slack, and returns its outcome (value or error). */
async function measure(name: string, bound: number, work: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  const outcome = await work().catch((error: unknown) => error);
  const ms = Math.round(performance.now() - started);
  slowest[name] = Math.max(slowest[name] ?? 0, ms);
  expect(ms, `${name} within the bound + slack`).to.be.at.most(bound + SLACK_MS);
  return outcome;
}

/** Asserts `outcome` is the catalog's DependencyUnavailableError, naming no host, port, user or password. */
function expectCatalogUnavailable(outcome: unknown, ...secrets: string[]): void {
  expect(outcome).to.be.instanceOf(DependencyUnavailableError);
  const error = outcome as DependencyUnavailableError;
  expect(error.dependency).to.equal('catalog');
  expect(error.message).to.equal('catalog is unavailable');
  const text = `${String(error)} ${String((error.cause as Error | undefined)?.message)} ${JSON.stringify(error)}`;
  for (const secret of ['127.0.0.1', 'localhost', 'postgres://', ...secrets]) expect(text, `mentions ${secret}`).to.not.include(secret);
}

describe('PostgresCatalog when its database is lost', function () {
  this.timeout(60_000);
  after(function () {
    console.log(`      measured (bound ${BOUND_MS} ms unless named): ${JSON.stringify(slowest)}`);
  });

  describe('at open', function () {
    it('nothing listens on the port: DependencyUnavailableError within the bound', async function () {
      const port = await freePort();
      const connection = { host: '127.0.0.1', port, user: 'svc_user_x', password: 'pw_never_shown', database: 'test' };
      const outcome = await measure('open, refused', BOUND_MS, () => PostgresCatalog.open({ connection, timeoutMs: BOUND_MS }));
      expectCatalogUnavailable(outcome, String(port), 'svc_user_x', 'pw_never_shown');
      const migrate = await measure('migrate, refused', BOUND_MS, () => migrateCatalog({ connection, timeoutMs: BOUND_MS }));
      expectCatalogUnavailable(migrate, String(port), 'svc_user_x', 'pw_never_shown');
    });

    it('a server that accepts and never answers: DependencyUnavailableError within the bound, and within the default 2000 ms', async function () {
      const blackhole = await startBlackhole();
      try {
        const url = `postgres://svc_user_x:pw_never_shown@127.0.0.1:${blackhole.port}/test`;
        expectCatalogUnavailable(await measure('open, silent', BOUND_MS, () => PostgresCatalog.open({ connection: url, timeoutMs: BOUND_MS })), String(blackhole.port), 'svc_user_x', 'pw_never_shown');
        expectCatalogUnavailable(await measure('open, silent, default bound 2000 ms', 2_000, () => PostgresCatalog.open({ connection: url })), String(blackhole.port));
      } finally {
        await blackhole.close();
      }
    });
  });

  describe('after open, through a proxy that falls silent or goes down', function () {
    let db: TestCatalogDatabase;
    let proxy: TcpProxy;
    let catalog: PostgresCatalog;
    let admin: PostgresCatalog;
    let secret: string;
    let keyId: string;
    const account = 'acct_faults';
    const agentId = 'agent_faults';
    const connectionId = randomUUID();

    before(async function () {
      db = await migratedDatabase();
      proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 });
      admin = await db.open({ cache: false });
      await admin.admin.addAccount(account);
      await admin.admin.addAgent({ accountId: account, id: agentId });
      await admin.admin.addConnection({ accountId: account, id: connectionId, type: 'postgresql' });
    });
    after(async function () {
      await proxy?.close();
      await db?.drop();
    });
    beforeEach(async function () {
      proxy.restore();
      const issued = await admin.admin.createApiKey({ accountId: account });
      secret = issued.secret;
      keyId = issued.credential.credentialId;
      const options: PostgresCatalogOptions = db.options({
        connection: `postgres://postgres@127.0.0.1:${proxy.port}/test`,
        timeoutMs: BOUND_MS,
        heartbeatMs: 100,
      });
      // Setup, not under test: on a loaded machine a first connection may take longer than
      // the test's short bound, so opening is retried until it works.
      await eventually(
        async () => {
          const opened = await PostgresCatalog.open(options).catch(() => undefined);
          if (opened === undefined) return false;
          catalog = opened;
          return true;
        },
        'the catalog to open through the proxy',
        10_000,
        50,
      );
      // Cached: the second lookup is a hit.
      expect((await catalog.credentials.findByDigest(sha256Hex(secret)))?.credentialId).to.equal(keyId);
      const hits = catalog.stats().cacheHits;
      expect((await catalog.credentials.findByDigest(sha256Hex(secret)))?.credentialId).to.equal(keyId);
      expect(catalog.stats().cacheHits).to.equal(hits + 1);
    });
    afterEach(async function () {
      proxy.restore();
      await catalog?.close();
    });

    /** Every lookup of the catalog, each expected to reject within the bound. */
    async function expectEveryLookupUnavailable(fault: string): Promise<void> {
      const lookups: [string, () => Promise<unknown>][] = [
        ['cached digest', () => catalog.credentials.findByDigest(sha256Hex(secret))],
        ['unknown digest', () => catalog.credentials.findByDigest(sha256Hex(randomBytes(8).toString('hex')))],
        ['agent', () => catalog.agents.findById(agentId)],
        ['connection', () => catalog.connections.findById(connectionId)],
        ['a page of the agents of an account (discovery)', () => catalog.agents.listByAccount(account, { limit: 20 })],
        ['a page of the connections of an account (discovery)', () => catalog.connections.listByAccount(account, { limit: 20 })],
        ['connection details', () => catalog.connectionDetails(connectionId)],
        ['ping', () => catalog.ping()],
      ];
      for (const [what, lookup] of lookups) expectCatalogUnavailable(await measure(`${fault}: ${what}`, BOUND_MS, lookup), String(proxy.port));
    }

    async function expectServedAgain(): Promise<void> {
      await eventually(() => catalog.listening, 'the LISTEN connection to be back', 10_000, 20);
      await eventually(async () => (await catalog.credentials.findByDigest(sha256Hex(secret)).catch(() => 'failed')) === undefined, 'the revoked key to be refused', 10_000, 20);
      expect(await catalog.agents.findById(agentId)).to.deep.include({ agentId, accountId: account });
      await catalog.ping();
    }

    it('silent: an uncached lookup rejects within the bound at once; the heartbeat stops the cache; every lookup rejects; back: served, and a change made meanwhile is seen', async function () {
      proxy.silence();
      expectCatalogUnavailable(await measure('silent: uncached lookup', BOUND_MS, () => catalog.agents.findById('agent_not_cached')));
      // Silent server: the heartbeat (every 100 ms, answered within the bound) notices.
      await eventually(() => !catalog.listening, 'the heartbeat to notice the silent server', 5_000, 10);
      await expectEveryLookupUnavailable('silent');
      // Revoked meanwhile, on the database itself: no NOTIFY can reach this catalog now.
      await admin.admin.revokeApiKey(keyId);
      proxy.restore();
      await expectServedAgain();
    });

    it('down (every connection reset): every lookup rejects within the bound; back: served, and a change made meanwhile is seen', async function () {
      proxy.down();
      await eventually(() => !catalog.listening, 'the LISTEN connection to be lost', 5_000, 10);
      await expectEveryLookupUnavailable('down');
      await admin.admin.revokeApiKey(keyId);
      proxy.restore();
      await expectServedAgain();
    });

    it('close() returns within the bound while the database is silent', async function () {
      proxy.silence();
      await measure('close, silent', BOUND_MS, () => catalog.close());
    });
  });

  describe('the LISTEN connection lost while the database serves (listenConnection through the proxy)', function () {
    let db: TestCatalogDatabase;
    let proxy: TcpProxy;
    let catalog: PostgresCatalog;

    before(async function () {
      db = await migratedDatabase();
      proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 });
      catalog = await db.open({ listenConnection: `postgres://postgres@127.0.0.1:${proxy.port}/test`, timeoutMs: BOUND_MS, heartbeatMs: 100, reconnect: { minDelayMs: 50, maxDelayMs: 200 } });
      await catalog.admin.addAccount('acct_listen');
    });
    after(async function () {
      await proxy?.close();
      await db?.drop();
    });

    /**
     * Waits until two lookups in a row show the second one served from the cache (a
     * notification of an earlier change may still be on its way and clear it once more).
     */
    async function servedFromCache(lookup: () => Promise<unknown>): Promise<void> {
      await eventually(
        async () => {
          await lookup();
          const before = catalog.stats().cacheHits;
          await lookup();
          return catalog.stats().cacheHits === before + 1;
        },
        'a lookup served from the cache',
        5_000,
        5,
      );
    }

    it('serves nothing from the cache while down (every lookup asks the database, a psql change is seen at once); listens and caches again when back', async function () {
      const agent = await catalog.admin.addAgent({ accountId: 'acct_listen', id: 'agent_listen', name: 'before' });
      expect((await catalog.agents.findById(agent.agentId))?.name).to.equal('before');
      await servedFromCache(() => catalog.agents.findById(agent.agentId));

      for (const fault of ['down', 'silent'] as const) {
        if (fault === 'down') proxy.down();
        else proxy.silence();
        await eventually(() => !catalog.listening, `the listener to notice (${fault})`, 5_000, 10);
        const before = catalog.stats();
        for (const name of [`${fault} 1`, `${fault} 2`]) {
          await psql(`update "${db.schema}".agents set name = $1 where id = $2`, [name, agent.agentId]);
          expect((await catalog.agents.findById(agent.agentId))?.name, 'a change seen at once, without NOTIFY').to.equal(name);
        }
        const during = catalog.stats();
        expect(during.cacheHits, 'no cache hit while the listener is down').to.equal(before.cacheHits);
        expect(during.loads - before.loads).to.equal(2);

        proxy.restore();
        await eventually(() => catalog.listening, `the listener to listen again after ${fault}`, 10_000, 10);
        await servedFromCache(() => catalog.agents.findById(agent.agentId));
        await psql(`update "${db.schema}".agents set name = $1 where id = $2`, [`after ${fault}`, agent.agentId]);
        await eventually(async () => (await catalog.agents.findById(agent.agentId))?.name === `after ${fault}`, 'NOTIFY to reach the cache again', 5_000, 10);
      }
    });
  });
});
