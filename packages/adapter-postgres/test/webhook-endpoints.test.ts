import { randomBytes } from 'node:crypto';
import { FINAL_RUN_EVENT_TYPES, isWebhookSecret } from '@svc/core';
import { eventually, RecordingLogger } from '@svc/core/testing';
import { expect } from 'chai';
import {
  CATALOG_MIGRATIONS,
  CatalogDuplicateError,
  CatalogInvalidError,
  CatalogNotFoundError,
  CatalogNotMigratedError,
  migrateCatalog,
  PostgresCatalog,
} from '@svc/adapter-postgres';
import { createKnex } from '../src/connection-options.js';
import { catalogMigrationSource } from '../src/migrations.js';
import { MIGRATIONS_TABLE } from '../src/schema.js';
import { dropSchema, migratedDatabase, psql, randomSchema, TEST_DATABASE_URL, type TestCatalogDatabase } from './support/database.js';

// Webhook endpoints in the PostgreSQL catalog (issue 16 part 4; docs/decisions.md
// "Webhooks", "Catalog on PostgreSQL" migration 0002).

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

const KEY = randomBytes(32);
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
let n = 0;
const fresh = (prefix: string): string => `${prefix}_${Date.now().toString(36)}_${(n += 1)}`;

describe('webhook endpoints in the PostgreSQL catalog', function () {
  describe('migration 0002_webhook_endpoints', function () {
    const schemas: string[] = [];
    after(async function () {
      for (const name of schemas) await dropSchema(name);
    });

    it('an old catalog (0001 only) is refused by open naming 0002, then migrated by migrateCatalog; down drops the table and releases its ids', async function () {
      const schema = randomSchema();
      schemas.push(schema);
      expect(CATALOG_MIGRATIONS).to.deep.equal(['0001_catalog_tables', '0002_webhook_endpoints']);
      const db = createKnex(TEST_DATABASE_URL, 10_000, 1);
      const config = { migrationSource: catalogMigrationSource(schema), schemaName: schema, tableName: MIGRATIONS_TABLE };
      try {
        await db.raw(`create schema "${schema}"`);
        await db.migrate.up(config);
        const error = await rejection(PostgresCatalog.open({ connection: TEST_DATABASE_URL, schema, cache: false }));
        expect(error).to.be.instanceOf(CatalogNotMigratedError).and.deep.include({ pending: ['0002_webhook_endpoints'] });

        expect((await migrateCatalog({ connection: TEST_DATABASE_URL, schema })).applied).to.deep.equal(['0002_webhook_endpoints']);
        const catalog = await PostgresCatalog.open({ connection: TEST_DATABASE_URL, schema, cache: false, encryptionKey: { key: KEY } });
        await catalog.admin.addAccount('acct_m');
        await catalog.admin.addWebhookEndpoint({ accountId: 'acct_m', id: 'whep_m', url: 'https://hooks.example.com/m' });
        await catalog.close();
        const claimed = await psql(`select entity, account_id from "${schema}".catalog_ids where id = 'whep_m'`);
        expect(claimed.rows).to.deep.equal([{ entity: 'webhook_endpoint', account_id: 'acct_m' }]);
        const checks = await psql<{ conname: string }>(
          `select conname from pg_constraint where conrelid = to_regclass($1) and contype = 'c' order by 1`,
          [`"${schema}".webhook_endpoints`],
        );
        expect(checks.rows.map((r) => r.conname)).to.deep.equal(['webhook_endpoints_events_check', 'webhook_endpoints_id_check', 'webhook_endpoints_secret_check', 'webhook_endpoints_url_check']);

        await db.migrate.down(config);
        const table = await psql(`select to_regclass($1) as t`, [`"${schema}".webhook_endpoints`]);
        expect(table.rows[0]?.['t']).to.equal(null);
        const ids = await psql(`select id from "${schema}".catalog_ids order by id`);
        expect(ids.rows).to.deep.equal([{ id: 'acct_m' }]);
        // And up again: the ids released by down can be claimed again.
        expect((await migrateCatalog({ connection: TEST_DATABASE_URL, schema })).applied).to.deep.equal(['0002_webhook_endpoints']);
      } finally {
        await db.destroy();
      }
    });

    it('the table refuses an unknown event type, no event, both or neither secret sources (checks of the migration, psql side)', async function () {
      const db = await migratedDatabase();
      try {
        const s = `"${db.schema}"`;
        await psql(`insert into ${s}.accounts (id) values ('acct_c')`);
        const insert = (events: string, env: string | null, encrypted: string | null): Promise<unknown> =>
          psql(`insert into ${s}.webhook_endpoints (id, account_id, url, secret_env, secret_encrypted, events) values ($1, 'acct_c', 'https://x.example', $2, $3, $4::text[])`, [
            fresh('w'),
            env,
            encrypted,
            events,
          ]);
        for (const [events, env, encrypted, constraint] of [
          ['{run.exploded}', 'V', null, 'webhook_endpoints_events_check'],
          ['{}', 'V', null, 'webhook_endpoints_events_check'],
          ['{run.failed}', null, null, 'webhook_endpoints_secret_check'],
          ['{run.failed}', 'V', 'v1:x', 'webhook_endpoints_secret_check'],
        ] as const) {
          expect(await rejection(insert(events, env, encrypted)), `${events} ${env} ${encrypted}`).to.include({ code: '23514', constraint });
        }
        await insert('{run.queued,run.running,run.succeeded,run.failed,run.cancelled}', 'V', null);
      } finally {
        await db.drop();
      }
    });
  });

  describe('administration and lookups', function () {
    let db: TestCatalogDatabase;
    let catalog: PostgresCatalog;
    let logger: RecordingLogger;
    let account: string;
    before(async function () {
      db = await migratedDatabase();
      logger = new RecordingLogger();
      catalog = await db.open({ encryptionKey: { key: KEY }, logger });
    });
    after(async function () {
      await db?.drop();
    });
    beforeEach(async function () {
      account = (await catalog.admin.addAccount(fresh('acct'))).accountId;
    });

    it('adds (secret made, given, or by variable), lists without secrets, serves them to the core with their secrets, removes', async function () {
      const made = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep_b'), url: 'https://hooks.example.com/b' });
      expect(made.secret).to.be.a('string');
      expect(isWebhookSecret(made.secret ?? '')).to.equal(true);
      expect(made.endpoint).to.deep.include({ accountId: account, url: 'https://hooks.example.com/b', events: FINAL_RUN_EVENT_TYPES, secret: { encrypted: true } });
      const given = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep_a'), url: 'http://127.0.0.1:9/a?x=1', secret: { value: SECRET }, events: ['run.queued', 'run.failed'] });
      expect(given.secret, 'a given secret is not handed back').to.equal(undefined);
      const envName = `SVC_TEST_WHSEC_${randomBytes(4).toString('hex').toUpperCase()}`;
      process.env[envName] = SECRET;
      try {
        const byEnv = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep_c'), url: 'https://hooks.example.com/c', secret: { env: envName } });
        expect(byEnv.endpoint.secret).to.deep.equal({ env: envName });

        const listed = await catalog.admin.listWebhookEndpoints({ accountId: account });
        expect(listed.map((e) => e.endpointId)).to.deep.equal([made.endpoint.endpointId, given.endpoint.endpointId, byEnv.endpoint.endpointId]);
        const text = JSON.stringify(listed);
        expect(text).to.not.include(SECRET).and.not.include(made.secret ?? '');
        const stored = await psql(`select secret_encrypted from "${db.schema}".webhook_endpoints where id = $1`, [given.endpoint.endpointId]);
        expect(String(stored.rows[0]?.['secret_encrypted'])).to.match(/^v1:/u).and.not.include(SECRET.slice(6));

        // The core's port: in byte order of id, secrets resolved.
        const served = await catalog.webhookEndpoints.listByAccount(account);
        expect(served.map((e) => [e.endpointId, e.secret])).to.deep.equal(
          [
            [given.endpoint.endpointId, SECRET],
            [made.endpoint.endpointId, made.secret],
            [byEnv.endpoint.endpointId, SECRET],
          ].sort((a, b) => ((a[0] ?? '') < (b[0] ?? '') ? -1 : 1)),
        );
        expect(await catalog.webhookEndpoints.findById(given.endpoint.endpointId)).to.deep.equal({
          endpointId: given.endpoint.endpointId,
          accountId: account,
          url: 'http://127.0.0.1:9/a?x=1',
          secret: SECRET,
          events: ['run.queued', 'run.failed'],
        });
        expect(await catalog.webhookEndpoints.findById('whep_unknown')).to.equal(undefined);
        expect(await catalog.webhookEndpoints.findById('whep\u0000x')).to.equal(undefined);
        expect(await catalog.webhookEndpoints.listByAccount('acct_unknown')).to.deep.equal([]);

        expect((await catalog.admin.removeWebhookEndpoint(given.endpoint.endpointId)).endpointId).to.equal(given.endpoint.endpointId);
        expect(await catalog.webhookEndpoints.findById(given.endpoint.endpointId), 'this process forgets at once').to.equal(undefined);
        expect(await rejection(catalog.admin.removeWebhookEndpoint(given.endpoint.endpointId))).to.be.instanceOf(CatalogNotFoundError).and.include({
          entity: 'webhook_endpoint',
          message: `no webhook endpoint with id "${given.endpoint.endpointId}"`,
        });
      } finally {
        delete process.env[envName];
      }
      expect(logger.text()).to.not.include(SECRET.slice(6));
    });

    it('refuses an id held by an agent (naming it), an unknown account, and bad fields naming them', async function () {
      const agent = await catalog.admin.addAgent({ accountId: account, id: fresh('agent') });
      const duplicate = await rejection(catalog.admin.addWebhookEndpoint({ accountId: account, id: agent.agentId, url: 'https://hooks.example.com/d' }));
      expect(duplicate).to.be.instanceOf(CatalogDuplicateError).and.deep.include({ existing: { entity: 'agent', id: agent.agentId, accountId: account } });
      expect((duplicate as Error).message).to.equal(`id "${agent.agentId}" is already used by agent "${agent.agentId}" of account "${account}"`);
      const endpoint = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep'), url: 'https://hooks.example.com/e' });
      const taken = await rejection(catalog.admin.addAgent({ accountId: account, id: endpoint.endpoint.endpointId }));
      expect((taken as Error).message).to.include(`webhook endpoint "${endpoint.endpoint.endpointId}" of account "${account}"`);

      expect(await rejection(catalog.admin.addWebhookEndpoint({ accountId: 'acct_nope', url: 'https://hooks.example.com/' }))).to.be.instanceOf(CatalogNotFoundError).and.include({ entity: 'account' });
      const bad: [Parameters<PostgresCatalog['admin']['addWebhookEndpoint']>[0], string][] = [
        [{ accountId: account, url: 'ftp://hooks.example.com/' }, 'url'],
        [{ accountId: account, url: 'not a url' }, 'url'],
        [{ accountId: account, url: `https://hooks.example.com/${'x'.repeat(2048)}` }, 'url'],
        [{ accountId: account, url: 'https://hooks.example.com/', id: 'a/b' }, 'id'],
        [{ accountId: account, url: 'https://hooks.example.com/', events: [] }, 'events'],
        [{ accountId: account, url: 'https://hooks.example.com/', events: ['run.exploded' as never] }, 'events'],
        [{ accountId: account, url: 'https://hooks.example.com/', secret: { env: '1BAD' } }, 'secret.env'],
        [{ accountId: account, url: 'https://hooks.example.com/', secret: { value: 'whsec_short' } }, 'secret.value'],
      ];
      for (const [input, field] of bad) {
        const error = await rejection(catalog.admin.addWebhookEndpoint(input));
        expect(error, field).to.be.instanceOf(CatalogInvalidError).and.include({ field });
        expect((error as Error).message).to.not.include('whsec_short');
      }
    });

    it('an endpoint whose secret cannot be resolved is skipped with one warn line naming it, never the secret', async function () {
      const good = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep_good'), url: 'https://hooks.example.com/g', secret: { value: SECRET } });
      const unset = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep_unset'), url: 'https://hooks.example.com/u', secret: { env: 'SVC_TEST_UNSET_WHSEC' } });
      // The ciphertext of another row does not open here (the endpoint id is bound as additional data).
      const copied = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep_copy'), url: 'https://hooks.example.com/c', secret: { value: SECRET } });
      await psql(`update "${db.schema}".webhook_endpoints set secret_encrypted = (select secret_encrypted from "${db.schema}".webhook_endpoints where id = $1) where id = $2`, [
        good.endpoint.endpointId,
        copied.endpoint.endpointId,
      ]);
      await eventually(async () => (await catalog.webhookEndpoints.findById(copied.endpoint.endpointId)) === undefined, 'the copied ciphertext to be refused');
      const warnings = logger.lines.length;
      const served = await catalog.webhookEndpoints.listByAccount(account);
      expect(served.map((e) => e.endpointId)).to.deep.equal([good.endpoint.endpointId]);
      const lines = logger.lines.slice(warnings);
      expect(lines.map((l) => [l.level, l.fields['endpoint_id']])).to.deep.equal([
        ['warn', copied.endpoint.endpointId],
        ['warn', unset.endpoint.endpointId],
      ].sort((a, b) => ((a[1] ?? '') < (b[1] ?? '') ? -1 : 1)));
      expect(lines.find((l) => l.fields['endpoint_id'] === unset.endpoint.endpointId)?.fields['reason']).to.include('SVC_TEST_UNSET_WHSEC');
      // Another key: nothing opens, nothing leaks.
      const otherKey = await db.open({ encryptionKey: { key: randomBytes(32) }, logger, cache: false });
      expect(await otherKey.webhookEndpoints.findById(good.endpoint.endpointId)).to.equal(undefined);
      expect(logger.text()).to.not.include(SECRET).and.not.include(SECRET.slice(6));
      const keyless = await db.open({ encryptionKey: { env: 'SVC_TEST_NO_SUCH_KEY' }, logger, cache: false });
      const seen = logger.lines.length;
      expect(await keyless.webhookEndpoints.listByAccount(account)).to.deep.equal([]);
      expect(logger.lines.slice(seen).filter((l) => String(l.fields['reason']).includes('SVC_TEST_NO_SUCH_KEY')).map((l) => l.fields['endpoint_id'])).to.deep.equal(
        [copied.endpoint.endpointId, good.endpoint.endpointId].sort(),
      );
    });

    it('a change made by one catalog reaches a second one (NOTIFY clears its cache)', async function () {
      const second = await db.open({ encryptionKey: { key: KEY } });
      await eventually(() => second.listening, 'the second catalog to listen');
      // Primed: the second catalog serves "none" from its cache before the change.
      expect(await second.webhookEndpoints.listByAccount(account)).to.deep.equal([]);
      const before = second.stats().cacheHits;
      expect(await second.webhookEndpoints.listByAccount(account)).to.deep.equal([]);
      expect(second.stats().cacheHits).to.equal(before + 1);

      const added = await catalog.admin.addWebhookEndpoint({ accountId: account, id: fresh('whep_n'), url: 'https://hooks.example.com/n', secret: { value: SECRET } });
      await eventually(async () => (await second.webhookEndpoints.listByAccount(account)).length === 1, 'the second catalog to see the endpoint', 5_000);
      expect(await second.webhookEndpoints.findById(added.endpoint.endpointId)).to.include({ secret: SECRET });
      await catalog.admin.removeWebhookEndpoint(added.endpoint.endpointId);
      await eventually(async () => (await second.webhookEndpoints.findById(added.endpoint.endpointId)) === undefined, 'the second catalog to forget it', 5_000);
    });
  });
});
