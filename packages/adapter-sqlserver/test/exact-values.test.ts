import { expect } from 'chai';
import { ExactNumber, type EntityName } from '@svc/core';
import { TdsServer } from '@svc/tds-server';
import { aSqlServerConnection, Writers } from './support.js';

// docs/CONTRACT.md "Exact values", proved by what the scripted TDS server decodes from the
// wire: its decoder is its own (tds-protocol.ts), not tedious's.
describe('SqlServerRecordWriter: numbers reach SQL Server digit for digit', function () {
  let server: TdsServer;
  const writers = new Writers();
  const connection = aSqlServerConnection();
  const orders: EntityName = { schema: 'dbo', table: 'orders' };

  beforeEach(async function () {
    server = await TdsServer.start();
    server.emulator.defineTable(orders, ['id', 'qty', 'price', 'ratio']);
  });
  afterEach(async function () {
    await writers.closeAll();
    await server.close();
  });

  it('binds 9007199254740993 as bigint and 12345678901234567890.123456789 as exact decimal text', async function () {
    const values = {
      qty: new ExactNumber('9007199254740993'),
      price: new ExactNumber('12345678901234567890.123456789'),
      ratio: 0.1,
    };
    const result = await writers.make(server).insert({ connection, entity: orders, values, route: 'default' });
    expect(result).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
    const request = server.requests[0];
    expect(request?.sql).to.include('VALUES (@p0, CAST(@p1 AS decimal(38, 9)), CAST(@p2 AS decimal(38, 1)))');
    expect(request?.parameters).to.deep.equal([
      { name: '@p0', type: 'bigint', value: 9007199254740993n },
      { name: '@p1', type: 'varchar(41)', value: '12345678901234567890.123456789' },
      { name: '@p2', type: 'varchar(41)', value: '0.1' },
    ]);
  });

  it('binds JS integers as int within its range and as bigint beyond, the same as their exact text', async function () {
    const values = { id: 2_147_483_647, qty: 2_147_483_648, price: -0, ratio: Number.MIN_SAFE_INTEGER };
    const exact = { id: new ExactNumber('2147483647'), qty: new ExactNumber('2147483648'), price: new ExactNumber('-0'), ratio: new ExactNumber('-9007199254740991') };
    const writer = writers.make(server);
    for (const row of [values, exact]) expect(await writer.insert({ connection, entity: orders, values: row, route: 'default' })).to.deep.equal({ ok: true, value: { rowsAffected: 1 } });
    const expected = [
      { name: '@p0', type: 'int', value: 2147483647 },
      { name: '@p1', type: 'bigint', value: 2147483648 },
      { name: '@p2', type: 'int', value: 0 },
      { name: '@p3', type: 'bigint', value: -9007199254740991 },
    ];
    expect(server.requests.map((r) => r.parameters)).to.deep.equal([expected, expected]);
    expect(Object.is(server.requests[0]?.parameters[2]?.value, 0)).to.equal(true, '-0 arrives as 0');
  });

  it('binds an exact key_value and 38-digit decimals in an update, in plain notation', async function () {
    const values = { price: new ExactNumber('-1.2345678901234567890123456789012345678E+19'), ratio: new ExactNumber('1E-38') };
    const key = { column: 'id', value: new ExactNumber('-9223372036854775808') };
    const result = await writers.make(server).update({ connection, entity: orders, key, values, route: 'default' });
    expect(result).to.deep.equal({ ok: true, value: { rowsAffected: 0 } });
    const request = server.requests[0];
    expect(request?.sql).to.include('SET [price] = CAST(@p0 AS decimal(38, 18)), [ratio] = CAST(@p1 AS decimal(38, 38)) WHERE [id] = @p2;');
    expect(request?.parameters).to.deep.equal([
      { name: '@p0', type: 'varchar(41)', value: '-12345678901234567890.123456789012345678' },
      { name: '@p1', type: 'varchar(41)', value: `0.${'0'.repeat(37)}1` },
      { name: '@p2', type: 'bigint', value: -9223372036854775808n },
    ]);
  });

  it('refuses to bind a number no bigint or decimal(38, s) holds (validation refuses it first)', async function () {
    const values = { qty: new ExactNumber('1e400') };
    let error: unknown;
    try {
      await writers.make(server).insert({ connection, entity: orders, values, route: 'default' });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(Error);
    expect(server.requests).to.have.length(0);
  });
});

// Why statements.ts does not use tedious's TYPES.Decimal: measured on the wire.
describe("tedious 19's TYPES.Decimal (the reason numbers are bound as decimal text)", function () {
  it('cannot send 12345678901234567890.123456789 at all, and rounds 1234567890.123456789', async function () {
    const { Connection, Request, TYPES } = await import('tedious');
    const server = await TdsServer.start();
    server.handler = () => ({ results: [{ kind: 'done' }] });
    const connection = new Connection({
      server: '127.0.0.1',
      authentication: { type: 'default', options: { userName: 'tester', password: 'pw' } },
      options: { port: server.port, database: 'testdb', encrypt: false },
    });
    const send = (value: string): Promise<unknown> =>
      new Promise((resolve) => {
        const request = new Request('SELECT @d', (error) => resolve(error ?? server.requests.at(-1)?.parameters[0]?.value));
        request.addParameter('d', TYPES.Decimal, value, { precision: 38, scale: 9 });
        connection.execSql(request);
      });
    try {
      await new Promise<void>((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())));
      const big = await send('12345678901234567890.123456789');
      expect(big).to.be.instanceOf(Error); // value × 10^9 as a double, then 64 bits: out of range
      const small = await send('1234567890.123456789');
      console.log(`      tedious TYPES.Decimal(38, 9): 12345678901234567890.123456789 → ${String((big as Error).message)}; 1234567890.123456789 → ${String(small)}`);
      expect(small).to.be.a('string').and.not.equal('1234567890.123456789');
    } finally {
      const ended = new Promise((resolve) => connection.once('end', resolve));
      connection.close();
      await ended;
      await server.close();
    }
  });
});
