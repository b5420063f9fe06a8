import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import type { EntityName, WriteError } from '@svc/core';
import { SqlServerRecordWriter, UnmappedSqlServerError } from '@svc/adapter-sqlserver';
import { eventually } from '@svc/core/testing';
import { requireLogin, sqlServerErrors, TdsServer, type SqlMessage, type TdsResponse } from '@svc/tds-server';
import { aSqlServerConnection, CONNECTION_ID, OTHER_CONNECTION_ID, PASSWORD, RecordingLogger, settingsFor, USER, Writers } from './support.js';

const connection = aSqlServerConnection();
const orders: EntityName = { schema: 'dbo', table: 'orders' };

function failing(message: SqlMessage): TdsResponse {
  return { results: [{ kind: 'error', ...message }] };
}

/** A TCP port nothing listens on: bound, then closed. */
async function refusedPort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

function errorOf(result: Awaited<ReturnType<SqlServerRecordWriter['insert']>>): WriteError {
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)}`);
  return result.error;
}

describe('SqlServerRecordWriter (tedious against the scripted TDS server)', function () {
  let server: TdsServer;
  const writers = new Writers();

  beforeEach(async function () {
    server = await TdsServer.start();
    server.emulator.defineTable(orders, [
      { name: 'id', type: 'int' },
      { name: 'name', type: 'nvarchar' },
      { name: 'qty', type: 'int' },
    ]);
  });

  afterEach(async function () {
    await writers.closeAll();
    await server.close();
  });

  describe('on the wire', function () {
    it('sends one parameterised INSERT: identifiers quoted with ] doubled, every value a typed parameter', async function () {
      const odd: EntityName = { schema: 'sales data', table: 'we]ird [table]' };
      const values = {
        id: 7,
        'na]me': 'Zoë ✓ 😀 漢字',
        'big qty': 2 ** 40,
        'int max': 2_147_483_647,
        'int min': -2_147_483_648,
        'just over': 2 ** 31,
        price: 12.5,
        tiny: 1e-30,
        huge: 2 ** 60,
        paid: true,
        void: false,
        note: null,
        "it's": "O'Brien; DROP TABLE x --",
      };
      server.emulator.defineTable(odd, Object.keys(values));
      const writer = writers.make(server);

      const result = await writer.insert({ connection, entity: odd, values, route: 'default' });

      expect(result).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
      expect(server.requests).to.have.length(1);
      const [request] = server.requests;
      expect(request?.kind).to.equal('rpc');
      expect(request?.procedure).to.equal(10); // sp_executesql
      expect(request?.sql).to.equal(
        [
          'SET NOCOUNT ON;',
          'INSERT INTO [sales data].[we]]ird [table]]] ([id], [na]]me], [big qty], [int max], [int min], [just over], [price], [tiny], [huge], [paid], [void], [note], [it\'s]) ' +
            'VALUES (@p0, @p1, @p2, @p3, @p4, @p5, CAST(@p6 AS decimal(38, 1)), CAST(@p7 AS decimal(38, 30)), @p8, @p9, @p10, @p11, @p12);',
          'SELECT @@ROWCOUNT AS [rows_affected];',
        ].join('\n'),
      );
      expect(request?.parameters).to.deep.equal([
        { name: '@p0', type: 'int', value: 7 },
        { name: '@p1', type: 'nvarchar(4000)', value: 'Zoë ✓ 😀 漢字' },
        { name: '@p2', type: 'bigint', value: 2 ** 40 },
        { name: '@p3', type: 'int', value: 2_147_483_647 },
        { name: '@p4', type: 'int', value: -2_147_483_648 },
        { name: '@p5', type: 'bigint', value: 2 ** 31 },
        // Non-integers as exact decimal text, never through a binary float.
        { name: '@p6', type: 'varchar(41)', value: '12.5' },
        { name: '@p7', type: 'varchar(41)', value: `0.${'0'.repeat(29)}1` },
        // A JS number is its shortest round-trip text, the number its caller wrote.
        { name: '@p8', type: 'bigint', value: 1152921504606847000n },
        { name: '@p9', type: 'bit', value: true },
        { name: '@p10', type: 'bit', value: false },
        { name: '@p11', type: 'nvarchar(4000)', value: null },
        { name: '@p12', type: 'nvarchar(4000)', value: "O'Brien; DROP TABLE x --" },
      ]);
      expect(server.emulator.rowsOf(odd)).to.deep.equal([values]);
    });

    it('sends strings over 4000 characters as nvarchar(max)', async function () {
      const long = 'x'.repeat(5000);
      await writers.make(server).insert({ connection, entity: orders, values: { name: long }, route: 'default' });
      expect(server.requests[0]?.parameters).to.deep.equal([{ name: '@p0', type: 'nvarchar(max)', value: long }]);
    });

    it('sends the update as one batch: transaction, UPDATE TOP (2) by key, rollback when more than one row, the count', async function () {
      server.emulator.defineTable({ schema: 'dbo', table: 'line items' }, ['key]col', 'qty', 'note'], [{ 'key]col': 'A-1', qty: 1, note: 'n' }]);
      const result = await writers.make(server).update({
        connection,
        entity: { schema: 'dbo', table: 'line items' },
        key: { column: 'key]col', value: 'A-1' },
        values: { qty: 5, note: null },
        route: 'default',
      });

      expect(result).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
      expect(server.requests).to.have.length(1);
      expect(server.requests[0]?.sql).to.equal(
        [
          'SET NOCOUNT ON;',
          'SET XACT_ABORT ON;',
          'DECLARE @rows_affected int;',
          'BEGIN TRANSACTION;',
          'UPDATE TOP (2) [dbo].[line items] SET [qty] = @p0, [note] = @p1 WHERE [key]]col] = @p2;',
          'SET @rows_affected = @@ROWCOUNT;',
          'IF @rows_affected > 1 BEGIN ROLLBACK TRANSACTION; END ELSE BEGIN COMMIT TRANSACTION; END;',
          'SELECT @rows_affected AS [rows_affected];',
        ].join('\n'),
      );
      expect(server.requests[0]?.parameters).to.deep.equal([
        { name: '@p0', type: 'int', value: 5 },
        { name: '@p1', type: 'nvarchar(4000)', value: null },
        { name: '@p2', type: 'nvarchar(4000)', value: 'A-1' },
      ]);
      expect(server.emulator.rowsOf({ schema: 'dbo', table: 'line items' })).to.deep.equal([{ 'key]col': 'A-1', qty: 5, note: null }]);
    });

    it('answers ambiguous_key in the same single round trip, and the batch rolled the update back', async function () {
      const before = [
        { id: 5, name: 'x', qty: 1 },
        { id: 5, name: 'y', qty: 2 },
      ];
      server.emulator.defineTable(orders, [{ name: 'id', type: 'int' }, 'name', 'qty'], before);
      const result = await writers.make(server).update({ connection, entity: orders, key: { column: 'id', value: 5 }, values: { qty: 0 }, route: 'default' });

      expect(errorOf(result)).to.deep.equal({ code: 'ambiguous_key', detail: 'key_column id selects more than one row; nothing was changed.' });
      expect(server.requests).to.have.length(1);
      expect(server.emulator.rowsOf(orders)).to.deep.equal(before);
    });

    it('answers rowsAffected 0 when the key selects no row', async function () {
      const result = await writers.make(server).update({ connection, entity: orders, key: { column: 'id', value: 99 }, values: { qty: 1 }, route: 'default' });
      expect(result).to.deep.equal({ ok: true, value: { rowsAffected: 0 } });
    });

    it("reports the statement's own count, not the DONE counts of trigger statements", async function () {
      // A trigger without SET NOCOUNT ON adds DONEINPROC tokens with its own counts.
      server.handler = () => ({
        results: [
          { kind: 'done', rowCount: 1 },
          { kind: 'done', rowCount: 5 },
          { kind: 'rows', columns: [{ name: 'rows_affected', type: 'int' }], rows: [[1]] },
        ],
      });
      const result = await writers.make(server).insert({ connection, entity: orders, values: { id: 1 }, route: 'default' });
      expect(result).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
    });
  });

  describe('SQL Server errors', function () {
    const cases: { message: SqlMessage; code: WriteError['code']; detail: string }[] = [
      { message: sqlServerErrors.invalidObjectName('dbo.orders'), code: 'unknown_entity', detail: 'Entity dbo.orders does not exist or is not visible.' },
      { message: sqlServerErrors.invalidColumnName('colour'), code: 'unknown_column', detail: 'Column colour does not exist in dbo.orders.' },
      {
        message: sqlServerErrors.duplicateKey('PK_orders', 'dbo.orders', '1'),
        code: 'constraint_violation',
        detail: 'The write would duplicate a key of PRIMARY KEY constraint PK_orders.',
      },
      {
        message: sqlServerErrors.duplicateIndexKey('dbo.orders', 'UX_orders_name', 'alice'),
        code: 'constraint_violation',
        detail: 'The write would duplicate a key of unique index UX_orders_name.',
      },
      {
        message: sqlServerErrors.constraintConflict('INSERT', 'FOREIGN KEY', 'FK_orders_customers', 'orders_db', 'dbo.customers', 'id'),
        code: 'constraint_violation',
        detail: 'The write conflicts with FOREIGN KEY constraint FK_orders_customers.',
      },
      {
        message: sqlServerErrors.constraintConflict('UPDATE', 'CHECK', 'CK_orders_qty', 'orders_db', 'dbo.orders', 'qty'),
        code: 'constraint_violation',
        detail: 'The write conflicts with CHECK constraint CK_orders_qty.',
      },
      { message: sqlServerErrors.nullNotAllowed('name', 'orders_db.dbo.orders', 'INSERT'), code: 'constraint_violation', detail: 'Column name does not allow NULL.' },
      { message: sqlServerErrors.conversionFailed('secret-of-another-row', 'int'), code: 'invalid_value', detail: 'A value does not fit data type int.' },
      { message: sqlServerErrors.conversionError('nvarchar', 'numeric'), code: 'invalid_value', detail: 'A value does not fit data type numeric.' },
      {
        message: sqlServerErrors.truncated('orders_db.dbo.orders', 'name', 'secret-trunc'),
        code: 'invalid_value',
        detail: 'A value is too long for column name.',
      },
      { message: sqlServerErrors.truncatedLegacy(), code: 'invalid_value', detail: 'A value is too long for its column.' },
      { message: sqlServerErrors.arithmeticOverflow('int'), code: 'invalid_value', detail: 'A value does not fit data type int.' },
    ];

    for (const { message, code, detail } of cases) {
      it(`maps error ${message.number} to ${code}: "${detail}"`, async function () {
        server.handler = () => failing(message);
        const error = errorOf(await writers.make(server).insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }));
        expect(error).to.deep.equal({ code, detail });
        expect(detail).to.not.match(/secret|orders_db|INSERT|127\.0\.0\.1/u);
      });
    }

    it('maps the first mapped error of several ERROR tokens (AggregateError)', async function () {
      server.handler = () => ({
        results: [
          { kind: 'error', ...sqlServerErrors.constraintConflict('INSERT', 'FOREIGN KEY', 'FK_a', 'db', 'dbo.b', 'id') },
          { kind: 'error', number: 3609, class: 16, message: 'The transaction ended in the trigger. The batch has been aborted.' },
        ],
      });
      const error = errorOf(await writers.make(server).insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }));
      expect(error.code).to.equal('constraint_violation');
    });

    it('answers with the emulated table errors 208 and 207 as SQL Server words them', async function () {
      const writer = writers.make(server);
      const missing = await writer.insert({ connection, entity: { schema: 'dbo', table: 'missing' }, values: { id: 1 }, route: 'default' });
      const unknownColumn = await writer.update({ connection, entity: orders, key: { column: 'colour', value: 'red' }, values: { qty: 1 }, route: 'default' });
      expect(errorOf(missing)).to.deep.equal({ code: 'unknown_entity', detail: 'Entity dbo.missing does not exist or is not visible.' });
      expect(errorOf(unknownColumn)).to.deep.equal({ code: 'unknown_column', detail: 'Column colour does not exist in dbo.orders.' });
    });

    it('throws UnmappedSqlServerError for an unmapped number, revealing nothing, and logs only the number', async function () {
      const logger = new RecordingLogger();
      server.handler = () => failing(sqlServerErrors.permissionDenied('INSERT', 'orders', 'orders_db', 'dbo'));
      const writer = writers.make(server, { logger });

      const failure: unknown = await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }).then(
        () => undefined,
        (e: unknown) => e,
      );

      expect(failure).to.be.instanceOf(UnmappedSqlServerError);
      expect((failure as UnmappedSqlServerError).number).to.equal(229);
      expect((failure as Error).message).to.not.match(/orders|permission|INSERT/u);
      expect((failure as Error).cause).to.equal(undefined);
      expect(logger.lines).to.deep.equal([
        {
          level: 'error',
          fields: { connectionId: CONNECTION_ID, route: 'default', number: 229, driverCode: 'EREQUEST' },
          message: 'SQL Server write failed with an unmapped error',
        },
      ]);
    });

    it('throws UnmappedSqlServerError when the batch does not select its row count', async function () {
      server.handler = () => ({ results: [{ kind: 'done', rowCount: 1 }] });
      let failure: unknown;
      await writers
        .make(server)
        .insert({ connection, entity: orders, values: { id: 1 }, route: 'default' })
        .catch((e: unknown) => (failure = e));
      expect(failure).to.be.instanceOf(UnmappedSqlServerError);
      expect((failure as UnmappedSqlServerError).driverCode).to.equal('ENOROWCOUNT');
    });

    it('retries a deadlock victim once (its transaction was rolled back) and succeeds', async function () {
      let calls = 0;
      server.handler = (request) => {
        calls += 1;
        return calls === 1 ? failing(sqlServerErrors.deadlockVictim()) : server.emulator.handle(request);
      };
      const result = await writers.make(server).insert({ connection, entity: orders, values: { id: 1, name: 'a', qty: 1 }, route: 'default' });
      expect(result).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
      expect(server.requests).to.have.length(2);
      expect(server.emulator.rowsOf(orders)).to.deep.equal([{ id: 1, name: 'a', qty: 1 }]);
    });

    it('gives up after the second deadlock: connection_unavailable, two requests, not three', async function () {
      server.handler = () => failing(sqlServerErrors.deadlockVictim());
      const error = errorOf(await writers.make(server).update({ connection, entity: orders, key: { column: 'id', value: 1 }, values: { qty: 1 }, route: 'default' }));
      expect(error.code).to.equal('connection_unavailable');
      expect(server.requests).to.have.length(2);
    });
  });

  describe('connection failures', function () {
    it('answers connection_unavailable for a failed login (18456), without sending the write', async function () {
      server.login = requireLogin(USER, 'another password');
      const logger = new RecordingLogger();
      const started = Date.now();
      const error = errorOf(await writers.make(server, { logger }).insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }));

      expect(error.code).to.equal('connection_unavailable');
      expect(Date.now() - started).to.be.below(1000);
      expect(server.requests).to.have.length(0);
      expect(server.connections[0]?.login?.userName).to.equal(USER);
      expect(logger.lines).to.deep.equal([
        { level: 'warn', fields: { connectionId: CONNECTION_ID, route: 'default', code: 'connection_unavailable', driverCode: 'ELOGIN' }, message: 'SQL Server write failed' },
      ]);
    });

    it('logs in when user and password match', async function () {
      server.login = requireLogin(USER, PASSWORD);
      const result = await writers.make(server).insert({ connection, entity: orders, values: { id: 1 }, route: 'default' });
      expect(result.ok).to.equal(true);
    });

    it('answers connection_unavailable well under a second for a refused port', async function () {
      const port = await refusedPort();
      const writer = writers.make(server, { connections: { [CONNECTION_ID]: settingsFor(port) } });
      const started = Date.now();
      const error = errorOf(await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }));
      expect(error.code).to.equal('connection_unavailable');
      expect(Date.now() - started).to.be.below(1000);
    });

    it('answers connection_timeout when the server accepts TCP but never answers the login', async function () {
      const silent = createServer(() => undefined);
      const sockets = new Set<import('node:net').Socket>();
      silent.on('connection', (s) => sockets.add(s));
      silent.listen(0, '127.0.0.1');
      await once(silent, 'listening');
      try {
        const { port } = silent.address() as AddressInfo;
        const writer = writers.make(server, { connections: { [CONNECTION_ID]: settingsFor(port) }, connectTimeoutMs: 200 });
        const started = Date.now();
        const error = errorOf(await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }));
        expect(error.code).to.equal('connection_timeout');
        expect(Date.now() - started).to.be.within(150, 1500);
      } finally {
        for (const s of sockets) s.destroy();
        silent.close();
        await once(silent, 'close');
      }
    });

    it('answers connection_timeout when a request outlasts requestTimeoutMs, sends it once, and drops that connection', async function () {
      server.handler = (request) => (server.requests.length === 1 ? { delayMs: 10_000 } : server.emulator.handle(request));
      const writer = writers.make(server, { requestTimeoutMs: 200 });
      const started = Date.now();
      const error = errorOf(await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }));

      expect(error.code).to.equal('connection_timeout');
      expect(Date.now() - started).to.be.within(150, 2000);
      expect(server.requests).to.have.length(1);
      await eventually(() => server.openConnections === 0, 'the timed-out connection to close');

      const next = await writer.insert({ connection, entity: orders, values: { id: 2 }, route: 'default' });
      expect(next.ok).to.equal(true);
      expect(server.connections).to.have.length(2);
    });

    it('answers connection_timeout within requestTimeoutMs when the server never answers nor acknowledges the cancel', async function () {
      // Before: tedious waited its cancelTimeout (default 5 s) for DONE_ATTN, so the
      // answer left about 5 s after the deadline.
      server.ignoreAttention = true;
      server.handler = (request) => (server.requests.length === 1 ? { delayMs: 60_000 } : server.emulator.handle(request));
      const requestTimeoutMs = 300;
      const writer = writers.make(server, { requestTimeoutMs });
      const started = process.hrtime.bigint();
      const error = errorOf(await writer.update({ connection, entity: orders, key: { column: 'id', value: 1 }, values: { qty: 2 }, route: 'default' }));
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      console.log(`      write to a hung server answered ${error.code} after ${elapsedMs.toFixed(0)} ms (requestTimeoutMs ${requestTimeoutMs})`);

      expect(error.code).to.equal('connection_timeout');
      // The bound the CONTRACT promises, with a generous margin for a loaded machine.
      expect(elapsedMs).to.be.below(requestTimeoutMs + 500);
      expect(server.requests).to.have.length(1);
      await eventually(() => server.openConnections === 0, 'the hung connection to close');
    });

    it('never resends a write whose socket dropped mid-request: connection_unavailable, one request', async function () {
      server.handler = (request) => (server.requests.length === 1 ? { drop: true } : server.emulator.handle(request));
      const writer = writers.make(server);
      const error = errorOf(await writer.update({ connection, entity: orders, key: { column: 'id', value: 1 }, values: { qty: 2 }, route: 'default' }));

      expect(error.code).to.equal('connection_unavailable');
      expect(server.requests).to.have.length(1);

      const next = await writer.insert({ connection, entity: orders, values: { id: 3 }, route: 'default' });
      expect(next.ok).to.equal(true);
      expect(server.requests).to.have.length(2);

      // knex would wait 5 s for the dropped connection's `end` event before closing.
      const closing = Date.now();
      await writer.close();
      expect(Date.now() - closing).to.be.below(1000);
    });

    it('never puts host, user, password or SQL text in a detail or a log line', async function () {
      const logger = new RecordingLogger();
      const port = await refusedPort();
      const writer = writers.make(server, {
        logger,
        connections: { [CONNECTION_ID]: settingsFor(port, { host: 'localhost' }), [OTHER_CONNECTION_ID]: settingsFor(server.port) },
      });
      server.login = requireLogin('nobody', 'nothing');
      const refused = errorOf(await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' }));
      const login = errorOf(await writer.insert({ connection: aSqlServerConnection(OTHER_CONNECTION_ID), entity: orders, values: { id: 1 }, route: 'default' }));
      const seen = JSON.stringify([refused, login, logger.lines]);
      for (const secret of ['localhost', USER, PASSWORD, 'orders_db', 'INSERT', 'Login failed', String(port)]) expect(seen).to.not.include(secret);
    });

    it('keeps the password of a pooled connection out of its enumerable configuration (as knex does)', async function () {
      const writer = writers.make(server);
      expect((await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' })).ok).to.equal(true);
      // The connection as the pool holds it (knex's tarn pool): what a logger or a debugger would print.
      const pools = (writer as unknown as { pools: Map<string, { client: { pool: { free: { resource: { config: { authentication: { options: object } } } }[] } } }> }).pools;
      const pooled = [...pools.values()].flatMap((pool) => pool.client.pool.free.map((free) => free.resource));
      expect(pooled).to.have.length(1);
      const options = pooled[0]?.config.authentication.options as { password?: unknown };
      expect(options.password).to.equal(PASSWORD);
      expect(Object.keys(options)).to.not.include('password');
      expect(JSON.stringify(options)).to.not.include(PASSWORD);
    });
  });

  describe('routes and pools', function () {
    it('sends the egress route from egressSourceAddress and the default route from the default address', async function () {
      const writer = writers.make(server, { egressSourceAddress: '127.0.0.2' });
      await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'egress' });
      await writer.insert({ connection, entity: orders, values: { id: 2 }, route: 'default' });

      expect(server.requests.map((r) => r.clientAddress)).to.deep.equal(['127.0.0.2', '127.0.0.1']);
      expect(server.connections.map((c) => c.clientAddress)).to.deep.equal(['127.0.0.2', '127.0.0.1']);
    });

    it('without egressSourceAddress sends egress traffic from the default address, warning once', async function () {
      const logger = new RecordingLogger();
      const writer = writers.make(server, { logger });
      await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'egress' });
      await writer.insert({ connection, entity: orders, values: { id: 2 }, route: 'egress' });
      expect(server.requests.map((r) => r.clientAddress)).to.deep.equal(['127.0.0.1', '127.0.0.1']);
      expect(logger.lines.map((l) => l.level)).to.deep.equal(['warn']);
    });

    it('reuses one TCP connection for sequential writes', async function () {
      const writer = writers.make(server);
      for (let id = 1; id <= 10; id += 1) {
        const result = await writer.insert({ connection, entity: orders, values: { id, name: `n${id}`, qty: id }, route: 'default' });
        expect(result.ok).to.equal(true);
      }
      expect(server.connections).to.have.length(1);
      expect(server.requests.map((r) => r.connectionId)).to.deep.equal(Array(10).fill(1));
      expect(server.emulator.rowsOf(orders)).to.have.length(10);
    });

    it('keeps one bounded pool per connection and route', async function () {
      const other = await TdsServer.start();
      other.emulator.defineTable(orders, ['id']);
      try {
        server.handler = (request) => ({ ...server.emulator.handle(request), delayMs: 30 });
        const writer = writers.make(server, {
          pool: { max: 2 },
          egressSourceAddress: '127.0.0.2',
          connections: { [CONNECTION_ID]: settingsFor(server.port), [OTHER_CONNECTION_ID]: settingsFor(other.port) },
        });
        const writes = Array.from({ length: 6 }, (_, id) => writer.insert({ connection, entity: orders, values: { id }, route: 'default' }));
        writes.push(writer.insert({ connection, entity: orders, values: { id: 100 }, route: 'egress' }));
        writes.push(writer.insert({ connection: aSqlServerConnection(OTHER_CONNECTION_ID), entity: orders, values: { id: 200 }, route: 'default' }));
        const results = await Promise.all(writes);

        expect(results.every((r) => r.ok)).to.equal(true);
        expect(server.connections.filter((c) => c.clientAddress === '127.0.0.1')).to.have.length(2);
        expect(server.connections.filter((c) => c.clientAddress === '127.0.0.2')).to.have.length(1);
        expect(other.connections).to.have.length(1);
      } finally {
        await writers.closeAll();
        await other.close();
      }
    });

    it('answers connection_timeout at requestTimeoutMs also to writes still waiting for a connection of a full pool', async function () {
      server.handler = () => ({ delayMs: 10_000 });
      const requestTimeoutMs = 300;
      const writer = writers.make(server, { pool: { max: 1 }, connectTimeoutMs: 100, requestTimeoutMs });
      const started = Date.now();
      const results = await Promise.all(
        [1, 2, 3].map((id) => writer.insert({ connection, entity: orders, values: { id }, route: 'default' }).then((r) => ({ r, ms: Date.now() - started }))),
      );
      console.log(`      answered after ${results.map((x) => x.ms).join(', ')} ms (requestTimeoutMs ${requestTimeoutMs})`);

      // The first holds the one connection until its deadline; the others' deadlines pass
      // while they wait for it (before: each waited its turn plus its own timeout).
      expect(results.map(({ r }) => !r.ok && r.error.code)).to.deep.equal(['connection_timeout', 'connection_timeout', 'connection_timeout']);
      expect(server.requests).to.have.length(1);
      for (const { ms } of results) expect(ms).to.be.below(requestTimeoutMs + 500);
    });

    it('answers connection_timeout at requestTimeoutMs when the idle connection died and its replacement hangs at login', async function () {
      // The pool holds one idle connection that the server side has dropped: the pool
      // must replace it, and that wait is held to the write's deadline too.
      const requestTimeoutMs = 300;
      const writer = writers.make(server, { requestTimeoutMs, connectTimeoutMs: 5_000 });
      expect((await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' })).ok).to.equal(true);
      const pools = (writer as unknown as { pools: Map<string, { client: { pool: { free: { resource: { connected?: boolean; socket?: { destroy(): void } } }[] } } }> }).pools;
      const idle = [...pools.values()][0]?.client.pool.free[0]?.resource;
      if (idle === undefined) throw new Error('no idle connection in the pool');
      idle.socket?.destroy();
      await eventually(() => idle.connected === false, 'the dropped connection to be marked');
      server.login = () => ({ delayMs: 10_000 });
      const started = Date.now();
      const error = errorOf(await writer.insert({ connection, entity: orders, values: { id: 2 }, route: 'default' }));
      expect(error.code).to.equal('connection_timeout');
      expect(Date.now() - started).to.be.below(requestTimeoutMs + 700);
    });

    it('poolStats() counts the connections in use, idle, and the writes waiting, per connection and route', async function () {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      server.handler = async (request) => {
        await gate;
        return server.emulator.handle(request);
      };
      const writer = writers.make(server, { pool: { max: 1 } });
      expect(writer.poolStats(), 'no pool before the first write').to.deep.equal([]);
      const writes = [1, 2].map((id) => writer.insert({ connection, entity: orders, values: { id }, route: 'default' }));
      await eventually(() => writer.poolStats()[0]?.pending === 1, 'the second write to wait for the one connection');
      expect(writer.poolStats()).to.deep.equal([{ connectionId: CONNECTION_ID, route: 'default', inUse: 1, idle: 0, pending: 1 }]);
      release();
      expect((await Promise.all(writes)).every((r) => r.ok)).to.equal(true);
      expect(writer.poolStats()).to.deep.equal([{ connectionId: CONNECTION_ID, route: 'default', inUse: 0, idle: 1, pending: 0 }]);
    });

    it('closes connections idle for longer than pool.idleTimeoutMs', async function () {
      const writer = writers.make(server, { pool: { idleTimeoutMs: 100 } });
      await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'default' });
      expect(server.openConnections).to.equal(1);
      await eventually(() => server.openConnections === 0, 'the idle connection to close', 3000);
    });
  });

  describe('lifecycle', function () {
    it('close() drains the write in flight, closes every socket, and later writes reject', async function () {
      server.handler = (request) => ({ ...server.emulator.handle(request), delayMs: 100 });
      const writer = writers.make(server, { egressSourceAddress: '127.0.0.2' });
      await writer.insert({ connection, entity: orders, values: { id: 1 }, route: 'egress' });
      const inFlight = writer.insert({ connection, entity: orders, values: { id: 2 }, route: 'default' });
      await eventually(() => server.requests.length === 2, 'the second request');

      await writer.close();

      expect(await inFlight).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
      await eventually(() => server.openConnections === 0, 'every socket to close');
      expect(server.connections).to.have.length(2);
      await writer.close();
      let rejected: unknown;
      await writer.insert({ connection, entity: orders, values: { id: 3 }, route: 'default' }).catch((e: unknown) => (rejected = e));
      expect(rejected).to.be.instanceOf(Error);
    });

    it('rejects a connection id it has no settings for (a bug), opening no socket', async function () {
      const writer = writers.make(server);
      let rejected: unknown;
      await writer
        .insert({ connection: aSqlServerConnection(OTHER_CONNECTION_ID), entity: orders, values: { id: 1 }, route: 'default' })
        .catch((e: unknown) => (rejected = e));
      expect(rejected).to.be.instanceOf(Error);
      expect((rejected as Error).message).to.include(OTHER_CONNECTION_ID);
      expect(server.connections).to.have.length(0);
    });

    it('matches connection ids case-insensitively (UUIDs)', async function () {
      const result = await writers
        .make(server)
        .insert({ connection: aSqlServerConnection(CONNECTION_ID.toUpperCase()), entity: orders, values: { id: 1 }, route: 'default' });
      expect(result.ok).to.equal(true);
    });

    it('refuses settings out of range, naming the field', function () {
      expect(() => new SqlServerRecordWriter({ connections: {}, egressSourceAddress: 'egress.example' })).to.throw(RangeError, 'egressSourceAddress');
      expect(() => new SqlServerRecordWriter({ connections: {}, requestTimeoutMs: 0 })).to.throw(RangeError, 'requestTimeoutMs');
      expect(() => new SqlServerRecordWriter({ connections: {}, pool: { max: 1.5 } })).to.throw(RangeError, 'pool.max');
      expect(() => new SqlServerRecordWriter({ connections: { [CONNECTION_ID]: settingsFor(70_000) } })).to.throw(RangeError, 'port');
    });
  });
});
