// Issue 13, Done when 1: three API servers on one PostgreSQL catalog; a key revoked with the
// admin CLI is refused by all three within 1 s, a new key accepted by all three within 1 s,
// no restart. And the catalog database lost: 503 with Retry-After, /readyz 503.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { expect } from 'chai';
import { eventually } from '@svc/core/testing';
import { apiKey, call } from '../../../tools/test-support/http.js';
import { admin, secretOf, type Ran } from './support/admin-cli.js';
import { buildApiServer, MAIN_DIST, spawnChild } from './support/built-server.js';
import { CATALOG_TEST_URL, dropSchema } from './support/catalog-database.js';
import { closeConnectionsOnKill, listeningLine, logLines, tempDir, writeConfig, type Child } from './support/server-process.js';

const PG_PORT = Number(new URL(CATALOG_TEST_URL).port || 5432);
const PG_HOST = new URL(CATALOG_TEST_URL).hostname;
const ACCOUNT = 'acct_pgwire';
const AGENT = 'agent_pgwire';
/** A run no one started: 404 to a valid credential, 401 to a refused one (run status takes API keys and tokens). */
const RUN_PATH = '/api/v1/runs/00000000-0000-4000-8000-000000000000';

/** A built API server child and the ports it reported in its `listening` line. */
interface Instance {
  readonly child: Child;
  readonly base: string;
  readonly adminBase: string;
}

/** A TCP proxy to PostgreSQL that a test can cut (every connection destroyed, no new ones accepted). */
async function startProxy(): Promise<{ port: number; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const db = connect(PG_PORT, PG_HOST);
    for (const s of [client, db]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(db).pipe(client);
    client.once('close', () => db.destroy());
    db.once('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    port,
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

describe('three API servers on one PostgreSQL catalog (issue 13, Done when 1)', function () {
  this.timeout(120_000);
  const schema = `pgwire_${process.pid}_${Date.now().toString(36)}`;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let config: string;
  const children: Child[] = [];
  const env = { SVC_CATALOG_URL: CATALOG_TEST_URL };
  const cli = (...args: string[]): Promise<Ran> => admin([...args, '--config', config], env);

  before(async function () {
    await buildApiServer();
    dir = await tempDir();
    config = await writeConfig(dir.path, { catalog: { postgres: { schema } } }, 'cli.yaml');
  });

  after(async function () {
    await Promise.all(children.map((c) => c.kill(2000)));
    await dropSchema(schema);
    await dir?.remove();
  });

  /** Starts the built server on ports 0 with `catalog.postgres` and reads its ports from its `listening` line. */
  async function startInstance(url = CATALOG_TEST_URL, timeoutMs = 2000): Promise<Instance> {
    const path = await writeConfig(
      dir.path,
      {
        base_url: 'http://127.0.0.1:8080',
        listen: { host: '127.0.0.1', port: 0 },
        egress: { url: 'http://127.0.0.1:8081', listen: { host: '127.0.0.1', port: 0 } },
        admin_listen: { port: 0, worker_port: 0 },
        catalog: { postgres: { schema, timeout_ms: timeoutMs } },
        shutdown_grace_ms: 1000,
        log_level: 'info',
      },
      `server-${children.length}.yaml`,
    );
    const child = spawnChild(process.execPath, [MAIN_DIST, '--config', path], { env: { SVC_CATALOG_URL: url } });
    children.push(child);
    const listening = await listeningLine(child);
    const [base, adminBase] = [`http://127.0.0.1:${String(listening['port'])}`, `http://127.0.0.1:${String(listening['admin_port'])}`];
    return { child: closeConnectionsOnKill(child, [base, adminBase]), base, adminBase };
  }

  it('refuses to start on a schema not migrated, naming svc-server migrate', async function () {
    const path = await writeConfig(dir.path, { listen: { port: 0 }, base_url: 'http://127.0.0.1:8080', egress: { url: 'http://127.0.0.1:8081', listen: { port: 0 } }, catalog: { postgres: { schema } } }, 'unmigrated.yaml');
    const child = spawnChild(process.execPath, [MAIN_DIST, '--config', path], { env });
    children.push(child);
    const exit = await child.exited;
    expect(exit.code).to.equal(1);
    expect(child.stderr()).to.include('svc-server migrate').and.not.include('127.0.0.1');
  });

  it('a key revoked with svc-server is refused, and a new one accepted, by all three within 1 s; the catalog lost answers 503', async function () {
    const migrated = await cli('migrate');
    expect(migrated.code, migrated.stderr).to.equal(0);
    expect(migrated.stdout).to.match(/^applied \d+ migrations: 0001_catalog_tables/u);
    expect((await cli('migrate')).stdout).to.match(/^nothing to migrate/u);
    expect((await cli('accounts', 'add', ACCOUNT)).code).to.equal(0);
    expect((await cli('agents', 'add', AGENT, '--account', ACCOUNT)).code).to.equal(0);
    const keyA = secretOf(await cli('keys', 'create', 'key_a', '--account', ACCOUNT), 'svc-');
    // Refusals map to the CLI's exit codes: a duplicate is a conflict (5).
    const duplicate = await cli('keys', 'create', 'key_a', '--account', ACCOUNT);
    expect(duplicate.code).to.equal(5);
    expect(duplicate.stderr.trim().split('\n')).to.have.length(1);

    const instances = await Promise.all([0, 1, 2].map(() => startInstance()));
    for (const i of instances) {
      // Each instance's cache holds key A's answer before the change.
      expect((await call(i.base, 'GET', RUN_PATH, { headers: apiKey(keyA) })).status).to.equal(404);
      expect((await call(i.adminBase, 'GET', '/readyz')).status).to.equal(200);
      expect((await call(i.adminBase, 'GET', '/metrics')).text).to.match(/svc_dependency_up\{dependency="catalog"\} 1/u);
    }

    /** Polls every instance until `request` answers `status`; the time (epoch ms) of that answer, per instance. */
    const until = (status: number, request: (i: Instance) => Promise<number>): Promise<number[]> =>
      Promise.all(
        instances.map(async (i) => {
          let at = 0;
          await eventually(
            async () => {
              const answered = await request(i);
              at = Date.now();
              return answered === status;
            },
            `status ${status} from ${i.base}`,
            10_000,
            1,
          );
          return at;
        }),
      );

    const revokeStart = Date.now();
    const refused = until(401, async (i) => (await call(i.base, 'GET', RUN_PATH, { headers: apiKey(keyA) })).status);
    expect((await cli('keys', 'revoke', 'key_a')).code).to.equal(0);
    const revokeExit = Date.now();
    const refusedAt = await refused;

    const createStart = Date.now();
    let keyB = '';
    const accepted = until(202, async (i) => {
      if (keyB === '') return 0;
      return (await call(i.base, 'POST', `/api/v1/agents/${AGENT}/run`, { headers: apiKey(keyB), json: { message: 'catalog on PostgreSQL' } })).status;
    });
    keyB = secretOf(await cli('keys', 'create', 'key_b', '--account', ACCOUNT), 'svc-');
    const createExit = Date.now();
    const acceptedAt = await accepted;
    const refusedMs = refusedAt.map((t) => t - revokeExit);
    const acceptedMs = acceptedAt.map((t) => t - createExit);
    // The figures of the report: ms from the CLI command's exit to each instance's first
    // answer with the new outcome (negative: before the CLI process had exited, which closes
    // its pool after the commit), and the command's whole run for scale.
    console.log(
      `      propagation to 3 instances, ms after the CLI exited: revoke ${refusedMs.join(', ')} (CLI ran ${revokeExit - revokeStart} ms); ` +
        `create ${acceptedMs.join(', ')} (CLI ran ${createExit - createStart} ms)`,
    );
    for (const ms of [...refusedMs, ...acceptedMs]) expect(ms).to.be.at.most(1000);
    for (const i of instances) expect(i.child.hasExited(), 'no restart').to.equal(false);

    // The catalog database lost: an instance whose catalog goes through a proxy that is cut.
    const proxy = await startProxy();
    const url = new URL(CATALOG_TEST_URL);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const cut = await startInstance(url.toString(), 500);
    expect((await call(cut.base, 'GET', RUN_PATH, { headers: apiKey(keyB) })).status).to.equal(404);
    await proxy.cut();
    let lost = await call(cut.base, 'GET', RUN_PATH, { headers: apiKey(keyB) });
    await eventually(async () => (lost = await call(cut.base, 'GET', RUN_PATH, { headers: apiKey(keyB) })).status === 503, 'a 503', 10_000, 20);
    expect(lost.headers.get('content-type')).to.match(/^application\/problem\+json/u);
    expect((lost.body as { code: string }).code).to.equal('service_unavailable');
    expect(Number(lost.headers.get('retry-after'))).to.be.at.least(1);
    expect(lost.text).to.not.include(String(proxy.port));
    await eventually(async () => (await call(cut.adminBase, 'GET', '/readyz')).status === 503, '/readyz 503', 10_000, 20);
    expect((await call(cut.adminBase, 'GET', '/metrics')).text).to.match(/svc_dependency_up\{dependency="catalog"\} 0/u);
    // The three others are untouched.
    expect((await call(instances[0]!.base, 'GET', RUN_PATH, { headers: apiKey(keyB) })).status).to.equal(404);
    // Stopped within its bounds whatever the catalog does.
    const exit = await cut.child.kill(15_000);
    expect(exit.signal).to.equal(null);
  });

  it('a SQL Server connection whose password variable this process lacks answers 503 with Retry-After, never 500, and logs the variable by name', async function () {
    const connection = 'b1d2c3e4-0000-4000-8000-00000000c0de';
    const variable = 'SVC_PGWIRE_TEST_PASSWORD_NOT_SET';
    const account = 'acct_pgwire_secret';
    expect((await cli('migrate')).code).to.equal(0);
    expect((await cli('accounts', 'add', account)).code).to.equal(0);
    // The instance starts while the CLI adds the connection and the key: it reads both at the request.
    const [instance, [added, created]] = await Promise.all([
      startInstance(),
      (async () => {
        const connectionAdded = await cli('connections', 'add', connection, '--account', account, '--type', 'sqlserver', '--host', 'sql.pgwire.invalid', '--database', 'sales', '--user', 'svc_writer', '--password-env', variable);
        return [connectionAdded, await cli('keys', 'create', 'key_secret_unset', '--account', account)] as const;
      })(),
    ]);
    expect(added.code, added.stderr).to.equal(0);
    const key = secretOf(created, 'svc-');
    const write = await call(instance.base, 'POST', `/api/v1/connections/${connection}/records`, { headers: apiKey(key), json: { entity: 'dbo.orders', values: { qty: 1 } } });
    expect(write.status, write.text).to.equal(503);
    expect((write.body as { code: string }).code).to.equal('service_unavailable');
    expect(Number(write.headers.get('retry-after'))).to.be.at.least(1);
    for (const hidden of ['sql.pgwire.invalid', 'svc_writer', variable]) expect(write.text).to.not.include(hidden);
    const errorLine = (): Record<string, unknown> | undefined => logLines(instance.child).find((l) => l['connection_id'] === connection && l['level'] === 50);
    await eventually(() => errorLine() !== undefined, 'the error line', 5000);
    expect(String(errorLine()!['reason'])).to.include(variable);
    expect(JSON.stringify(logLines(instance.child))).to.not.include('sql.pgwire.invalid');
  });
});
