// Issue 16 part 4: webhook endpoints in the PostgreSQL catalog. An endpoint added with the
// admin CLI (`svc-server webhook-endpoints add`) to a catalog.postgres schema gets a
// delivery, verified with standardwebhooks, from an API server child process; the secret
// the CLI printed once appears in no listing and no log line.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { eventually } from '@svc/core/testing';
import { apiKey, call, expectData } from '../../../tools/test-support/http.js';
import { leakScan } from '../../../tools/test-support/leak-scan.js';
import { deleteKeys, REDIS_URL, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';
import { startReceiver, type Receiver } from '../../../tools/test-support/webhook-receiver.js';
import { admin, secretOf, type Ran } from './support/admin-cli.js';
import { buildApiServer, MAIN_DIST, spawnChild } from './support/built-server.js';
import { CATALOG_TEST_URL, dropSchema } from './support/catalog-database.js';
import { closeConnectionsOnKill, listeningLine, logLines, tempDir, writeConfig, type Child } from './support/server-process.js';

const ACCOUNT = 'acct_whpg';
const AGENT = 'agent_whpg';
const ENDPOINT = 'wh_pg_a';

/** The signing secret `webhook-endpoints add` printed on its last line, checked to appear once. */
function webhookSecretOf(out: Ran): string {
  const secret = out.stdout.trimEnd().split('\n').at(-1) ?? '';
  if (!/^whsec_[A-Za-z0-9+/]{43}=$/u.test(secret)) throw new Error(`no whsec_ secret on the last line of: ${out.stdout}\n${out.stderr}`);
  expect(out.stdout.split(secret), 'printed once').to.have.length(2);
  leakScan.registerCredential(secret, 'webhook signing secret made by svc-server');
  return secret;
}

describe('webhook endpoints in the PostgreSQL catalog, added with svc-server (child processes)', function () {
  this.timeout(60_000);
  const schema = `whpg_${process.pid}_${Date.now().toString(36)}`;
  const env = { SVC_CATALOG_URL: CATALOG_TEST_URL, SVC_CATALOG_KEY: randomBytes(32).toString('base64') };
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let config: string;
  let receiver: Receiver;
  let server: Child | undefined;
  const cli = (...args: string[]): Promise<Ran> => admin([...args, '--config', config], env);

  /** Starts the API server with a worker (as `server`) on the catalog, and resolves with its base URL once it logs `listening`. */
  async function startServer(): Promise<string> {
    const path = await writeConfig(
      dir.path,
      {
        base_url: 'http://127.0.0.1:8080',
        listen: { host: '127.0.0.1', port: 0 },
        egress: { url: 'http://127.0.0.1:8081', listen: { host: '127.0.0.1', port: 0 } },
        admin_listen: { port: 0, worker_port: 0 },
        catalog: { postgres: { schema } },
        worker: { enabled: true },
        webhooks: { allow_private_addresses: true, retry_schedule_ms: [1000] },
        shutdown_grace_ms: 1000,
        log_level: 'info',
      },
      'server.yaml',
    );
    const child = spawnChild(process.execPath, [MAIN_DIST, '--config', path], { env });
    server = child;
    const listening = await listeningLine(child);
    const base = `http://127.0.0.1:${String(listening['port'])}`;
    closeConnectionsOnKill(child, [base]);
    return base;
  }

  before(async function () {
    await buildApiServer();
    dir = await tempDir();
    config = await writeConfig(dir.path, { catalog: { postgres: { schema } } }, 'cli.yaml');
    receiver = await startReceiver();
  });

  after(async function () {
    await server?.kill(2000);
    await receiver?.close();
    await dropSchema(schema);
    await dir?.remove();
  });

  it('add (secret printed once), list without the secret, a duplicate id refused naming the agent; the server delivers a verified webhook; remove', async function () {
    expect((await cli('migrate')).stdout).to.match(/0002_webhook_endpoints/u);
    expect((await cli('accounts', 'add', ACCOUNT)).code).to.equal(0);
    expect((await cli('agents', 'add', AGENT, '--account', ACCOUNT)).code).to.equal(0);
    const key = secretOf(await cli('keys', 'create', 'key_whpg', '--account', ACCOUNT), 'svc-');

    // Three refusals, which change nothing: at the same time.
    const [duplicate, badEvent, keyless] = await Promise.all([
      cli('webhook-endpoints', 'add', ACCOUNT, '--id', AGENT, '--url', receiver.url),
      cli('webhook-endpoints', 'add', ACCOUNT, '--url', receiver.url, '--event', 'run.exploded'),
      admin(['webhook-endpoints', 'add', ACCOUNT, '--url', receiver.url, '--config', config], { ...env, SVC_CATALOG_KEY: null }),
    ]);
    expect(duplicate.code).to.equal(5);
    expect(duplicate.stderr).to.equal(`svc-server webhook-endpoints add: id "${AGENT}" is already used by agent "${AGENT}" of account "${ACCOUNT}"\n`);
    expect(badEvent.code).to.equal(2);
    expect(badEvent.stderr).to.include('--event').and.include('run.succeeded');
    expect(keyless.code, keyless.stderr).to.equal(3);
    expect(keyless.stderr).to.include('SVC_CATALOG_KEY').and.not.include('whsec_');

    const added = await cli('webhook-endpoints', 'add', ACCOUNT, '--id', ENDPOINT, '--url', receiver.url, '--event', 'run.succeeded', '--event', 'run.failed');
    expect(added.code, added.stderr).to.equal(0);
    const secret = webhookSecretOf(added);
    expect(added.stdout).to.match(new RegExp(`^webhook endpoint "${ENDPOINT}" added to account "${ACCOUNT}" in the PostgreSQL catalog`, 'u'));
    const byEnv = await cli('webhook-endpoints', 'add', ACCOUNT, '--id', 'wh_pg_env', '--url', 'https://hooks.example.com/svc', '--secret-env', 'WHPG_UNSET_SECRET');
    expect(byEnv.code, byEnv.stderr).to.equal(0);
    expect(byEnv.stdout).to.not.include('whsec_');

    // The two listings, and the API server starting meanwhile (the endpoints are in the catalog already).
    const serverStarted = startServer();
    serverStarted.catch(() => undefined); // awaited below; a failed listing must not leave its rejection unhandled
    const [listed, table] = await Promise.all([cli('webhook-endpoints', 'list', ACCOUNT, '-o', 'json'), cli('webhook-endpoints', 'list')]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout)).to.deep.equal([
      { id: ENDPOINT, account_id: ACCOUNT, url: receiver.url, events: ['run.succeeded', 'run.failed'], secret: 'encrypted' },
      { id: 'wh_pg_env', account_id: ACCOUNT, url: 'https://hooks.example.com/svc', events: ['run.succeeded', 'run.failed', 'run.cancelled'], secret: 'env:WHPG_UNSET_SECRET' },
    ]);
    expect(table.stdout.split('\n')[0]).to.match(/^ID\s+ACCOUNT\s+URL\s+EVENTS\s+SECRET$/u);
    for (const out of [listed, table]) expect(out.stdout + out.stderr).to.not.include(secret).and.not.include(secret.slice(6, 30));

    // The API server: its worker finishes the run, the endpoint gets run.succeeded, signed with the printed secret.
    const base = await serverStarted;
    const started = expectData<{ run_id: string }>(await call(base, 'POST', `/api/v1/agents/${AGENT}/run`, { headers: apiKey(key), json: { message: 'hello from postgres' } }), 202);
    await eventually(() => receiver.received.length >= 1, 'the delivery', 15_000);
    const got = receiver.received[0]!;
    const body = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(body.type).to.equal('run.succeeded');
    expect(body.data['run_id']).to.equal(started.run_id);
    // The endpoint whose variable this server lacks is skipped with a warn line naming it (never a secret).
    const skipped = logLines(server!).filter((l) => l['endpoint_id'] === 'wh_pg_env');
    expect(skipped.map((l) => l['msg'])).to.include('webhook endpoint skipped: its signing secret is not available to this process');
    expect(server!.stdout() + server!.stderr()).to.not.include(secret).and.not.include(secret.slice(6, 30));

    const removed = await cli('webhook-endpoints', 'remove', ENDPOINT);
    expect(removed.stdout).to.equal(`webhook endpoint "${ENDPOINT}" removed from account "${ACCOUNT}" in the PostgreSQL catalog (schema ${schema})\n`);
    expect((await cli('webhook-endpoints', 'remove', ENDPOINT)).code).to.equal(4);
    expect(JSON.parse((await cli('webhook-endpoints', 'list', ACCOUNT, '-o', 'json')).stdout).map((w: { id: string }) => w.id)).to.deep.equal(['wh_pg_env']);
  });

  it('pnpm worker (Redis) reads the endpoints of the PostgreSQL catalog: it delivers for a run started on a server without a worker', async function () {
    const client = await redisOrSkip(this);
    const prefix = uniquePrefix('whpg').replace(/:$/u, '');
    const hook = await startReceiver();
    const children: Child[] = [];
    try {
      const added = await cli('webhook-endpoints', 'add', ACCOUNT, '--id', 'wh_pg_worker', '--url', hook.url);
      expect(added.code, added.stderr).to.equal(0);
      const secret = webhookSecretOf(added);
      const key = secretOf(await cli('keys', 'create', 'key_whpg_worker', '--account', ACCOUNT), 'svc-');
      const settings = {
        base_url: 'http://127.0.0.1:8080',
        listen: { host: '127.0.0.1', port: 0 },
        egress: { url: 'http://127.0.0.1:8081', listen: { host: '127.0.0.1', port: 0 } },
        admin_listen: { port: 0, worker_port: 0 },
        catalog: { postgres: { schema } },
        redis_url: REDIS_URL,
        redis_prefix: prefix,
        worker: { enabled: false },
        webhooks: { allow_private_addresses: true, retry_schedule_ms: [1000] },
        shutdown_grace_ms: 1000,
        log_level: 'info',
      };
      const path = await writeConfig(dir.path, settings, 'redis.yaml');
      const main = spawnChild(process.execPath, [MAIN_DIST, '--config', path], { env });
      const worker = spawnChild(process.execPath, ['examples/api-server/dist/worker.js', '--config', path], { env });
      children.push(main, worker);
      let listening: Record<string, unknown> | undefined;
      await eventually(
        () => {
          for (const c of children) if (c.hasExited()) throw new Error(`a process exited: ${c.stderr()}`);
          listening = logLines(main).find((l) => l['msg'] === 'listening');
          return listening !== undefined && logLines(worker).some((l) => l['msg'] === 'worker started');
        },
        'the server and the worker to start',
        20_000,
        20,
      );
      const base = `http://127.0.0.1:${String(listening!['port'])}`;
      closeConnectionsOnKill(main, [base]);
      const started = expectData<{ run_id: string }>(await call(base, 'POST', `/api/v1/agents/${AGENT}/run`, { headers: apiKey(key), json: { message: 'to the worker' } }), 202);
      await eventually(() => hook.received.length >= 1, 'the delivery from the worker', 15_000);
      const got = hook.received[0]!;
      const body = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
      expect(body).to.deep.include({ type: 'run.succeeded' });
      expect(body.data['run_id']).to.equal(started.run_id);
      // The attempt's line follows the receiver's answer.
      await eventually(() => logLines(worker).some((l) => l['msg'] === 'webhook attempt' && l['endpoint_id'] === 'wh_pg_worker'), "the worker's attempt line", 5_000);
    } finally {
      await Promise.all(children.map((c) => c.kill(2000)));
      await hook.close();
      await deleteKeys(client, prefix);
      client.disconnect();
    }
  });

  it('a YAML catalog does not administer endpoints: exit 2, edit the file', async function () {
    const yaml = await writeConfig(dir.path, { accounts: [{ id: ACCOUNT }] }, 'yaml.yaml');
    const out = await admin(['webhook-endpoints', 'list', '--config', yaml]);
    expect(out.code).to.equal(2);
    expect(out.stderr).to.equal('svc-server webhook-endpoints list: webhook endpoints of a YAML catalog are edited in the file: accounts[].webhook_endpoints (docs/guides/webhooks.md), then reload the server\n');
  });
});
