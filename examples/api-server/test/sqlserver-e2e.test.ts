import { TdsServer } from '@svc/tds-server';
import { sha256Hex } from '@svc/core';
import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { freePort, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

// The API server as a process, writing rows through the real tedious driver to the
// scripted TDS server on loopback (no SQL Server can run here).
const API_KEY = 'svc-sqlserver-e2e-key-0123456789';
const CONNECTION = '5d0f3c1e-2b4a-4e6d-8f9a-1b2c3d4e5f60';
const PASSWORD = 'e2e-Secret-Pa55word!';
/**
 * The database's host: a loopback address no other server of the suite uses (the API
 * server listens on 127.0.0.1, its egress source is 127.0.0.2), so that the leak scan can
 * look for it in every answer and log line.
 */
const DB_HOST = '127.0.0.3';

describe('API server against the scripted TDS server (SQL Server writer)', function () {
  this.timeout(60_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let tds: TdsServer;
  let server: ServerProcess;
  let base: string;
  let egress: string;

  before(async function () {
    tds = await TdsServer.start({ host: DB_HOST });
    tds.emulator.defineTable({ schema: 'dbo', table: 'orders' }, ['id', 'sku', 'qty'], [
      { id: 1, sku: 'A-1', qty: 1 },
      { id: 7, sku: 'dup-a', qty: 1 },
      { id: 7, sku: 'dup-b', qty: 2 },
    ]);
    const [port, egressPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    egress = `http://127.0.0.1:${egressPort}`;
    dir = await tempDir();
    const config = await writeConfig(dir.path, {
        base_url: base,
        listen: { host: '127.0.0.1', port },
        egress: { url: egress, listen: { host: '127.0.0.1', port: egressPort }, source_address: '127.0.0.2' },
        log_level: 'info',
        worker: { enabled: false },
        sqlserver: { connect_timeout_ms: 3000, request_timeout_ms: 3000 },
        accounts: [
          {
            id: 'acct_sql',
            api_keys: [{ id: 'key_sql', sha256: sha256Hex(API_KEY) }],
            connections: [
              {
                id: CONNECTION,
                type: 'sqlserver',
                sqlserver: { host: DB_HOST, port: tds.port, database: 'sales', user: 'svc_writer', password_env: 'E2E_DB_PASSWORD', encrypt: false, trust_server_certificate: true },
              },
            ],
          },
        ],
    });
    server = await startServerProcess(config, base, egress, 20_000, { E2E_DB_PASSWORD: PASSWORD });
  });

  after(async function () {
    await server?.kill();
    await tds?.close();
    await dir?.remove();
  });

  function write(method: 'POST' | 'PATCH', body: unknown, options: { at?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const url = options.at === 'egress' ? `${egress}/v1/connections/${CONNECTION}/records` : `${base}/api/v1/connections/${CONNECTION}/records`;
    return fetch(url, {
      method,
      headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json', ...options.headers },
      body: JSON.stringify(body),
    });
  }

  it('inserts a row: 201 {data: {rows_affected: 1}}, the row is in the table', async function () {
    const r = await write('POST', { entity: 'dbo.orders', values: { id: 2, sku: 'Zoë', qty: 3 } });
    expect(r.status).to.equal(201);
    expect(await r.json()).to.deep.equal({ data: { rows_affected: 1 } });
    expect(tds.emulator.rowsOf({ schema: 'dbo', table: 'orders' })).to.deep.include({ id: 2, sku: 'Zoë', qty: 3 });
  });

  it('updates the row the key selects: 200 {data: {rows_affected: 1}}', async function () {
    const r = await write('PATCH', { entity: 'dbo.orders', key_column: 'id', key_value: 1, values: { qty: 10 } });
    expect(r.status).to.equal(200);
    expect(await r.json()).to.deep.equal({ data: { rows_affected: 1 } });
    expect(tds.emulator.rowsOf({ schema: 'dbo', table: 'orders' })).to.deep.include({ id: 1, sku: 'A-1', qty: 10 });
  });

  it('answers 409 ambiguous_key and changes nothing when the key selects two rows', async function () {
    const r = await write('PATCH', { entity: 'dbo.orders', key_column: 'id', key_value: 7, values: { qty: 0 } });
    expect(r.status).to.equal(409);
    expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(((await r.json()) as { code: string }).code).to.equal('ambiguous_key');
    const dups = tds.emulator.rowsOf({ schema: 'dbo', table: 'orders' })?.filter((row) => row['id'] === 7);
    expect(dups?.map((row) => row['qty'])).to.deep.equal([1, 2]);
  });

  it('answers 504 connection_timeout within request_timeout_ms when the database never answers nor acknowledges the cancel', async function () {
    // docs/CONTRACT.md "Dependencies and faults": the 504 is sent within request_timeout_ms
    // (3000 here); before, tedious's cancelTimeout added 5 s.
    const emulate = tds.handler;
    tds.ignoreAttention = true;
    tds.handler = (request) => (request.sql.includes('[hung]') ? { delayMs: 60_000 } : emulate(request));
    try {
      const started = process.hrtime.bigint();
      const r = await write('POST', { entity: 'dbo.hung', values: { id: 1 } });
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      console.log(`      504 after ${elapsedMs.toFixed(0)} ms (request_timeout_ms 3000)`);
      expect(r.status).to.equal(504);
      expect(((await r.json()) as { code: string }).code).to.equal('connection_timeout');
      expect(elapsedMs).to.be.below(3000 + 1000);
    } finally {
      tds.handler = emulate;
      tds.ignoreAttention = false;
    }
  });

  it('answers 400 unknown_entity for a table that does not exist, revealing no SQL, host or user', async function () {
    const r = await write('POST', { entity: 'dbo.missing', values: { id: 1 } });
    expect(r.status).to.equal(400);
    const text = await r.text();
    expect(JSON.parse(text).code).to.equal('unknown_entity');
    for (const secret of ['INSERT', 'sp_executesql', DB_HOST, 'svc_writer', PASSWORD, 'sales']) expect(text).to.not.include(secret);
  });

  it('reaches the database from the egress source address through the egress address and with X-Svc-Egress: true, and from the default one otherwise', async function () {
    const seen = async (send: () => Promise<Response>): Promise<string> => {
      const before = tds.requests.length;
      const r = await send();
      expect(r.status).to.equal(201);
      const request = tds.requests.slice(before).find((q) => q.sql.includes('INSERT'));
      expect(request, 'the INSERT reached the TDS server').to.not.equal(undefined);
      return request!.clientAddress;
    };
    expect(await seen(() => write('POST', { entity: 'dbo.orders', values: { id: 20 } }))).to.equal('127.0.0.1');
    expect(await seen(() => write('POST', { entity: 'dbo.orders', values: { id: 21 } }, { headers: { 'X-Svc-Egress': 'false' } }))).to.equal('127.0.0.1');
    expect(await seen(() => write('POST', { entity: 'dbo.orders', values: { id: 22 } }, { headers: { 'X-Svc-Egress': 'TRUE' } }))).to.equal('127.0.0.2');
    expect(await seen(() => write('POST', { entity: 'dbo.orders', values: { id: 23 } }, { at: 'egress' }))).to.equal('127.0.0.2');
    const patched = await write('PATCH', { entity: 'dbo.orders', key_column: 'id', key_value: 23, values: { qty: 5 } }, { at: 'egress' });
    expect(patched.status).to.equal(200);
  });

  it('writes 9007199254740993 and 12345678901234567890.123456789 digit for digit (docs/CONTRACT.md "Exact values"), also from a gzip body', async function () {
    const exact = async (raw: string | Buffer, headers: Record<string, string> = {}): Promise<readonly unknown[]> => {
      const before = tds.requests.length;
      const r = await fetch(`${base}/api/v1/connections/${CONNECTION}/records`, {
        method: 'POST',
        headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json', ...headers },
        body: raw,
      });
      expect(r.status, await r.clone().text()).to.equal(201);
      const request = tds.requests.slice(before).find((q) => q.sql.includes('INSERT'));
      expect(request?.sql).to.include('VALUES (@p0, CAST(@p1 AS decimal(38, 9)))');
      return request?.parameters.map((p) => [p.type, p.value]) ?? [];
    };
    // Raw text: JSON.stringify of a JS number could not even write these digits.
    const text = '{"entity":"dbo.orders","values":{"id":9007199254740993,"qty":12345678901234567890.123456789}}';
    const expected = [
      ['bigint', 9007199254740993n],
      ['varchar(41)', '12345678901234567890.123456789'],
    ];
    expect(await exact(text)).to.deep.equal(expected);
    expect(await exact(gzipSync(text), { 'Content-Encoding': 'gzip' })).to.deep.equal(expected);
  });

  it('refuses a number no bigint or decimal(38, s) holds with 400 invalid_value naming it, before the database', async function () {
    const before = tds.requests.length;
    const r = await fetch(`${base}/api/v1/connections/${CONNECTION}/records`, {
      method: 'PATCH',
      headers: { 'X-API-Key': API_KEY, 'Content-Type': 'application/json' },
      body: '{"entity":"dbo.orders","key_column":"id","key_value":1e-39,"values":{"qty":123456789012345678901234567890123456789}}',
    });
    expect(r.status).to.equal(400);
    const problem = (await r.json()) as { code: string; errors: { path: string }[] };
    expect(problem.code).to.equal('invalid_value');
    expect(problem.errors.map((e) => e.path)).to.deep.equal(['/values/qty', '/key_value']);
    expect(tds.requests.length).to.equal(before);
  });

  it('never writes the database password, host or user into its log', function () {
    const output = server.stdout() + server.stderr();
    expect(output).to.not.include(PASSWORD);
    expect(output).to.not.include('svc_writer');
    expect(output).to.not.include(DB_HOST);
    expect(output).to.include('"msg":"request"');
  });
});
