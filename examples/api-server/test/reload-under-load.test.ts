// Issue 13 part 2, "done when": the built server under load reloads its YAML file on
// SIGHUP and on a change of the file: the new key works, the removed key answers 401, and
// no other request fails (no reset, no 5xx); an invalid file keeps the running keys.
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { apiKey, call } from '../../../tools/test-support/http.js';
import { buildApiServer, KeepAliveClient, MAIN_DIST, spawnChild, type Outcome } from './support/built-server.js';
import { addresses, type Addresses } from './support/fixture.js';
import { closeConnectionsOnKill, logLines, tempDir, type Child } from './support/server-process.js';

const SECRETS = {
  A: 'svc-reload-load-key-A-7Yh2Kq9Lm4Np0Rs3',
  B: 'svc-reload-load-key-B-Tv6Wx8Za1Bc5De7F',
  C: 'svc-reload-load-key-C-Gh2Jk4Lm6Np8Qr0S',
} as const;
type KeyName = keyof typeof SECRETS;
const CONNECTION = '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const AGENT = 'agent_reload';
/** Requests each load client sends at least, and at least this many after the switch was seen. */
const PER_CLIENT = 500;
const AFTER_SWITCH = 50;
/** The bound of a client's requests, whatever happens. */
const PER_CLIENT_MAX = 3_000;
const CLIENTS = 4;

/** The configuration with these API keys (plus settings that differ per phase). */
function configWith(at: Addresses, keys: readonly KeyName[], extra: Record<string, unknown> = {}, digestOf: (k: KeyName) => string = (k) => sha256Hex(SECRETS[k])): Record<string, unknown> {
  return {
    base_url: at.url,
    listen: { host: '127.0.0.1', port: at.port },
    egress: { url: at.egressUrl, listen: { host: '127.0.0.1', port: at.egressPort } },
    // Not the default admin port 9464, which another suite on this machine may hold.
    admin_listen: { port: 0 },
    rate_limits: { credential: { requests: 1_000_000, window_seconds: 60 }, agent: { requests: 1_000_000, window_seconds: 60 } },
    worker: { enabled: false },
    log_level: 'info',
    shutdown_grace_ms: 5_000,
    accounts: [
      {
        id: 'acct_reload',
        api_keys: keys.map((k) => ({ id: `key_${k}`, sha256: digestOf(k) })),
        agents: [{ id: AGENT }],
        connections: [{ id: CONNECTION, type: 'sqlserver' }],
      },
    ],
    ...extra,
  };
}

interface Sent {
  readonly key: KeyName;
  readonly outcome: Outcome;
}

/** What a load saw, per client in the order sent. */
interface Load {
  readonly perClient: readonly (readonly Sent[])[];
}

const is2xx = (o: Outcome): boolean => 'status' in o && (o.status === 201 || o.status === 202);
const is401 = (o: Outcome): boolean => 'status' in o && o.status === 401 && o.body.includes('"invalid_credential"');

/**
 * Runs CLIENTS keep-alive clients, each sending record inserts (201) and run starts (202)
 * in turn, with the keys `from`, `to` and C in turn; once 400 answers came, `edit()` is
 * called, then `/records` is polled until `to` answers 201 and `from` 401. Each client
 * stops after PER_CLIENT requests and AFTER_SWITCH more once the switch was seen.
 */
async function switchUnderLoad(port: number, base: string, from: KeyName, to: KeyName, edit: () => Promise<void>): Promise<Load> {
  let answered = 0;
  let switched = false;
  const keys: KeyName[] = [from, to, 'C'];
  const clients = Array.from({ length: CLIENTS }, () => new KeepAliveClient(port));
  const loads = clients.map(async (client) => {
    const sent: Sent[] = [];
    let afterSwitch = 0;
    for (let i = 0; (i < PER_CLIENT || afterSwitch < AFTER_SWITCH) && i < PER_CLIENT_MAX; i += 1) {
      const key = keys[i % keys.length] as KeyName;
      const wasSwitched = switched;
      const outcome =
        i % 2 === 0
          ? await client.send('POST', `/api/v1/connections/${CONNECTION}/records`, apiKey(SECRETS[key]), { entity: 'dbo.orders', values: { sku: `load-${i}`, qty: 1 } })
          : await client.send('POST', `/api/v1/agents/${AGENT}/run`, apiKey(SECRETS[key]), { message: `load ${i}` });
      sent.push({ key, outcome });
      answered += 1;
      if (wasSwitched) afterSwitch += 1;
    }
    client.close();
    return sent;
  });
  await eventually(() => answered >= 400, 'the load to be under way', 20_000);
  await edit();
  const answers = (key: KeyName) => call(base, 'POST', `/api/v1/connections/${CONNECTION}/records`, { headers: apiKey(SECRETS[key]), json: { entity: 'dbo.orders', values: { qty: 1 } } });
  await eventually(async () => (await answers(to)).status === 201 && (await answers(from)).status === 401, `key ${to} to work and key ${from} to answer 401`, 10_000, 20);
  switched = true;
  return { perClient: await Promise.all(loads) };
}

/**
 * Asserts the load failed nothing but the expected 401s: `from` answers 2xx then only
 * 401, `to` 401 then only 2xx (per client: its requests are handled in the order sent),
 * C always 2xx; no reset, no 5xx, no other status. Returns the figures.
 */
function expectCleanSwitch(load: Load, from: KeyName, to: KeyName): string {
  let total = 0;
  const seen = { fromOk: 0, from401: 0, toOk: 0, to401: 0, cOk: 0 };
  for (const sent of load.perClient) {
    total += sent.length;
    const unexpected = sent.filter(({ outcome }) => !is2xx(outcome) && !is401(outcome));
    expect(unexpected.slice(0, 5), `${unexpected.length} failed requests`).to.deep.equal([]);
    const of = (k: KeyName) => sent.filter((s) => s.key === k).map((s) => s.outcome);
    const fromOutcomes = of(from);
    const firstFrom401 = fromOutcomes.findIndex(is401);
    expect(fromOutcomes.slice(firstFrom401 < 0 ? fromOutcomes.length : firstFrom401).filter(is2xx), `key ${from} answered 2xx after its first 401`).to.have.length(0);
    const toOutcomes = of(to);
    const firstToOk = toOutcomes.findIndex(is2xx);
    expect(toOutcomes.slice(firstToOk < 0 ? toOutcomes.length : firstToOk).filter(is401), `key ${to} answered 401 after its first 2xx`).to.have.length(0);
    expect(of('C').filter((o) => !is2xx(o)), 'key C never fails').to.have.length(0);
    seen.fromOk += fromOutcomes.filter(is2xx).length;
    seen.from401 += fromOutcomes.filter(is401).length;
    seen.toOk += toOutcomes.filter(is2xx).length;
    seen.to401 += toOutcomes.filter(is401).length;
    seen.cOk += of('C').filter(is2xx).length;
  }
  // The switch happened while the load ran: both keys were seen on both sides of it.
  expect(seen.fromOk, `${from} before the switch`).to.be.above(0);
  expect(seen.from401, `${from} after the switch`).to.be.above(0);
  expect(seen.to401, `${to} before the switch`).to.be.above(0);
  expect(seen.toOk, `${to} after the switch`).to.be.above(0);
  return `${total} requests on ${CLIENTS} keep-alive connections, 0 failed; key ${from}: ${seen.fromOk} 2xx then ${seen.from401} 401; key ${to}: ${seen.to401} 401 then ${seen.toOk} 2xx; key C: ${seen.cOk} 2xx`;
}

describe('examples/api-server: configuration reload under load (built server, child process)', function () {
  this.timeout(120_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let at: Addresses;
  let path: string;
  let server: Child;

  const reloads = (reason: string) => logLines(server).filter((l) => l['msg'] === 'configuration reloaded' && l['reason'] === reason);
  const refusals = (reason: string) => logLines(server).filter((l) => String(l['msg']).startsWith('configuration not reloaded') && l['reason'] === reason);

  before(async function () {
    await buildApiServer();
    dir = await tempDir();
    at = await addresses();
    path = join(dir.path, 'config.yaml');
    await writeFile(path, stringify(configWith(at, ['A', 'C'])));
    server = closeConnectionsOnKill(spawnChild(process.execPath, [MAIN_DIST, '--config', path]), [at.url, at.egressUrl]);
    await eventually(() => server.hasExited() || logLines(server).some((l) => l['msg'] === 'listening'), 'the server to listen', 20_000, 20);
    expect(server.hasExited(), server.stderr()).to.equal(false);
  });

  after(async function () {
    await server?.kill();
    await dir?.remove();
  });

  it('SIGHUP with key A removed and key B added: B works, A answers 401, no other request fails; fixed settings stay and are named once', async function () {
    const load = await switchUnderLoad(at.port, at.url, 'A', 'B', async () => {
      await writeFile(path, stringify(configWith(at, ['B', 'C'], { rate_limits: { credential: { requests: 7, window_seconds: 60 } }, shutdown_grace_ms: 6_000 })));
      server.process.kill('SIGHUP');
    });
    console.log(`      figures: ${expectCleanSwitch(load, 'A', 'B')}`);
    expect(server.hasExited(), 'SIGHUP did not end the process').to.equal(false);
    expect(reloads('SIGHUP')).to.have.length(1);
    expect(reloads('SIGHUP')[0]).to.deep.include({ accounts: 1, api_keys: 2, oauth_tokens: 0, agents: 1, connections: 1 });
    const fixed = logLines(server).filter((l) => Array.isArray(l['settings']));
    expect(fixed, 'one line names the settings left as they were').to.have.length(1);
    expect(fixed[0]!['settings']).to.deep.equal(['rate_limits', 'shutdown_grace_ms']);
    const answer = await call(at.url, 'POST', `/api/v1/connections/${CONNECTION}/records`, { headers: apiKey(SECRETS.B), json: { entity: 'dbo.orders', values: { qty: 1 } } });
    expect(answer.headers.get('ratelimit-limit'), 'the running rate limit stays').to.equal('1000000');
  });

  it('a change of the file alone (saved by rename, as editors do), key B removed and A back: A works, B answers 401, no other request fails', async function () {
    const [byChange, bySighup] = [reloads('file change').length, reloads('SIGHUP').length];
    const load = await switchUnderLoad(at.port, at.url, 'B', 'A', async () => {
      await writeFile(`${path}.tmp`, stringify(configWith(at, ['A', 'C'])));
      await rename(`${path}.tmp`, path);
    });
    console.log(`      figures: ${expectCleanSwitch(load, 'B', 'A')}`);
    expect(reloads('file change').length - byChange, 'reloaded once, by the change').to.equal(1);
    expect(reloads('SIGHUP').length - bySighup, 'no SIGHUP this time').to.equal(0);
  });

  it('an invalid file (by change and by SIGHUP) keeps serving the running keys and logs the field', async function () {
    const field = 'accounts[0].api_keys[0].sha256: must match pattern';
    const naming = (reason: string) => refusals(reason).filter((l) => String(l['msg']).includes(field));
    await writeFile(`${path}.tmp`, stringify(configWith(at, ['B', 'C'], {}, (k) => (k === 'B' ? 'not-a-digest' : sha256Hex(SECRETS[k])))));
    await rename(`${path}.tmp`, path);
    await eventually(() => naming('file change').length === 1, 'the invalid file to be refused, naming the field', 10_000, 20);
    server.process.kill('SIGHUP');
    await eventually(() => refusals('SIGHUP').length === 1, 'the SIGHUP reload to be refused', 10_000, 20);
    expect(naming('SIGHUP'), 'the SIGHUP refusal names the field').to.have.length(1);
    const write = (key: KeyName) => call(at.url, 'POST', `/api/v1/connections/${CONNECTION}/records`, { headers: apiKey(SECRETS[key]), json: { entity: 'dbo.orders', values: { qty: 1 } } });
    expect((await write('A')).status, 'A still works').to.equal(201);
    expect((await write('C')).status, 'C still works').to.equal(201);
    expect((await write('B')).status, 'B stays refused').to.equal(401);
    expect(server.hasExited()).to.equal(false);
  });

  it('logs no secret and no digest', function () {
    const output = server.stdout() + server.stderr();
    for (const secret of Object.values(SECRETS)) {
      expect(output).to.not.include(secret);
      expect(output).to.not.include(sha256Hex(secret));
    }
  });
});
