import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'chai';
import { parse } from 'yaml';
import { sha256Hex } from '@svc/core';
import { addresses, AGENTS, e2eConfig, SECRETS, SQL_A, type Addresses } from './support/fixture.js';
import { apiKey, bearer, call, expectData, expectProblem } from '../../../tools/test-support/http.js';
import { CLI, runNode, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

const MAIN = 'examples/api-server/src/main.ts';

/** Resolves `refused` when nothing listens on the port any more, `open` when something does. */
function probe(port: number): Promise<'open' | 'refused'> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNREFUSED' ? resolve('refused') : reject(e)));
  });
}

/** Polls `probe` until the port refuses connections, or fails at the deadline. */
async function untilRefused(port: number, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while ((await probe(port)) === 'open') {
    if (Date.now() > deadline) throw new Error(`port ${port} still accepts connections after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20)); // polling interval, bounded by the deadline
  }
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

describe('examples/api-server lifecycle (child process)', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess | undefined;

  beforeEach(async function () {
    dir = await tempDir();
  });
  afterEach(async function () {
    await server?.kill();
    server = undefined;
    await dir.remove();
  });

  it('an invalid, unparsable or missing configuration file exits non-zero with a message naming the bad field or file', async function () {
    const at = await addresses();
    const config = e2eConfig(at, {
      rate_limits: { credential: { requests: 0, window_seconds: 60 } },
      log_levle: 'info',
    });
    (config['accounts'] as { api_keys?: { sha256: string }[] }[])[0]!.api_keys![0]!.sha256 = 'not-a-digest';
    const invalidPath = await writeConfig(dir.path, config);
    const brokenPath = await writeConfig(dir.path, 'listen: [unclosed\n  port: 8080', 'broken.yaml');
    // Three processes at once: each takes seconds to load from source.
    const [invalid, broken, missing] = await Promise.all([
      runNode(MAIN, ['--config', invalidPath]),
      runNode(MAIN, ['--config', brokenPath]),
      runNode(MAIN, ['--config', `${dir.path}/nowhere.yaml`]),
    ]);
    expect(invalid.code, invalid.stderr).to.equal(2);
    expect(invalid.stderr).to.include('rate_limits.credential.requests');
    expect(invalid.stderr).to.include('log_levle');
    expect(invalid.stderr).to.include('accounts[0].api_keys[0].sha256');
    expect(broken.code, broken.stderr).to.not.equal(0);
    expect(broken.stderr).to.include('broken.yaml');
    expect(missing.code, missing.stderr).to.not.equal(0);
    expect(missing.stderr).to.include('nowhere.yaml');
    expect(await probe(at.port), 'nothing was started').to.equal('refused');
  });

  it('`svc keys create` prints a secret and a digest equal to sha256Hex(secret); a config with that digest authenticates', async function () {
    const [keyOut, tokenOut, againOut] = await Promise.all([
      runNode(CLI, ['keys', 'create', '--kind', 'api_key', '--id', 'key_cli']),
      runNode(CLI, ['keys', 'create', '--kind', 'oauth', '--id', 'tok_cli', '--scope', 'runs:write', '--expires-in-days', '1']),
      // As `pnpm keys create --id again` runs it: the script already names `keys`.
      runNode(CLI, ['create', '--id', 'again']),
    ]);
    expect(keyOut.code, keyOut.stderr).to.equal(0);
    expect(tokenOut.code, tokenOut.stderr).to.equal(0);

    const minted = (out: string, prefix: string) => {
      const secret = new RegExp(`(${prefix}[A-Za-z0-9_-]{20,})`).exec(out)?.[1];
      expect(secret, out).to.be.a('string');
      const entries = parse(out.slice(out.indexOf('- id:'))) as { id: string; sha256: string; scopes?: string[]; expires_at?: string }[];
      expect(entries).to.have.length(1);
      const entry = entries[0]!;
      expect(entry.sha256).to.equal(sha256Hex(secret!));
      expect(out.split(secret!).length - 1, 'the secret is printed once').to.equal(1);
      return { secret: secret!, entry };
    };
    const apiKeyMinted = minted(keyOut.stdout, 'svc-');
    const tokenMinted = minted(tokenOut.stdout, 'svcpt_');
    expect(apiKeyMinted.entry.id).to.equal('key_cli');
    expect(tokenMinted.entry.scopes).to.deep.equal(['runs:write']);
    expect(Date.parse(tokenMinted.entry.expires_at ?? '')).to.be.above(Date.now());
    // Fresh at every call.
    expect(minted(againOut.stdout, 'svc-').secret).to.not.equal(apiKeyMinted.secret);

    const at = await addresses();
    const config = e2eConfig(at);
    const accountA = (config['accounts'] as Record<string, unknown[]>[])[0]!;
    accountA['api_keys'] = [apiKeyMinted.entry];
    accountA['oauth_tokens'] = [tokenMinted.entry];
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl);
    expectData(await call(at.url, 'POST', `/api/v1/connections/${SQL_A}/records`, { headers: apiKey(apiKeyMinted.secret), json: { entity: 'dbo.orders', values: { sku: 'CLI' } } }), 201);
    expectData(await call(at.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: bearer(tokenMinted.secret), json: { message: 'from the CLI token' } }), 202);
    // The keys of the default fixture are not in this configuration.
    expectProblem(await call(at.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: apiKey(SECRETS.keyA), json: { message: 'x' } }), 401, 'invalid_credential');
  });

  it('the CLI refuses bad arguments with a usage message and a non-zero exit', async function () {
    const argsList = [['keys', 'create', '--kind', 'oauth', '--id', 't'], ['keys', 'create', '--kind', 'api_key', '--id', 'k', '--scope', 'runs:write'], ['keys', 'delete']];
    const results = await Promise.all(argsList.map((args) => runNode(CLI, args)));
    for (const [i, result] of results.entries()) {
      expect(result.code, argsList[i]?.join(' ')).to.not.equal(0);
      expect(result.stderr).to.include('usage: svc keys create');
      expect(result.stdout).to.not.match(/svc-|svcpt_/);
    }
  });
});

describe('examples/api-server: SIGTERM with a request in flight (child process)', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let at: Addresses;
  /** What the scenario in `before` observed. */
  let seen: { status: number | undefined; text: string; exitedBeforeAnswer: boolean; exit: { code: number | null; signal: string | null }; exitDelayMs: number };

  before(async function () {
    dir = await tempDir();
    at = await addresses();
    server = await startServerProcess(await writeConfig(dir.path, e2eConfig(at)), at.url, at.egressUrl);
    const body = JSON.stringify({ entity: 'dbo.orders', values: { id: 4242, sku: 'IN-FLIGHT', qty: 1, note: 'sent across a SIGTERM' } });
    const half = Math.floor(body.length / 2);
    // A pooled keep-alive connection, as HTTP clients and proxies use.
    const req = request({
      host: '127.0.0.1',
      port: at.port,
      method: 'POST',
      path: `/api/v1/connections/${SQL_A}/records`,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-api-key': SECRETS.keyA,
        connection: 'keep-alive',
        // The server answers 100 Continue once it has dispatched the request to the app:
        // from then on the request is in flight.
        expect: '100-continue',
      },
    });
    const response = once(req, 'response') as Promise<[IncomingMessage]>;
    await once(req, 'continue');
    req.write(body.slice(0, half));

    server.process.kill('SIGTERM');
    // New connections are refused on both listeners while the request is still open.
    await untilRefused(at.port, 5000);
    await untilRefused(at.egressPort, 5000);
    const exitedBeforeAnswer = server.hasExited();

    req.end(body.slice(half));
    const [res] = await response;
    const text = await readAll(res);
    const answeredAt = Date.now();
    const exit = await server.exited;
    seen = { status: res.statusCode, text, exitedBeforeAnswer, exit, exitDelayMs: Date.now() - answeredAt };
  });

  after(async function () {
    await server?.kill();
    await dir?.remove();
  });

  it('refuses new connections on both listeners while the request in flight is drained', function () {
    expect(seen.exitedBeforeAnswer, 'the process waited for the request in flight').to.equal(false);
  });

  it('completes the request in flight: 201 {data: {rows_affected: 1}}', function () {
    expect(seen.status, seen.text).to.equal(201);
    expect(JSON.parse(seen.text)).to.deep.equal({ data: { rows_affected: 1 } });
  });

  it('then exits with code 0, after logging "stopped"', async function () {
    expect(seen.exit).to.deep.equal({ code: 0, signal: null });
    expect(server.stdout()).to.include('"msg":"stopped"');
    expect(await probe(at.port)).to.equal('refused');
  });

  it('does not hold the exit for the keep-alive timeout of the drained connection', function () {
    // server.ts closes idle connections once, when the drain starts; the connection of
    // the request in flight turns idle only after its answer, and then stays open until
    // keepAliveTimeout (5 s) or shutdown_grace_ms, whichever comes first.
    expect(seen.exitDelayMs, 'ms from the last answer to the exit').to.be.below(2000);
  });
});
