// The leak scan itself (tools/test-support/leak-scan.ts): a registered value found in a
// response or a log line is a hit naming the place and the label, a clean one is none,
// and no report holds the value. Every registry here is a LeakScan of the test's own, so
// the suite's registry (and its root hook) never sees these deliberate hits.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import { leakScanHooks } from '../test-support/leak-scan-hooks.js';
import { capturingFetch, EMAIL_PATTERN, emailAddresses, LeakError, LeakScan, mask, MIN_LENGTH, MIN_SENT_CREDENTIAL_LENGTH } from '../test-support/leak-scan.js';

const SECRET = 'svc-leak-scan-test-key-4Fq9Zr2Lm7Xc';
const PASSWORD = 'leak-Scan-Pa55word!';
const EMAIL = 'leak.scan@example.com';

describe('leak scan (tools/test-support/leak-scan.ts)', function () {
  it('finds a registered secret in a response body, header and status line, naming the place and the label', function () {
    const scan = new LeakScan();
    scan.registerCredential(SECRET, 'API key secret');
    const found = scan.scanResponse('response POST http://127.0.0.1:1/api/v1/agents/x/run 400', {
      statusLine: 'HTTP/1.1 400 Bad Request',
      headers: [['x-debug', `key=${SECRET}`], ['content-type', 'application/json']],
      body: `{"detail":"bad key ${SECRET}"}`,
    });
    expect(found).to.equal(2);
    const hits = scan.takeHits();
    expect(hits.map((h) => [h.place, h.label])).to.deep.equal([
      ['response POST http://127.0.0.1:1/api/v1/agents/x/run 400 header x-debug', 'API key secret'],
      ['response POST http://127.0.0.1:1/api/v1/agents/x/run 400 body', 'API key secret'],
    ]);
    expect(scan.takeHits(), 'taken once').to.deep.equal([]);
    expect(scan.figures()).to.include({ responses: 1, hits: 2 });
  });

  it('finds a credential\'s SHA-256 digest, and a value JSON-escaped as a log line holds it', function () {
    const scan = new LeakScan();
    scan.registerCredential(SECRET, 'API key secret');
    const quoted = 'pa"ss\\word-1234';
    scan.register(quoted, 'connection password');
    const digest = createHash('sha256').update(SECRET).digest('hex');
    expect(scan.scan('log line 1 of x', `{"msg":"reloaded","digest":"${digest}"}`)).to.equal(1);
    expect(scan.scan('log line 2 of x', JSON.stringify({ msg: 'refused', password: quoted }))).to.equal(1);
    expect(scan.takeHits().map((h) => h.label)).to.deep.equal(['SHA-256 digest of the API key secret', 'connection password']);
  });

  it('finds nothing in a clean response or log line', function () {
    const scan = new LeakScan();
    scan.registerCredential(SECRET, 'API key secret');
    scan.register(EMAIL, 'e-mail address');
    expect(scan.scanResponse('response GET http://127.0.0.1:1/api/v1 200', { statusLine: 'HTTP/1.1 200 OK', headers: [['x-request-id', 'abc']], body: '{"data":{"name":"svc"}}' })).to.equal(0);
    expect(scan.scanLogLine('src/main.ts pid 1 (stdout)', 1, '{"msg":"request","status":401,"credential":"key_a1"}')).to.equal(0);
    expect(scan.takeHits()).to.deep.equal([]);
    expect(scan.figures()).to.deep.include({ responses: 1, logLines: 1, hits: 0, values: 3 });
  });

  it('scans every line a child process writes, naming the line, the process and the stream', async function () {
    const scan = new LeakScan();
    const child = spawn(process.execPath, ['-e', 'console.log("ready"); console.log("connecting as " + process.env.LEAK_TEST_DB_PASSWORD); console.error("warn: " + process.env.LEAK_TEST_DB_PASSWORD)'], {
      env: { ...process.env, LEAK_TEST_DB_PASSWORD: PASSWORD },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    scan.watchProcess(child, 'leak-test.js', { LEAK_TEST_DB_PASSWORD: PASSWORD });
    expect(scan.capturing, 'capturing while the process runs').to.equal(true);
    await once(child, 'close');
    expect(scan.capturing).to.equal(false);
    const hits = scan.takeHits();
    expect(hits.map((h) => [h.place, h.label])).to.have.deep.members([
      [`log line 2 of leak-test.js pid ${child.pid} (stdout)`, 'value of LEAK_TEST_DB_PASSWORD'],
      [`log line 1 of leak-test.js pid ${child.pid} (stderr)`, 'value of LEAK_TEST_DB_PASSWORD'],
    ]);
    expect(scan.figures().logLines).to.equal(3);
  });

  it('registers what a configuration names as a connection\'s host, user and password (through its variable), never a listener\'s host', function () {
    const scan = new LeakScan();
    const digest = createHash('sha256').update(SECRET).digest('hex');
    scan.registerConfig({
      base_url: 'http://127.0.0.9:8080',
      listen: { host: '127.0.0.9', port: 8080 },
      egress: { url: 'http://127.0.0.9:8081', source_address: '127.0.0.2' },
      redis_url: 'redis://queue-user:queue-Pa55@127.0.0.7:6379',
      accounts: [
        {
          id: 'acct_a',
          api_keys: [{ id: 'key_a', sha256: digest }],
          connections: [{ id: 'c', type: 'sqlserver', sqlserver: { host: 'db.internal.example', port: 1433, database: 'sales', user: 'svc_writer', password_env: 'LEAK_DB_PW' } }],
        },
      ],
    });
    scan.registerEnv({ LEAK_DB_PW: PASSWORD, UNRELATED: 'not-a-secret-at-all' });
    const text = ['127.0.0.9', '127.0.0.2', 'sales', 'acct_a', 'not-a-secret-at-all'].join(' ');
    expect(scan.scan('clean', text), 'public, short and unnamed values are not scanned for').to.equal(0);
    for (const [value, label] of [
      [digest, 'credential SHA-256 digest (accounts.api_keys.sha256)'],
      ['db.internal.example', 'connection host (accounts.connections.sqlserver.host)'],
      ['svc_writer', 'connection user name (accounts.connections.sqlserver.user)'],
      [PASSWORD, 'value of LEAK_DB_PW (accounts.connections.sqlserver.password_env)'],
      ['queue-Pa55', 'URL with credentials (redis_url): password'],
      ['queue-user', 'URL with credentials (redis_url): user name'],
      ['127.0.0.7', 'URL with credentials (redis_url): host'],
    ] as const) {
      expect(scan.scan(`place of ${label}`, `... ${value} ...`), label).to.be.at.least(1);
      expect(scan.takeHits().map((h) => h.label), value.slice(0, 3)).to.include(label);
    }
  });

  it(`skips values shorter than ${MIN_LENGTH} characters, generic ones and loopback names`, function () {
    const scan = new LeakScan();
    for (const value of ['sa', 'sales', 'postgres', 'localhost', '127.0.0.1', '12345678']) expect(scan.register(value, 'x'), value).to.equal(false);
    expect(scan.register('svc_writer', 'connection user name')).to.equal(true);
    expect(scan.register('svc_writer', 'again')).to.equal(false);
    // `postgres` as a user name would match every `postgresql` connection type.
    expect(scan.scan('a connection list', '{"type":"postgresql","host":"localhost"}')).to.equal(0);
    expect(scan.figures()).to.include({ values: 1, skipped: 6 });
  });

  it(`takes from a request only credentials of ${MIN_SENT_CREDENTIAL_LENGTH} characters or more, and from a configuration only real digests`, function () {
    const scan = new LeakScan();
    // `svcpt_` is what a hostile request cut mid-header leaves of a token; every index document shows it.
    scan.registerRequest([['X-API-Key', 'svcpt_'], ['authorization', 'Bearer svc-unknown'], ['authorization', `Bearer ${SECRET}`]]);
    scan.registerConfig({ accounts: [{ api_keys: [{ id: 'key_bad', sha256: 'not-a-digest' }] }] });
    expect(scan.scan('an index', 'tokens look like svcpt_..., keys like svc-unknown; not-a-digest')).to.equal(0);
    expect(scan.scan('a log line', `token ${SECRET}`)).to.equal(1);
    expect(scan.figures().values, 'the secret and its digest').to.equal(2);
  });

  describe('emailAddresses (the e-mail addresses of a request body)', function () {
    /** What the pattern finds: the reference emailAddresses must agree with. */
    const byPattern = (text: string): string[] => [...text.matchAll(EMAIL_PATTERN)].map(([m]) => m);

    it('finds what the pattern finds, on addresses and near-addresses', function () {
      const cases: readonly (readonly [string, readonly string[]])[] = [
        ['', []],
        ['no at sign here', []],
        [EMAIL, [EMAIL]],
        [`{"notification_email":"${EMAIL}","cc":"Ops+alerts@mail.example.org"}`, [EMAIL, 'Ops+alerts@mail.example.org']],
        ['a@b.com1', ['a@b.com']],
        ['a@b.c.de', ['a@b.c.de']],
        ['a@b.cd-x.ef9', ['a@b.cd-x.ef']],
        ['a@b..cd', []],
        ['a@.cd', []],
        ['@b.cd', []],
        ['a@b.c', []],
        ['a@b.cd.', ['a@b.cd']],
        ['a@b.cd..ef', ['a@b.cd']],
        ['a@@b.cd', []],
        ['x@a@b.cd', ['a@b.cd']],
        ['a@b.cd@e.fg', ['a@b.cd']],
        ['a@b.cd e@f.gh', ['a@b.cd', 'e@f.gh']],
        ['a@b.cdx@e.fg', ['a@b.cdx']],
        ['ok-id_1.2~:@/+=', []],
        ['..%%@x-y.zz', ['..%%@x-y.zz']],
        ['é@b.cd', []],
        ['aé@b.cd', []],
        ['ü@b.cd a@b.cd', ['a@b.cd']],
      ];
      for (const [text, expected] of cases) {
        expect(byPattern(text), `the pattern on ${JSON.stringify(text)}`).to.deep.equal(expected);
        expect(emailAddresses(text), JSON.stringify(text)).to.deep.equal(expected);
      }
    });

    it('finds what the pattern finds on 5,000 generated strings of address characters and pieces', function () {
      // A seeded LCG: a failure names the string, and the next run generates the same ones.
      let state = 20240611;
      const next = (n: number): number => {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0;
        return (state >>> 8) % n;
      };
      // Characters and pieces of addresses, so that about one string in ten holds one.
      const alphabet = ['a', 'bc', 'Z', '9', '-', '.', '.', '_', '%', '+', '@', '@', ' ', 'é', '"', '.com', '.c', 'x1', '.de9'];
      let withAddresses = 0;
      for (let i = 0; i < 5_000; i += 1) {
        const text = Array.from({ length: 1 + next(16) }, () => alphabet[next(alphabet.length)]).join('');
        const expected = byPattern(text);
        expect(emailAddresses(text), JSON.stringify(text)).to.deep.equal(expected);
        if (expected.length > 0) withAddresses += 1;
      }
      expect(withAddresses, 'strings holding an address, out of 5,000').to.be.at.least(100);
    });

    it('finds the addresses around long runs of address characters (where the pattern is quadratic)', function () {
      const run = 'b'.repeat(200_000);
      const text = `X-Big: ${run}\r\nX-Request-Id: ok-id_1.2~:@/+=\r\n\r\n{"to":"${EMAIL}","x":"${run}@${run}.${run}"}`;
      expect(emailAddresses(text)).to.deep.equal([EMAIL, `${run}@${run}.${run}`]);
    });
  });

  it('masks: the first two characters and the length, never the value', function () {
    for (const value of [SECRET, PASSWORD, EMAIL, 'svc_writer']) {
      expect(mask(value)).to.equal(`${value.slice(0, 2)}…[${value.length} chars]`);
      expect(mask(value)).to.not.include(value);
    }
    const scan = new LeakScan();
    scan.registerCredential(SECRET, 'API key secret');
    scan.register(EMAIL, 'e-mail address');
    scan.scan('log line 4 of src/main.ts pid 9 (stdout)', `${SECRET} ${EMAIL}`);
    const error = new LeakError(scan.takeHits());
    expect(error.message).to.include(`API key secret (sv…[${SECRET.length} chars]) in log line 4 of src/main.ts pid 9 (stdout)`).and.include(`e-mail address (le…[${EMAIL.length} chars])`);
    for (const value of [SECRET, EMAIL]) expect(error.message).to.not.include(value);
  });

  describe('capturingFetch', function () {
    let server: Server;
    let base: string;

    before(async function () {
      // Echoes the request body: what a server that leaks would do.
      server = createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (c: string) => (body += c));
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body === '' ? '{"data":{}}' : body));
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });

    after(function () {
      server?.close();
    });

    it('registers the e-mail address and credential a request sends, and scans the answer that echoes them', async function () {
      const scan = new LeakScan();
      scan.enterTest('a test of the e2e suite', true);
      const scanned = capturingFetch(scan, fetch);
      const res = await scanned(`${base}/echo`, { method: 'POST', headers: { 'x-api-key': SECRET, 'content-type': 'application/json' }, body: JSON.stringify({ notification_email: EMAIL }) });
      expect(await res.json(), 'the caller still reads the body').to.deep.equal({ notification_email: EMAIL });
      await scan.settle(5_000);
      expect(scan.takeHits().map((h) => [h.place, h.label, h.masked, h.during])).to.deep.equal([
        [`response POST ${base}/echo 200 body`, 'e-mail address sent in a request body', mask(EMAIL), 'a test of the e2e suite'],
      ]);
      const clean = await scanned(`${base}/echo`, { headers: { 'x-api-key': SECRET } });
      await clean.arrayBuffer();
      await scan.settle(5_000);
      expect(scan.figures().responses, 'the second answer scanned').to.equal(2);
      expect(scan.takeHits()).to.deep.equal([]);
    });

    it('is the plain fetch while nothing is captured: nothing registered, nothing scanned', async function () {
      const scan = new LeakScan();
      const res = await capturingFetch(scan, fetch)(`${base}/echo`, { method: 'POST', headers: { 'x-api-key': SECRET }, body: EMAIL });
      expect(await res.text()).to.equal(EMAIL);
      expect(scan.figures()).to.include({ responses: 0, values: 0 });
    });
  });

  describe('root hooks (tools/test-support/leak-scan-hooks.ts)', function () {
    it('afterEach fails the test that ran with a LeakError, and lets a clean test be', async function () {
      const scan = new LeakScan();
      const hooks = leakScanHooks(scan, /never/u);
      const failed: unknown[] = [];
      const context = { currentTest: { fullTitle: () => 'suite leaks', file: '/x/y.test.ts' }, test: { error: (e: unknown) => failed.push(e) } } as unknown as Mocha.Context;
      const [beforeEach, afterEach] = [hooks.beforeEach as (this: Mocha.Context) => void, hooks.afterEach as (this: Mocha.Context) => Promise<void>];
      beforeEach.call(context);
      await afterEach.call(context);
      expect(failed, 'a clean test').to.deep.equal([]);
      scan.register(PASSWORD, 'connection password');
      beforeEach.call(context);
      scan.scanLogLine('src/main.ts pid 3 (stderr)', 12, `login failed for ${PASSWORD}`);
      await afterEach.call(context);
      expect(failed).to.have.length(1);
      expect(failed[0]).to.be.instanceOf(LeakError);
      expect((failed[0] as LeakError).hits).to.deep.equal([{ place: 'log line 12 of src/main.ts pid 3 (stderr)', label: 'connection password', masked: mask(PASSWORD), during: 'suite leaks' }]);
    });
  });
});
