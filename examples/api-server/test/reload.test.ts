// RunningServer.reload in process: what changes live (catalogs, the writers' routes, a
// retired SQL Server connection's pools) and what does not (every other setting).
import { TdsServer } from '@svc/tds-server';
import { sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { expect } from 'chai';
import { fixedSettingsChanged } from '../src/reload.js';
import { startServer, type RunningServer } from '../src/server.js';
import { ConfigError, settingsFrom } from '../src/settings.js';
import { apiKey, call, expectData, expectProblem } from '../../../tools/test-support/http.js';
import { freePort } from './support/server-process.js';

const KEY_1 = 'svc-reload-inproc-key-1-000000000000';
const KEY_2 = 'svc-reload-inproc-key-2-000000000000';
const DEMO_1 = '11111111-1111-4111-8111-111111111111';
const DEMO_2 = '22222222-2222-4222-8222-222222222222';
const SQL = '33333333-3333-4333-8333-333333333333';
const PASSWORD_ENV = 'SVC_RELOAD_TEST_DB_PASSWORD';
const MISSING_ENV = 'SVC_RELOAD_TEST_NOT_SET';

describe('RunningServer.reload (in process)', function () {
  this.timeout(30_000);
  let tds: TdsServer;
  let server: RunningServer | undefined;
  let base: string;
  let base0: Record<string, unknown>;

  before(async function () {
    tds = await TdsServer.start();
    tds.emulator.defineTable({ schema: 'dbo', table: 'orders' }, ['id', 'sku', 'qty'], []);
    process.env[PASSWORD_ENV] = 'reload-test-Pa55word!';
    delete process.env[MISSING_ENV];
  });
  after(async function () {
    await tds?.close();
    delete process.env[PASSWORD_ENV];
  });
  beforeEach(async function () {
    const [port, egressPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    base0 = {
      base_url: base,
      listen: { host: '127.0.0.1', port },
      egress: { url: `http://127.0.0.1:${egressPort}`, listen: { host: '127.0.0.1', port: egressPort } },
      worker: { enabled: false },
      shutdown_grace_ms: 2_000,
      sqlserver: { connect_timeout_ms: 3_000, request_timeout_ms: 10_000 },
    };
  });
  afterEach(async function () {
    await server?.stop();
    server = undefined;
  });

  const sqlConnection = (passwordEnv = PASSWORD_ENV) => ({
    id: SQL,
    type: 'sqlserver',
    sqlserver: { host: '127.0.0.1', port: tds.port, database: 'sales', user: 'svc_writer', password_env: passwordEnv, encrypt: false, trust_server_certificate: true },
  });
  const settings = (account: Record<string, unknown>, extra: Record<string, unknown> = {}) => settingsFrom({ ...base0, ...extra, accounts: [{ id: 'acct_r', ...account }] });
  const insert = (key: string, connection: string, values: Record<string, unknown>) =>
    call(base, 'POST', `/api/v1/connections/${connection}/records`, { headers: apiKey(key), json: { entity: 'dbo.orders', values } });
  const update = (key: string, connection: string, id: number) =>
    call(base, 'PATCH', `/api/v1/connections/${connection}/records`, { headers: apiKey(key), json: { entity: 'dbo.orders', key_column: 'id', key_value: id, values: { qty: 9 } } });

  it('swaps keys and connections; demo connections keep their own tables, a kept one keeps its rows; other settings stay and are named', async function () {
    const key1 = { id: 'key_1', sha256: sha256Hex(KEY_1) };
    const key2 = { id: 'key_2', sha256: sha256Hex(KEY_2) };
    const running = settings({ api_keys: [key1], connections: [{ id: DEMO_1, type: 'sqlserver' }, { id: DEMO_2, type: 'sqlserver' }] });
    server = await startServer(running);
    expectData(await insert(KEY_1, DEMO_1, { id: 42, sku: 'only-in-1' }), 201);
    // One table set per connection (docs/CONTRACT.md "Isolation between accounts").
    expect(expectData<{ rows_affected: number }>(await update(KEY_1, DEMO_2, 42), 200).rows_affected, 'row 42 is not in DEMO_2').to.equal(0);
    expect(expectData<{ rows_affected: number }>(await update(KEY_1, DEMO_1, 42), 200).rows_affected).to.equal(1);

    const next = settings(
      { api_keys: [key2], connections: [{ id: DEMO_1, type: 'sqlserver' }] },
      { rate_limits: { credential: { requests: 5, window_seconds: 60 } }, shutdown_grace_ms: 3_000, log_level: 'debug' },
    );
    const report = await server.reload(next, 'test');
    expect(report.counts).to.deep.equal({ accounts: 1, apiKeys: 1, oauthTokens: 0, agents: 0, connections: 1 });
    expect(report.fixedSettingsChanged).to.have.members(['rate_limits', 'shutdown_grace_ms', 'log_level']);
    expect(report.sqlServerConnectionsRetired).to.deep.equal([]);

    expectProblem(await insert(KEY_1, DEMO_1, { sku: 'old key' }), 401, 'invalid_credential');
    const kept = await update(KEY_2, DEMO_1, 42);
    expect(expectData<{ rows_affected: number }>(kept, 200).rows_affected, 'DEMO_1 kept its rows').to.equal(1);
    expect(kept.headers.get('ratelimit-limit'), 'rate limits stay as they were').to.equal('600');
    expectProblem(await update(KEY_2, DEMO_2, 42), 404, 'not_found');
    expect(fixedSettingsChanged(running, running)).to.deep.equal([]);
  });

  it('a removed SQL Server connection answers 404 at once; its write in flight completes, then its pool closes; added again, it writes on a new pool', async function () {
    const account = { api_keys: [{ id: 'key_1', sha256: sha256Hex(KEY_1) }], connections: [sqlConnection()] };
    server = await startServer(settings(account));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    tds.handler = async (request) => {
      if (request.parameters.some((p) => p.value === 'held')) await gate;
      return tds.emulator.handle(request);
    };
    try {
      const held = insert(KEY_1, SQL, { id: 1, sku: 'held', qty: 1 });
      await eventually(() => tds.requests.some((r) => r.parameters.some((p) => p.value === 'held')), 'the held write to reach the TDS server');
      const connectionsBefore = tds.connections.length;
      expect(tds.openConnections).to.be.at.least(1);

      const report = await server.reload(settings({ ...account, connections: [] }), 'test');
      expect(report.sqlServerConnectionsRetired).to.deep.equal([SQL]);
      expectProblem(await insert(KEY_1, SQL, { id: 2, sku: 'after removal' }), 404, 'not_found');
      expect(tds.openConnections, 'the pool stays open while its write is in flight').to.be.at.least(1);

      release();
      expect(expectData<{ rows_affected: number }>(await held, 201).rows_affected).to.equal(1);
      await eventually(() => tds.openConnections === 0, 'the retired pool to close its connections');
      expect(tds.emulator.rowsOf({ schema: 'dbo', table: 'orders' })).to.deep.include({ id: 1, sku: 'held', qty: 1 });

      await server.reload(settings(account), 'test');
      expectData(await insert(KEY_1, SQL, { id: 3, sku: 'again', qty: 1 }), 201);
      expect(tds.connections.length, 'a new connection was opened').to.be.above(connectionsBefore);
    } finally {
      release();
      tds.handler = (request) => tds.emulator.handle(request);
    }
  });

  it('a new SQL Server connection whose password variable is not set is refused (ConfigError naming the field); nothing changes', async function () {
    const key1 = { id: 'key_1', sha256: sha256Hex(KEY_1) };
    server = await startServer(settings({ api_keys: [key1], connections: [{ id: DEMO_1, type: 'sqlserver' }] }));
    const refused = server.reload(settings({ api_keys: [{ id: 'key_2', sha256: sha256Hex(KEY_2) }], connections: [sqlConnection(MISSING_ENV)] }), 'test');
    const error = await refused.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message).to.include(`accounts[0].connections[0].sqlserver.password_env: environment variable ${MISSING_ENV} is not set`);
    expectData(await insert(KEY_1, DEMO_1, { sku: 'still served' }), 201);
    expectProblem(await insert(KEY_2, DEMO_1, { sku: 'not yet' }), 401, 'invalid_credential');
  });

  it('after stop() a reload is refused', async function () {
    server = await startServer(settings({}));
    const stopped = server.stop();
    const error = await server.reload(settings({}), 'test').then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    await stopped;
    expect(error?.message).to.equal('the server is stopping: configuration not reloaded');
  });
});
