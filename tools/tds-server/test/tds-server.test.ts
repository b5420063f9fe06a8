import { expect } from 'chai';
import { once } from 'node:events';
import { Connection, Request, TYPES, type ConnectionConfiguration } from 'tedious';
import { eventually } from '@svc/core/testing';
import { requireLogin, TdsServer } from '@svc/tds-server';

function config(server: TdsServer, options: Partial<NonNullable<ConnectionConfiguration['options']>> = {}): ConnectionConfiguration {
  return {
    server: '127.0.0.1',
    authentication: { type: 'default', options: { userName: 'tester', password: 'pw' } },
    options: { port: server.port, database: 'testdb', encrypt: false, ...options },
  };
}

async function connect(server: TdsServer, options: Partial<NonNullable<ConnectionConfiguration['options']>> = {}): Promise<Connection> {
  const connection = new Connection(config(server, options));
  await new Promise<void>((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())));
  return connection;
}

function batch(connection: Connection, sql: string): Promise<{ rows: unknown[][]; columns: string[] }> {
  return new Promise((resolve, reject) => {
    const rows: unknown[][] = [];
    let columns: string[] = [];
    const request = new Request(sql, (error) => (error ? reject(error) : resolve({ rows, columns })));
    request.on('columnMetadata', (meta) => {
      columns = (Array.isArray(meta) ? meta : Object.values(meta)).map((m) => m.colName);
    });
    request.on('row', (values: { value: unknown }[]) => rows.push(values.map((v) => v.value)));
    connection.execSqlBatch(request);
  });
}

async function closed(connection: Connection): Promise<void> {
  const ended = once(connection, 'end');
  connection.close();
  await ended;
}

describe('TdsServer (the scripted server, driven by raw tedious)', function () {
  let server: TdsServer;

  beforeEach(async function () {
    server = await TdsServer.start();
  });

  afterEach(async function () {
    await server.close();
  });

  it('logs tedious in, records a SQL batch, and answers a scripted result set tedious decodes', async function () {
    server.handler = () => ({
      results: [
        {
          kind: 'rows',
          columns: [
            { name: 'i', type: 'int' },
            { name: 'b', type: 'bigint' },
            { name: 'f', type: 'float' },
            { name: 'ok', type: 'bit' },
            { name: 's', type: 'nvarchar' },
          ],
          rows: [
            [42, 2n ** 40n, 1.5, true, 'Zoë ✓'],
            [null, null, null, null, null],
          ],
        },
      ],
    });
    const connection = await connect(server);
    try {
      const answer = await batch(connection, 'SELECT 42');
      expect(answer.columns).to.deep.equal(['i', 'b', 'f', 'ok', 's']);
      expect(answer.rows).to.deep.equal([
        [42, String(2 ** 40), 1.5, true, 'Zoë ✓'],
        [null, null, null, null, null],
      ]);
      expect(server.requests).to.deep.equal([{ connectionId: 1, clientAddress: '127.0.0.1', kind: 'batch', sql: 'SELECT 42', parameters: [] }]);
      expect(server.connections[0]?.login).to.include({ userName: 'tester', database: 'testdb', appName: 'Tedious' });
    } finally {
      await closed(connection);
    }
  });

  it('records another procedure with its wire types; the emulator answers 2812', async function () {
    const connection = await connect(server);
    try {
      const done = new Promise<Error | undefined>((resolve) => {
        const r = new Request('dbo.do_it', (error) => resolve(error ?? undefined));
        r.addParameter('n', TYPES.Int, 3);
        r.addParameter('s', TYPES.NVarChar, 'x');
        connection.callProcedure(r);
      });
      const error = await done;
      expect(error?.message).to.equal("Could not find stored procedure 'dbo.do_it'.");
      expect(server.requests[0]).to.deep.include({ kind: 'rpc', procedure: 'dbo.do_it', sql: '' });
      expect(server.requests[0]?.parameters).to.deep.equal([
        { name: '@n', type: 'intn(4)', value: 3 },
        { name: '@s', type: 'nvarchar(2)', value: 'x' },
      ]);
    } finally {
      await closed(connection);
    }
  });

  it('refuses a wrong password with 18456 and closes the socket', async function () {
    server.login = requireLogin('tester', 'right');
    const connection = new Connection(config(server));
    const error = await new Promise<Error | undefined>((resolve) => connection.connect((e) => resolve(e)));
    expect(error?.message).to.equal("Login failed for user 'tester'.");
    expect((error as { code?: string }).code).to.equal('ELOGIN');
    await eventually(() => server.openConnections === 0, 'the refused connection to close');
  });

  it('acknowledges an ATTENTION after a timeout so the same connection stays usable', async function () {
    server.handler = (request) => (request.sql === 'slow' ? { delayMs: 10_000 } : { results: [{ kind: 'done', rowCount: 3 }] });
    const connection = await connect(server, { requestTimeout: 100 });
    try {
      const timedOut: unknown = await batch(connection, 'slow').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((timedOut as { code?: string }).code).to.equal('ETIMEOUT');
      const rowCount = await new Promise<number | undefined>((resolve, reject) => {
        const request = new Request('fast', (error, count) => (error ? reject(error) : resolve(count)));
        connection.execSqlBatch(request);
      });
      expect(rowCount).to.equal(3);
      expect(server.connections).to.have.length(1);
    } finally {
      await closed(connection);
    }
  });

  it('close() ends connected clients and resolves once every socket is closed', async function () {
    const connection = await connect(server);
    const errors: Error[] = [];
    connection.on('error', (e: Error) => errors.push(e));
    const ended = new Promise((resolve) => connection.once('end', resolve));
    await server.close();
    await ended;
    expect(server.openConnections).to.equal(0);
    expect(errors.map((e) => e.message)).to.deep.equal(['Connection lost - socket hang up']);
  });
});
