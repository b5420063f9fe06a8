import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Connection, Request, TYPES } from 'tedious';
import type { EntityName, WriteError } from '@svc/core';
import { recordWriterContract, type Row } from '@svc/core/testing';
import { quoteIdentifier, SqlServerRecordWriter, type SqlServerConnectionSettings } from '@svc/adapter-sqlserver';
import { aSqlServerConnection, CONNECTION_ID } from './support.js';

// Runs the RecordWriter contract, a trigger case and constraint cases against a real SQL
// Server when MSSQL_URL is set, e.g.
//   MSSQL_URL='mssql://sa:Passw0rd!@127.0.0.1:1433/master?encrypt=false&trustServerCertificate=true'
// (README.md shows how to start one in a container). Without it: one pending test.

/** Parses `mssql://user:password@host:port/database?encrypt=...&trustServerCertificate=...`. */
function parseMssqlUrl(text: string): SqlServerConnectionSettings {
  const url = new URL(text);
  if (url.protocol !== 'mssql:' && url.protocol !== 'sqlserver:') throw new Error('MSSQL_URL must start with mssql://');
  const flag = (name: string, fallback: boolean): boolean => {
    const value = url.searchParams.get(name);
    return value === null ? fallback : value.toLowerCase() === 'true';
  };
  return {
    host: url.hostname,
    port: url.port === '' ? 1433 : Number(url.port),
    database: decodeURIComponent(url.pathname.replace(/^\//u, '')) || 'master',
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    encrypt: flag('encrypt', false),
    trustServerCertificate: flag('trustServerCertificate', true),
  };
}

/** A plain tedious connection for setup and checks, apart from the writer under test. */
class Admin {
  private constructor(private readonly connection: Connection) {}

  static async open(settings: SqlServerConnectionSettings): Promise<Admin> {
    const connection = new Connection({
      server: settings.host,
      authentication: { type: 'default', options: { userName: settings.user, password: settings.password } },
      options: { port: settings.port, database: settings.database, encrypt: settings.encrypt, trustServerCertificate: settings.trustServerCertificate },
    });
    connection.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => connection.connect((e) => (e ? reject(e) : resolve())));
    return new Admin(connection);
  }

  /** Runs SQL with optional parameters; resolves the rows as objects. */
  run(sql: string, parameters: Record<string, string | number | null> = {}): Promise<Row[]> {
    return new Promise((resolve, reject) => {
      const rows: Row[] = [];
      const request = new Request(sql, (e) => (e ? reject(e) : resolve(rows)));
      for (const [name, value] of Object.entries(parameters)) {
        request.addParameter(name, typeof value === 'number' ? TYPES.Int : TYPES.NVarChar, value);
      }
      request.on('row', (columns: { value: Row[string]; metadata: { colName: string } }[]) =>
        rows.push(Object.fromEntries(columns.map((c) => [c.metadata.colName, c.value]))),
      );
      if (Object.keys(parameters).length === 0) this.connection.execSqlBatch(request);
      else this.connection.execSql(request);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.connection.once('end', () => resolve());
      this.connection.close();
    });
  }
}

const name = (entity: EntityName): string => `${quoteIdentifier(entity.schema)}.${quoteIdentifier(entity.table)}`;

const mssqlUrl = process.env['MSSQL_URL'];

if (mssqlUrl === undefined || mssqlUrl === '') {
  describe('SqlServerRecordWriter against a real SQL Server', function () {
    it.skip('skipped: MSSQL_URL is not set (packages/adapter-sqlserver/README.md says how to run it)', function () {});
  });
} else {
  const settings = parseMssqlUrl(mssqlUrl);
  const connections = { [CONNECTION_ID]: settings };

  recordWriterContract('SqlServerRecordWriter on a real SQL Server', async () => {
    const admin = await Admin.open(settings);
    const writer = new SqlServerRecordWriter({ connections });
    const created: EntityName[] = [];
    return {
      writer,
      connection: aSqlServerConnection(),
      givenTable: async (entity, rows) => {
        // The contract names its tables; a hidden identity column keeps insertion order.
        await admin.run(`DROP TABLE IF EXISTS ${name(entity)}; CREATE TABLE ${name(entity)} ([__seq] int IDENTITY(1,1) NOT NULL, [id] int NULL, [name] nvarchar(200) NULL, [qty] int NULL);`);
        created.push(entity);
        for (const row of rows) {
          await admin.run(`INSERT INTO ${name(entity)} ([id], [name], [qty]) VALUES (@id, @name, @qty)`, {
            id: row['id'] as number | null,
            name: row['name'] as string | null,
            qty: row['qty'] as number | null,
          });
        }
      },
      rowsOf: (entity) => admin.run(`SELECT [id], [name], [qty] FROM ${name(entity)} ORDER BY [__seq]`),
      close: async () => {
        await writer.close();
        for (const entity of created) await admin.run(`DROP TABLE IF EXISTS ${name(entity)}`);
        await admin.close();
      },
    };
  });

  describe('SqlServerRecordWriter on a real SQL Server: triggers and constraints', function () {
    this.timeout(30_000);
    const suffix = randomBytes(4).toString('hex');
    const parent: EntityName = { schema: 'dbo', table: `svc_parent_${suffix}` };
    const child: EntityName = { schema: 'dbo', table: `svc_child_${suffix}` };
    const audit: EntityName = { schema: 'dbo', table: `svc_audit_${suffix}` };
    const connection = aSqlServerConnection();
    let admin: Admin;
    let writer: SqlServerRecordWriter;

    const errorOf = (result: Awaited<ReturnType<SqlServerRecordWriter['insert']>>): WriteError => {
      if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)}`);
      return result.error;
    };

    before(async function () {
      admin = await Admin.open(settings);
      await admin.run(`
        CREATE TABLE ${name(parent)} ([id] int NOT NULL CONSTRAINT [PK_svc_parent_${suffix}] PRIMARY KEY, [name] nvarchar(50) NOT NULL, [qty] int NULL, [code] nvarchar(5) NULL);
        CREATE TABLE ${name(child)} ([id] int NOT NULL PRIMARY KEY, [parent_id] int NOT NULL CONSTRAINT [FK_svc_child_${suffix}] REFERENCES ${name(parent)} ([id]));
        CREATE TABLE ${name(audit)} ([id] int NOT NULL, [note] nvarchar(20) NOT NULL);`);
      // Three statements without SET NOCOUNT ON: their DONEINPROC counts would inflate a
      // count summed from the response; an OUTPUT clause would fail on this table.
      await admin.run(`
        CREATE TRIGGER [dbo].[svc_trigger_${suffix}] ON ${name(parent)} AFTER INSERT, UPDATE AS
        BEGIN
          INSERT INTO ${name(audit)} ([id], [note]) SELECT [id], N'first' FROM inserted;
          INSERT INTO ${name(audit)} ([id], [note]) SELECT [id], N'second' FROM inserted;
          INSERT INTO ${name(audit)} ([id], [note]) SELECT [id], N'third' FROM inserted;
        END`);
      writer = new SqlServerRecordWriter({ connections });
    });

    after(async function () {
      await writer.close();
      await admin.run(`DROP TABLE IF EXISTS ${name(child)}; DROP TABLE IF EXISTS ${name(parent)}; DROP TABLE IF EXISTS ${name(audit)};`);
      await admin.close();
    });

    it('counts 1 row for an insert and an update on a table whose trigger writes elsewhere (no OUTPUT failure)', async function () {
      const inserted = await writer.insert({ connection, entity: parent, values: { id: 1, name: 'a', qty: 1 }, route: 'default' });
      const updated = await writer.update({ connection, entity: parent, key: { column: 'id', value: 1 }, values: { qty: 2 }, route: 'default' });
      expect(inserted).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
      expect(updated).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
      expect(await admin.run(`SELECT COUNT(*) AS n FROM ${name(audit)}`)).to.deep.equal([{ n: 6 }]);
    });

    it('rolls back an ambiguous update together with what its trigger wrote', async function () {
      await writer.insert({ connection, entity: parent, values: { id: 10, name: 'twin', qty: 1 }, route: 'default' });
      await writer.insert({ connection, entity: parent, values: { id: 11, name: 'twin', qty: 1 }, route: 'default' });
      const [before] = await admin.run(`SELECT COUNT(*) AS n FROM ${name(audit)}`);
      const result = await writer.update({ connection, entity: parent, key: { column: 'name', value: 'twin' }, values: { qty: 9 }, route: 'default' });
      expect(errorOf(result).code).to.equal('ambiguous_key');
      expect(await admin.run(`SELECT COUNT(*) AS n FROM ${name(audit)}`)).to.deep.equal([before]);
      expect(await admin.run(`SELECT [qty] FROM ${name(parent)} WHERE [name] = N'twin'`)).to.deep.equal([{ qty: 1 }, { qty: 1 }]);
    });

    it('answers constraint_violation for a duplicate primary key, naming the constraint', async function () {
      await writer.insert({ connection, entity: parent, values: { id: 20, name: 'x' }, route: 'default' });
      const error = errorOf(await writer.insert({ connection, entity: parent, values: { id: 20, name: 'y' }, route: 'default' }));
      expect(error).to.deep.equal({ code: 'constraint_violation', detail: `The write would duplicate a key of PRIMARY KEY constraint PK_svc_parent_${suffix}.` });
    });

    it('answers constraint_violation for NULL in a NOT NULL column, naming the column', async function () {
      const error = errorOf(await writer.insert({ connection, entity: parent, values: { id: 30, name: null }, route: 'default' }));
      expect(error).to.deep.equal({ code: 'constraint_violation', detail: 'Column name does not allow NULL.' });
    });

    it('answers constraint_violation for a missing foreign key, naming the constraint', async function () {
      const error = errorOf(await writer.insert({ connection, entity: child, values: { id: 1, parent_id: 999 }, route: 'default' }));
      expect(error).to.deep.equal({ code: 'constraint_violation', detail: `The write conflicts with FOREIGN KEY constraint FK_svc_child_${suffix}.` });
    });

    it('answers invalid_value for a value of the wrong type or too long', async function () {
      const wrongType = errorOf(await writer.insert({ connection, entity: parent, values: { id: 'forty', name: 'x' }, route: 'default' }));
      const tooLong = errorOf(await writer.insert({ connection, entity: parent, values: { id: 40, name: 'x', code: 'far too long' }, route: 'default' }));
      expect(wrongType.code).to.equal('invalid_value');
      expect(tooLong.code).to.equal('invalid_value');
    });
  });
}
