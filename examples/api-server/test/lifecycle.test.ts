import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'chai';
import { addresses, e2eConfig, SECRETS, SQL_A, type Addresses } from './support/fixture.js';
import { runBuilt, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';


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
    // Three processes at once: each takes about a second to start on a busy machine.
    const [invalid, broken, missing] = await Promise.all([
      runBuilt('main', ['--config', invalidPath]),
      runBuilt('main', ['--config', brokenPath]),
      runBuilt('main', ['--config', `${dir.path}/nowhere.yaml`]),
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
