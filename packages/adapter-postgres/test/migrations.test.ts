import { expect } from 'chai';
import {
  CATALOG_MIGRATIONS,
  CatalogInvalidError,
  CatalogNotMigratedError,
  CatalogSchemaTooNewError,
  migrateCatalog,
  PostgresCatalog,
} from '@svc/adapter-postgres';
import { dropSchema, psql, randomSchema, TEST_DATABASE_URL } from './support/database.js';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

// Tables come from knex migrations run by an explicit command, never implicitly at open
// (issue 13, item 1).
describe('catalog migrations', function () {
  const schemas: string[] = [];
  const schema = (): string => {
    const name = randomSchema();
    schemas.push(name);
    return name;
  };
  after(async function () {
    for (const name of schemas) await dropSchema(name);
  });

  it('open on an unmigrated schema fails naming the command to run, and creates nothing', async function () {
    const name = schema();
    for (const options of [{}, { migrateCommand: 'pnpm svc-server migrate --config prod.yaml' }]) {
      const error = await rejection(PostgresCatalog.open({ connection: TEST_DATABASE_URL, schema: name, ...options }));
      expect(error).to.be.instanceOf(CatalogNotMigratedError).and.deep.include({ code: 'not_migrated', schema: name, pending: CATALOG_MIGRATIONS });
      const command = 'migrateCommand' in options ? options.migrateCommand : 'svc-server migrate';
      expect((error as Error).message).to.equal(`the catalog schema "${name}" is not migrated (pending: ${CATALOG_MIGRATIONS.join(', ')}); run \`${command}\` first`);
    }
    const found = await psql(`select count(*)::int as n from information_schema.schemata where schema_name = $1`, [name]);
    expect(found.rows[0]?.['n']).to.equal(0);
  });

  it('migrateCatalog makes the schema and applies every migration once; a second run applies none', async function () {
    const name = schema();
    expect(await migrateCatalog({ connection: TEST_DATABASE_URL, schema: name })).to.deep.equal({ schema: name, applied: CATALOG_MIGRATIONS, current: CATALOG_MIGRATIONS });
    expect(await migrateCatalog({ connection: TEST_DATABASE_URL, schema: name })).to.deep.equal({ schema: name, applied: [], current: CATALOG_MIGRATIONS });
    const tables = await psql<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = $1 order by 1`, [name]);
    expect(tables.rows.map((r) => r.table_name)).to.deep.equal(['accounts', 'agents', 'catalog_ids', 'connections', 'credentials', 'knex_migrations', 'knex_migrations_lock', 'webhook_endpoints']);
    const catalog = await PostgresCatalog.open({ connection: TEST_DATABASE_URL, schema: name });
    await catalog.close();
  });

  it('runs from dist/ (what the packed tarball ships): the migrations are code, not files next to a config', async function () {
    const dist = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof import('@svc/adapter-postgres');
    const name = schema();
    expect((await dist.migrateCatalog({ connection: TEST_DATABASE_URL, schema: name })).applied).to.deep.equal(CATALOG_MIGRATIONS);
    const catalog = await dist.PostgresCatalog.open({ connection: TEST_DATABASE_URL, schema: name, cache: false });
    await catalog.admin.addAccount('acct_dist');
    expect((await catalog.admin.listAccounts()).map((a) => a.accountId)).to.deep.equal(['acct_dist']);
    await catalog.close();
  });

  it('open refuses a schema migrated by a newer version, naming its migrations', async function () {
    const name = schema();
    await migrateCatalog({ connection: TEST_DATABASE_URL, schema: name });
    await psql(`insert into "${name}".knex_migrations (name, batch, migration_time) values ('9999_from_the_future', 2, now())`);
    const error = await rejection(PostgresCatalog.open({ connection: TEST_DATABASE_URL, schema: name }));
    expect(error).to.be.instanceOf(CatalogSchemaTooNewError).and.deep.include({ code: 'schema_too_new', unknown: ['9999_from_the_future'] });
  });

  it('refuses a schema name that is not a plain lower-case identifier', async function () {
    for (const bad of ['Svc', 'svc-x', '1svc', 'svc"; drop', '', 'x'.repeat(41)]) {
      expect(await rejection(migrateCatalog({ connection: TEST_DATABASE_URL, schema: bad })), bad).to.be.instanceOf(CatalogInvalidError).and.include({ field: 'schema' });
      expect(await rejection(PostgresCatalog.open({ connection: TEST_DATABASE_URL, schema: bad })), bad).to.be.instanceOf(CatalogInvalidError);
    }
  });
});
