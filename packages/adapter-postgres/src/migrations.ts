import type { Knex } from 'knex';
import { createKnex } from './connection-options.js';
import { positiveInteger, type PostgresConnection } from './settings.js';
import { catalogUnavailable, isCatalogUnavailable } from './errors.js';
import { checkSchemaName, DEFAULT_CATALOG_SCHEMA, MIGRATIONS_TABLE, quoted } from './schema.js';

/** One migration of the catalog: plain code, so that it runs the same from src/, dist/ or a packed tarball. */
interface CatalogMigration {
  readonly name: string;
  up(db: Knex, schema: string): Promise<void>;
  down(db: Knex, schema: string): Promise<void>;
}

/** Kinds each table's rows hold in `catalog_ids` (the trigger's argument). */
const ENTITY_OF_TABLE = { accounts: 'account', credentials: 'credential', agents: 'agent', connections: 'connection' } as const;

/**
 * 0001: the four tables, the registry of ids unique across the whole catalog, and the
 * triggers that keep it and that NOTIFY every change (so that a change made with psql
 * reaches every instance too).
 */
const catalogTables: CatalogMigration = {
  name: '0001_catalog_tables',
  async up(db, schema) {
    const s = quoted(schema);
    // A fresh builder per statement: a knex SchemaBuilder accumulates, and would run earlier statements again.
    const b = (): Knex.SchemaBuilder => db.schema.withSchema(schema);
    // Every id of the catalog, whatever its kind: docs/CONTRACT.md "Isolation between accounts"
    // (ids of accounts, keys, tokens, agents and connections are unique across the catalog).
    await b().createTable('catalog_ids', (t) => {
      t.text('id').primary({ constraintName: 'catalog_ids_pkey' });
      t.text('entity').notNullable();
      t.text('account_id').notNullable();
    });
    await b().createTable('accounts', (t) => {
      t.text('id').primary({ constraintName: 'accounts_pkey' });
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    });
    await b().createTable('credentials', (t) => {
      t.text('id').primary({ constraintName: 'credentials_pkey' });
      t.text('account_id').notNullable().references('id').inTable(`${schema}.accounts`).withKeyName('credentials_account_fkey');
      t.text('kind').notNullable();
      t.text('sha256').notNullable().unique({ indexName: 'credentials_sha256_key' });
      t.specificType('scopes', 'text[]').notNullable().defaultTo(db.raw(`'{}'::text[]`));
      t.timestamp('expires_at', { useTz: true }).nullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.timestamp('revoked_at', { useTz: true }).nullable();
      t.index(['account_id'], 'credentials_account_idx');
    });
    await b().createTable('agents', (t) => {
      t.text('id').primary({ constraintName: 'agents_pkey' });
      t.text('account_id').notNullable().references('id').inTable(`${schema}.accounts`).withKeyName('agents_account_fkey');
      t.text('name').nullable();
      t.text('description').nullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.index(['account_id'], 'agents_account_idx');
    });
    await b().createTable('connections', (t) => {
      t.uuid('id').primary({ constraintName: 'connections_pkey' });
      t.text('account_id').notNullable().references('id').inTable(`${schema}.accounts`).withKeyName('connections_account_fkey');
      t.text('type').notNullable();
      t.text('name').nullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      // SQL Server details of a `sqlserver` connection; all absent: in-memory demo tables.
      t.text('host').nullable();
      t.integer('port').nullable();
      t.text('database').nullable();
      t.text('user_name').nullable();
      // The password is never stored in clear: an environment variable's name, or AES-256-GCM.
      t.text('password_env').nullable();
      t.text('password_encrypted').nullable();
      t.boolean('encrypt').nullable();
      t.boolean('trust_server_certificate').nullable();
      t.index(['account_id'], 'connections_account_idx');
    });
    await db.raw(`
      alter table ${s}.credentials
        add constraint credentials_kind_check check (kind in ('api_key', 'oauth')),
        add constraint credentials_sha256_check check (sha256 ~ '^[0-9a-f]{64}$'),
        add constraint credentials_id_check check (length(id) between 1 and 128);
      alter table ${s}.accounts add constraint accounts_id_check check (length(id) between 1 and 128);
      alter table ${s}.agents add constraint agents_id_check check (length(id) between 1 and 128);
      alter table ${s}.connections
        add constraint connections_type_check check (length(type) between 1 and 64),
        add constraint connections_details_check check (
          (host is null and port is null and database is null and user_name is null and encrypt is null
             and trust_server_certificate is null and password_env is null and password_encrypted is null)
          or (type = 'sqlserver' and host is not null and port between 1 and 65535 and database is not null
             and user_name is not null and encrypt is not null and trust_server_certificate is not null
             and ((password_env is null) <> (password_encrypted is null)))
        );

      create function ${s}.claim_catalog_id() returns trigger language plpgsql as $$
      declare
        row_data jsonb;
      begin
        if tg_op in ('UPDATE', 'DELETE') then
          delete from ${s}.catalog_ids where id = (to_jsonb(old) ->> 'id');
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          row_data := to_jsonb(new);
          insert into ${s}.catalog_ids (id, entity, account_id)
            values (row_data ->> 'id', tg_argv[0], coalesce(row_data ->> 'account_id', row_data ->> 'id'));
        end if;
        return null;
      end $$;

      create function ${s}.release_catalog_ids() returns trigger language plpgsql as $$
      begin
        delete from ${s}.catalog_ids where entity = tg_argv[0];
        return null;
      end $$;

      create function ${s}.notify_catalog_change() returns trigger language plpgsql as $$
      begin
        perform pg_notify('svc_catalog_' || tg_table_schema, tg_table_name);
        return null;
      end $$;
    `);
    for (const [table, entity] of Object.entries(ENTITY_OF_TABLE)) {
      await db.raw(`
        create trigger claim_catalog_id after insert or delete or update of ${table === 'accounts' ? 'id' : 'id, account_id'} on ${s}.${table}
          for each row execute function ${s}.claim_catalog_id('${entity}');
        create trigger release_catalog_ids after truncate on ${s}.${table}
          for each statement execute function ${s}.release_catalog_ids('${entity}');
        create trigger notify_catalog_change after insert or update or delete or truncate on ${s}.${table}
          for each statement execute function ${s}.notify_catalog_change();
      `);
    }
  },
  async down(db, schema) {
    const s = quoted(schema);
    await db.raw(`
      drop table if exists ${s}.connections, ${s}.agents, ${s}.credentials, ${s}.accounts, ${s}.catalog_ids;
      drop function if exists ${s}.claim_catalog_id(), ${s}.release_catalog_ids(), ${s}.notify_catalog_change();
    `);
  },
};

/**
 * 0002: the webhook endpoints of the accounts (docs/CONTRACT.md "Runs lifecycle": endpoints
 * live "in the catalog and in the config file under the account"; docs/decisions.md
 * "Catalog on PostgreSQL", migration 0002). Their ids join `catalog_ids` (entity
 * `webhook_endpoint`: unique across the catalog, like agent ids) and every change is
 * NOTIFYed like the other tables'. The signing secret is never stored in clear: the name
 * of an environment variable of the server, or AES-256-GCM under the catalog key
 * (`SVC_CATALOG_KEY`), exactly one of the two.
 */
const webhookEndpoints: CatalogMigration = {
  name: '0002_webhook_endpoints',
  async up(db, schema) {
    const s = quoted(schema);
    await db.schema.withSchema(schema).createTable('webhook_endpoints', (t) => {
      t.text('id').primary({ constraintName: 'webhook_endpoints_pkey' });
      t.text('account_id').notNullable().references('id').inTable(`${schema}.accounts`).withKeyName('webhook_endpoints_account_fkey');
      t.text('url').notNullable();
      t.text('secret_env').nullable();
      t.text('secret_encrypted').nullable();
      t.specificType('events', 'text[]').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.index(['account_id'], 'webhook_endpoints_account_idx');
    });
    // The five run event types (core's RUN_EVENT_TYPES) as written into this migration,
    // which is never edited: a later type needs a migration of its own.
    const types = `'run.queued', 'run.running', 'run.succeeded', 'run.failed', 'run.cancelled'`;
    await db.raw(`
      alter table ${s}.webhook_endpoints
        add constraint webhook_endpoints_id_check check (length(id) between 1 and 128),
        add constraint webhook_endpoints_url_check check ((url like 'http://%' or url like 'https://%') and length(url) <= 2048),
        add constraint webhook_endpoints_events_check check (cardinality(events) > 0 and events <@ array[${types}]::text[]),
        add constraint webhook_endpoints_secret_check check ((secret_env is null) <> (secret_encrypted is null));
      create trigger claim_catalog_id after insert or delete or update of id, account_id on ${s}.webhook_endpoints
        for each row execute function ${s}.claim_catalog_id('webhook_endpoint');
      create trigger release_catalog_ids after truncate on ${s}.webhook_endpoints
        for each statement execute function ${s}.release_catalog_ids('webhook_endpoint');
      create trigger notify_catalog_change after insert or update or delete or truncate on ${s}.webhook_endpoints
        for each statement execute function ${s}.notify_catalog_change();
    `);
  },
  async down(db, schema) {
    const s = quoted(schema);
    // Dropping a table fires no row trigger: its ids are released here.
    await db.raw(`
      delete from ${s}.catalog_ids where entity = 'webhook_endpoint';
      drop table if exists ${s}.webhook_endpoints;
    `);
  },
};

/** Every migration, in order. A new one is appended, never edited once released. */
const MIGRATIONS: readonly CatalogMigration[] = [catalogTables, webhookEndpoints];

/** Names of every migration this package knows, in order. */
export const CATALOG_MIGRATIONS: readonly string[] = MIGRATIONS.map((m) => m.name);

/**
 * The migrations as a knex `migrationSource` for `schema`: code, not files, so they run
 * from dist/ and from a packed tarball alike (knex's directory loader would need the
 * .js files next to a config). Internal (not in index.ts); the tests step through it.
 */
export function catalogMigrationSource(schema: string): Knex.MigrationSource<CatalogMigration> {
  checkSchemaName(schema);
  return {
    getMigrations: () => Promise.resolve([...MIGRATIONS]),
    getMigrationName: (migration) => migration.name,
    getMigration: (migration) => Promise.resolve({ up: (db: Knex) => migration.up(db, schema), down: (db: Knex) => migration.down(db, schema) }),
  };
}

/** Options of {@link migrateCatalog}. */
export interface MigrateCatalogOptions {
  /** The catalog database. */
  readonly connection: PostgresConnection;
  /** Schema of the catalog, made when missing. Default `svc`. */
  readonly schema?: string;
  /**
   * Bound of each step (connect, each statement), in milliseconds. Default 30000: DDL
   * waits for the locks of running transactions, which may take a while on a busy
   * database, and a migration is run by an operator, not on a request's path.
   */
  readonly timeoutMs?: number;
}

/** What {@link migrateCatalog} did. */
export interface MigrationOutcome {
  /** The schema migrated. */
  readonly schema: string;
  /** Migrations applied by this call, in order (empty when the schema was up to date). */
  readonly applied: readonly string[];
  /** Every migration now applied. */
  readonly current: readonly string[];
}

/** Default of {@link MigrateCatalogOptions.timeoutMs}, in milliseconds. */
export const DEFAULT_MIGRATE_TIMEOUT_MS = 30_000;

/**
 * Makes the catalog schema and applies every pending migration (knex `migrate.latest`,
 * each in its own transaction, under knex's migration lock so that two operators cannot
 * run it at once). Explicit: `PostgresCatalog.open` never migrates.
 *
 * @throws DependencyUnavailableError (`catalog`) when the database cannot be reached.
 * @throws CatalogInvalidError for a bad schema name or timeout.
 * @throws Error from knex when a migration fails (e.g. the lock is held): nothing of that
 *   migration is applied.
 */
export async function migrateCatalog(options: MigrateCatalogOptions): Promise<MigrationOutcome> {
  const schema = checkSchemaName(options.schema ?? DEFAULT_CATALOG_SCHEMA);
  const timeoutMs = positiveInteger(options.timeoutMs, DEFAULT_MIGRATE_TIMEOUT_MS, 'timeoutMs');
  const db = createKnex(options.connection, timeoutMs, 1);
  try {
    await db.raw(`create schema if not exists ${quoted(schema)}`);
    const config = { migrationSource: catalogMigrationSource(schema), schemaName: schema, tableName: MIGRATIONS_TABLE };
    const [, applied] = (await db.migrate.latest(config)) as [number, string[]];
    const [completed] = (await db.migrate.list(config)) as [{ name: string }[], unknown[]];
    return { schema, applied, current: completed.map((m) => m.name) };
  } catch (error) {
    if (isCatalogUnavailable(error)) throw catalogUnavailable(error);
    throw error;
  } finally {
    await db.destroy();
  }
}
