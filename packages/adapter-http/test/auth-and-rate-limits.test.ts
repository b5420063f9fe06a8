import { expect } from 'chai';
import { anAgent, aStoredCredential } from '@svc/core/testing';
import { expectData, expectProblem, expectRateLimited, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import { rawExchange } from '../../../tools/test-support/raw-http.js';
import {
  ACCOUNT_B,
  anInsert,
  anUpdate,
  apiKey,
  bearer,
  call,
  FOREIGN_AGENT_ID,
  FOREIGN_CONNECTION_ID,
  PG_CONNECTION_ID,
  recordsPath,
  runPath,
  SECRETS,
  startApps,
  type RunningApps,
} from './support/harness.js';

const key = apiKey(SECRETS.keyA);

describe('adapter-http: authentication', function () {
  let apps: RunningApps;
  before(async function () {
    apps = await startApps();
  });
  after(async function () {
    await apps.close();
  });

  it('accepts an API key in X-API-Key, as a bearer token, or in both when they are equal', async function () {
    for (const headers of [apiKey(SECRETS.keyA), bearer(SECRETS.keyA), { ...apiKey(SECRETS.keyA), ...bearer(SECRETS.keyA) }, { authorization: `bearer   ${SECRETS.keyA}` }]) {
      expectData(await call(apps.url, 'POST', recordsPath(), { headers, json: anInsert() }), 201);
    }
  });

  it('answers 401 with WWW-Authenticate: Bearer realm="svc" when no credential is sent', async function () {
    for (const headers of [{}, { 'x-api-key': '' }, { authorization: '' }]) {
      const answer = await call(apps.url, 'POST', recordsPath(), { headers, json: anInsert() });
      expectProblem(answer, 401, 'missing_credential');
      expect(answer.headers.get('www-authenticate')).to.equal('Bearer realm="svc"');
    }
  });

  it('answers 401 with error="invalid_token" to invalid, expired, unsupported and doubled credentials', async function () {
    const cases: [Record<string, string>, string, string][] = [
      [apiKey('svc-unknown-key-000000000000000'), 'invalid_credential', runPath()],
      [bearer('svcpt_unknown-token-0000000000'), 'invalid_credential', runPath()],
      [apiKey('no-prefix-at-all'), 'invalid_credential', runPath()],
      [bearer(SECRETS.tokenExpired), 'expired_credential', runPath()],
      [bearer(SECRETS.tokenWrite), 'unsupported_credential', recordsPath()],
      [apiKey(SECRETS.tokenWrite), 'unsupported_credential', runPath()],
      [{ authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }, 'unsupported_credential', runPath()],
      [{ ...apiKey(SECRETS.keyA), ...bearer(SECRETS.keyA2) }, 'invalid_credential', runPath()],
      [{ ...apiKey(SECRETS.keyA), ...bearer(SECRETS.tokenWrite) }, 'invalid_credential', runPath()],
    ];
    for (const [headers, code, path] of cases) {
      const answer = await call(apps.url, 'POST', path, { headers, json: path === runPath() ? { message: 'x' } : anInsert() });
      expectProblem(answer, 401, code);
      expect(answer.headers.get('www-authenticate'), JSON.stringify(headers)).to.equal('Bearer realm="svc", error="invalid_token"');
      expectRateLimitHeaders(answer, false);
    }
  });

  it('answers 401 invalid_credential to repeated credential header lines that disagree, and accepts the same one repeated', async function () {
    // fetch joins repeated headers, so these go over a raw socket: Node keeps only the
    // first Authorization line in `req.headers`, which let the first credential win.
    const port = Number(new URL(apps.url).port);
    const body = JSON.stringify(anInsert());
    const send = async (lines: string[]) => {
      const request = [`POST ${recordsPath()} HTTP/1.1`, 'Host: t', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', ...lines, '', body].join('\r\n');
      const exchange = await rawExchange(port, request, { timeoutMs: 5_000, expectAnswers: 1 });
      const [answer] = exchange.answers;
      if (answer === undefined) throw new Error(`no answer to ${JSON.stringify(lines)}`);
      return answer;
    };
    for (const lines of [
      [`Authorization: Bearer ${SECRETS.keyA}`, `Authorization: Bearer ${SECRETS.keyB}`],
      [`X-API-Key: ${SECRETS.keyA}`, `X-API-Key: ${SECRETS.keyA2}`],
      [`X-API-Key: ${SECRETS.keyA}`, `X-API-Key: ${SECRETS.keyA}`, `Authorization: Bearer ${SECRETS.keyB}`],
      [`Authorization: Bearer ${SECRETS.keyA}`, `Authorization: Basic ${Buffer.from('u:p').toString('base64')}`],
    ]) {
      const answer = await send(lines);
      expect(answer.status, lines.join(' / ')).to.equal(401);
      expect(answer.headers.get('content-type')?.[0]).to.match(/^application\/problem\+json/u);
      expect((JSON.parse(answer.body.toString('utf8')) as { code: string }).code).to.equal('invalid_credential');
      expect(answer.headers.get('www-authenticate')).to.deep.equal(['Bearer realm="svc", error="invalid_token"']);
    }
    const same = await send([`X-API-Key: ${SECRETS.keyA}`, `X-API-Key: ${SECRETS.keyA}`, `Authorization: Bearer ${SECRETS.keyA}`, `Authorization: Bearer ${SECRETS.keyA}`]);
    expect(same.status).to.equal(201);
  });

  it('answers 403 insufficient_scope with the scope in WWW-Authenticate to a token without it', async function () {
    const start = await call(apps.url, 'POST', runPath(), { headers: bearer(SECRETS.tokenNoScope), json: { message: 'x' } });
    expectProblem(start, 403, 'insufficient_scope');
    expect(start.headers.get('www-authenticate')).to.equal('Bearer realm="svc", error="insufficient_scope", scope="runs:write"');
    const read = await call(apps.url, 'GET', '/api/v1/runs/any', { headers: bearer(SECRETS.tokenNoScope) });
    expectProblem(read, 403, 'insufficient_scope');
    expect(read.headers.get('www-authenticate')).to.equal('Bearer realm="svc", error="insufficient_scope", scope="runs:read"');
    expect(apps.world.runs.all()).to.have.length(0);
  });

  it('accepts an OAuth token with runs:write on run creation (202) and with runs:read on run status', async function () {
    const started = await call(apps.url, 'POST', runPath(), { headers: bearer(SECRETS.tokenWrite), json: { message: 'x' } });
    const data = expectData<{ status_url: string; run_id: string }>(started, 202);
    const read = await call(apps.url, 'GET', `/api/v1/runs/${data.run_id}`, { headers: bearer(SECRETS.tokenWrite) });
    expect(expectData<{ run_id: string }>(read, 200).run_id).to.equal(data.run_id);
  });
});

describe('adapter-http: rate-limit headers', function () {
  let apps: RunningApps;
  beforeEach(async function () {
    apps = await startApps({ limits: { credential: { limit: 50, windowSeconds: 60 }, agent: { limit: 5, windowSeconds: 30 } } });
  });
  afterEach(async function () {
    await apps.close();
  });

  it('are on every authenticated answer, 2xx and 4xx, and absent on 401', async function () {
    const answers = [
      await call(apps.url, 'POST', recordsPath(), { headers: key, json: anInsert() }),
      await call(apps.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() }),
      await call(apps.url, 'POST', runPath(), { headers: key, json: { message: 'x' } }),
      await call(apps.url, 'POST', recordsPath(), { headers: key, json: { entity: 'dbo.orders' } }),
      await call(apps.url, 'POST', recordsPath(FOREIGN_CONNECTION_ID), { headers: key, json: anInsert() }),
      await call(apps.url, 'POST', recordsPath(), { headers: { ...key, 'x-svc-egress': 'yes' }, json: anInsert() }),
      await call(apps.url, 'POST', recordsPath(PG_CONNECTION_ID), { headers: key, json: anInsert() }),
      await call(apps.url, 'POST', recordsPath(), { headers: key, json: anInsert({ entity: 'dbo.missing' }) }),
      await call(apps.url, 'POST', runPath(FOREIGN_AGENT_ID), { headers: key, json: { message: 'x' } }),
      await call(apps.url, 'GET', '/api/v1/runs/unknown', { headers: key }),
      await call(apps.egressUrl, 'POST', '/v1/connections/not-a-uuid/records', { headers: key, json: anInsert() }),
    ];
    expect(answers.map((a) => a.status)).to.deep.equal([201, 200, 202, 400, 404, 400, 400, 400, 404, 404, 404]);
    for (const a of answers) expectRateLimitHeaders(a, true);
    const unauthenticated = await call(apps.url, 'POST', recordsPath(), { json: anInsert() });
    expect(unauthenticated.status).to.equal(401);
    expectRateLimitHeaders(unauthenticated, false);
    expect(unauthenticated.headers.get('retry-after')).to.equal(null);
  });

  it('count down per credential, with the aliases equal and x-ratelimit-reset a Unix time', async function () {
    let previous = 50;
    for (let i = 0; i < 3; i += 1) {
      const a = await call(apps.url, 'POST', recordsPath(), { headers: key, json: anInsert({ values: { id: 100 + i } }) });
      const remaining = Number(a.headers.get('ratelimit-remaining'));
      expect(remaining).to.equal(previous - 1);
      previous = remaining;
      expect(a.headers.get('ratelimit-limit')).to.equal('50');
      expect(a.headers.get('x-ratelimit-limit')).to.equal('50');
      expect(a.headers.get('x-ratelimit-remaining')).to.equal(String(remaining));
      const reset = Number(a.headers.get('ratelimit-reset'));
      expect(reset).to.be.within(1, 60);
      const resetAt = Number(a.headers.get('x-ratelimit-reset'));
      expect(Math.abs(resetAt - Date.now() / 1000 - reset)).to.be.at.most(2);
      expect(a.headers.get('retry-after')).to.equal(null);
    }
    // Another credential has its own window.
    const other = await call(apps.url, 'POST', recordsPath(), { headers: apiKey(SECRETS.keyA2), json: anInsert() });
    expect(other.headers.get('ratelimit-remaining')).to.equal('49');
  });

  it('report the agent limit on run creation when it is the tighter one', async function () {
    const a = await call(apps.url, 'POST', runPath(), { headers: key, json: { message: 'x' } });
    expect(a.status).to.equal(202);
    expect(a.headers.get('ratelimit-limit')).to.equal('5');
    expect(a.headers.get('ratelimit-remaining')).to.equal('4');
    expect(Number(a.headers.get('ratelimit-reset'))).to.be.within(1, 30);
  });

  it('429 on the agent limit: all seven headers with sane values, nothing queued, other agents unaffected', async function () {
    apps.world.agents.add(anAgent({ agentId: 'agent_second' }));
    for (let i = 0; i < 5; i += 1) {
      expect((await call(apps.url, 'POST', runPath(), { headers: key, json: { message: `m${i}` } })).status).to.equal(202);
    }
    const refused = await call(apps.url, 'POST', runPath(), { headers: key, json: { message: 'one too many' } });
    expectRateLimited(refused, 5, 30);
    expect(apps.world.runs.all()).to.have.length(5);
    // Refused requests are not charged: the credential window still counts 5.
    const insert = await call(apps.url, 'POST', recordsPath(), { headers: key, json: anInsert() });
    expect(insert.headers.get('ratelimit-remaining')).to.equal(String(50 - 5 - 1));
    // Another agent has its own window, with the same credential.
    const otherAgent = await call(apps.url, 'POST', runPath('agent_second'), { headers: key, json: { message: 'x' } });
    expect(otherAgent.status).to.equal(202);
    expect(otherAgent.headers.get('ratelimit-remaining')).to.equal('4');
  });

  it('429 on the credential limit: all seven headers; another credential still passes', async function () {
    const tight = await startApps({ limits: { credential: { limit: 3, windowSeconds: 20 }, agent: { limit: 30, windowSeconds: 60 } } });
    try {
      for (let i = 0; i < 3; i += 1) {
        expect((await call(tight.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() })).status).to.equal(200);
      }
      for (const answer of [
        await call(tight.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() }),
        await call(tight.url, 'POST', runPath(), { headers: key, json: { message: 'x' } }),
        await call(tight.egressUrl, 'POST', '/v1/connections/3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11/records', { headers: key, json: anInsert() }),
        // Even a body that cannot be read is refused by the limit first.
        await call(tight.url, 'POST', recordsPath(), { headers: { ...key, 'content-type': 'application/json' }, raw: '{' }),
      ]) {
        expectRateLimited(answer, 3, 20);
      }
      expect(tight.world.runs.all()).to.have.length(0);
      expect((await call(tight.url, 'PATCH', recordsPath(), { headers: apiKey(SECRETS.keyA2), json: anUpdate() })).status).to.equal(200);
    } finally {
      await tight.close();
    }
  });

  it('a credential id found in two accounts (a catalog mistake) still gets one window per account (CONTRACT "Isolation between accounts")', async function () {
    const tight = await startApps({ limits: { credential: { limit: 3, windowSeconds: 20 }, agent: { limit: 30, windowSeconds: 60 } } });
    try {
      // Account B holds a key whose id is A's `key_a1`; the settings and the PostgreSQL catalog refuse this, the in-memory store does not.
      const secretOfB = 'svc-http-test-key-account-b-same-id-0001';
      tight.world.credentials.add(aStoredCredential(secretOfB, { credentialId: 'key_a1', accountId: ACCOUNT_B }));
      for (let i = 0; i < 3; i += 1) expect((await call(tight.url, 'PATCH', recordsPath(FOREIGN_CONNECTION_ID), { headers: apiKey(secretOfB), json: anUpdate() })).status).to.equal(200);
      expectRateLimited(await call(tight.url, 'PATCH', recordsPath(FOREIGN_CONNECTION_ID), { headers: apiKey(secretOfB), json: anUpdate() }), 3, 20);
      const a = await call(tight.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() });
      expect(a.status, a.text).to.equal(200);
      expect(a.headers.get('ratelimit-remaining')).to.equal('2');
    } finally {
      await tight.close();
    }
  });
});
