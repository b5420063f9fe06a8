import { expect } from 'chai';
import { DependencyUnavailableError, type Run } from '@svc/core';
import { aRun } from '@svc/core/testing';
import { expectProblem, expectRateLimited, expectRateLimitHeaders, type Answer } from '../../../tools/test-support/http.js';
import { ACCOUNT_B, AGENT_ID, apiKey, BASE_URL, bearer, call, SECRETS, startApps, type RunningApps } from './support/harness.js';
import { OpenApiChecker } from './support/openapi-check.js';

const key = apiKey(SECRETS.keyA);
const RUN_LIST = '/api/v1/runs';

interface RunList {
  readonly data: { readonly run_id: string; readonly agent_id: string; readonly status: string; readonly status_url: string }[];
  readonly next_cursor: string | null;
}

/** The list body of a 200, checked against the served document. */
function listOf(answer: Answer, checker: OpenApiChecker): RunList {
  expect(answer.status, answer.text).to.equal(200);
  checker.expectDocumented(RUN_LIST, 'GET', answer);
  expectRateLimitHeaders(answer, true);
  return answer.body as RunList;
}

/** The `rel="next"` URL of `Link`, moved from `{base_url}` to where the app listens; `undefined` when absent. */
function nextLink(answer: Answer, url: string): string | undefined {
  const link = answer.headers.get('link');
  if (link === null) return undefined;
  const match = /<([^>]+)>; rel="next"/u.exec(link);
  expect(match, `Link: ${link}`).to.not.equal(null);
  const next = (match as RegExpExecArray)[1] as string;
  expect(next.startsWith(`${BASE_URL}${RUN_LIST}?`), next).to.equal(true);
  return next.replace(BASE_URL, url);
}

describe('adapter-http: GET /api/v1/runs (the run list)', function () {
  let apps: RunningApps;
  let checker: OpenApiChecker;
  /** Account A's runs as saved, newest first: run-013 … run-000, every third one succeeded, agents alternating. */
  let runsOfA: Run[];

  beforeEach(async function () {
    apps = await startApps();
    checker = OpenApiChecker.fromYaml((await call(apps.url, 'GET', '/openapi.yaml')).text);
    runsOfA = [];
    for (let i = 0; i < 14; i += 1) {
      const at = new Date(Date.UTC(2026, 5, 1, 12, 0, i));
      const run = aRun({
        runId: `run-${String(i).padStart(3, '0')}`,
        agentId: i % 2 === 0 ? AGENT_ID : 'agent_other',
        status: i % 3 === 0 ? 'succeeded' : 'queued',
        createdAt: at,
        updatedAt: at,
      });
      await apps.world.runs.save(run);
      runsOfA.unshift(run);
    }
    // Account B's runs, interleaved in time with A's.
    for (let i = 0; i < 3; i += 1) {
      const at = new Date(Date.UTC(2026, 5, 1, 12, 0, i, 500));
      await apps.world.runs.save(aRun({ runId: `run-of-b-${i}`, accountId: ACCOUNT_B, agentId: 'agent_of_b', createdAt: at, updatedAt: at }));
    }
  });
  afterEach(async function () {
    await apps.close();
  });

  it('pages to the last page following Link: newest first, no gap nor repeat, next_cursor null and no Link at the end', async function () {
    const seen: string[] = [];
    let url: string | undefined = `${apps.url}${RUN_LIST}?limit=5`;
    let pages = 0;
    let last: Answer | undefined;
    while (url !== undefined && pages < 10) {
      last = await call('', 'GET', url, { headers: key });
      const list = listOf(last, checker);
      expect(list.data.length).to.equal(pages < 2 ? 5 : 4);
      seen.push(...list.data.map((r) => r.run_id));
      url = nextLink(last, apps.url);
      // The cursor of the Link is next_cursor; limit is kept.
      if (url !== undefined) expect(new URL(url).searchParams.get('cursor')).to.equal(list.next_cursor);
      if (url !== undefined) expect(new URL(url).searchParams.get('limit')).to.equal('5');
      pages += 1;
    }
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal(runsOfA.map((r) => r.runId));
    expect((last?.body as RunList).next_cursor).to.equal(null);
    expect(last?.headers.get('link')).to.equal(null);
  });

  it('answers each run as GET {status_url} does, 20 by default', async function () {
    const list = listOf(await call(apps.url, 'GET', RUN_LIST, { headers: key }), checker);
    expect(list.next_cursor).to.equal(null);
    expect(list.data).to.have.length(14);
    const first = list.data[0] as RunList['data'][number];
    expect(first.status_url).to.equal(`${BASE_URL}/api/v1/runs/run-013`);
    const single = await call(apps.url, 'GET', '/api/v1/runs/run-013', { headers: key });
    expect(first).to.deep.equal((single.body as { data: unknown }).data);
  });

  it('filters by agent_id and status, keeping them in the Link; an unknown agent_id or one of another account gives an empty list', async function () {
    const expected = runsOfA.filter((r) => r.agentId === AGENT_ID && r.status === 'queued').map((r) => r.runId);
    const seen: string[] = [];
    let url: string | undefined = `${apps.url}${RUN_LIST}?agent_id=${AGENT_ID}&status=queued&limit=2`;
    while (url !== undefined && seen.length < 50) {
      const answer = await call('', 'GET', url, { headers: key });
      const list = listOf(answer, checker);
      expect(list.data.every((r) => r.agent_id === AGENT_ID && r.status === 'queued')).to.equal(true);
      seen.push(...list.data.map((r) => r.run_id));
      url = nextLink(answer, apps.url);
      if (url !== undefined) expect(Object.fromEntries(new URL(url).searchParams)).to.include({ agent_id: AGENT_ID, status: 'queued', limit: '2' });
    }
    expect(seen).to.deep.equal(expected);
    for (const agentId of ['agent_nobody', 'agent_of_b', '']) {
      expect(listOf(await call(apps.url, 'GET', `${RUN_LIST}?agent_id=${agentId}`, { headers: key }), checker)).to.deep.equal({ data: [], next_cursor: null });
    }
  });

  it("never shows another account's runs: B sees its own only, and A's cursor is refused like a forged one", async function () {
    const ofB = listOf(await call(apps.url, 'GET', RUN_LIST, { headers: apiKey(SECRETS.keyB) }), checker);
    expect(ofB.data.map((r) => r.run_id)).to.deep.equal(['run-of-b-2', 'run-of-b-1', 'run-of-b-0']);
    const cursorOfA = listOf(await call(apps.url, 'GET', `${RUN_LIST}?limit=1`, { headers: key }), checker).next_cursor;
    const fromThere = await call(apps.url, 'GET', `${RUN_LIST}?cursor=${cursorOfA}`, { headers: apiKey(SECRETS.keyB) });
    const forged = await call(apps.url, 'GET', `${RUN_LIST}?cursor=${String(cursorOfA).slice(0, -2)}AA`, { headers: apiKey(SECRETS.keyB) });
    expect(expectProblem(fromThere, 400, 'invalid_cursor')).to.deep.include({ detail: expectProblem(forged, 400, 'invalid_cursor').detail });
    checker.expectDocumented(RUN_LIST, 'GET', fromThere);
  });

  it('refuses a bad limit, status or cursor, or one sent twice: 400 naming the parameter, charged, as documented', async function () {
    const cases: [string, string, string?][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=', 'limit'],
      ['status=done', 'status'],
      ['status=', 'status'],
      ['cursor=not-one-of-ours', 'cursor', 'invalid_cursor'],
      ['cursor=', 'cursor', 'invalid_cursor'],
      ['limit=5&limit=6', 'limit'],
      ['agent_id=a&agent_id=b', 'agent_id'],
    ];
    for (const [query, parameter, code = 'validation_failed'] of cases) {
      const answer = await call(apps.url, 'GET', `${RUN_LIST}?${query}`, { headers: key });
      const problem = expectProblem(answer, 400, code);
      expect(problem.errors?.[0]?.path, query).to.equal(`/${parameter}`);
      expect(problem.detail, query).to.match(new RegExp(`^query parameter ${parameter}: `, 'u'));
      expectRateLimitHeaders(answer, true);
      checker.expectDocumented(RUN_LIST, 'GET', answer);
    }
  });

  it('takes API keys (also as bearer) and OAuth tokens with runs:read; a token without it → 403 insufficient_scope; none → 401', async function () {
    for (const headers of [key, bearer(SECRETS.keyA), bearer(SECRETS.tokenWrite)]) {
      expect(listOf(await call(apps.url, 'GET', `${RUN_LIST}?limit=1`, { headers }), checker).data).to.have.length(1);
    }
    const refused = await call(apps.url, 'GET', RUN_LIST, { headers: bearer(SECRETS.tokenNoScope) });
    expectProblem(refused, 403, 'insufficient_scope');
    expect(refused.headers.get('www-authenticate')).to.match(/scope="runs:read"/u);
    checker.expectDocumented(RUN_LIST, 'GET', refused);
    const anonymous = await call(apps.url, 'GET', RUN_LIST);
    expectProblem(anonymous, 401, 'missing_credential');
    checker.expectDocumented(RUN_LIST, 'GET', anonymous);
  });

  it('when deprecated, answers both Link values: rel="deprecation" and rel="next"', async function () {
    const deprecated = await startApps({ deprecations: { listRuns: { deprecatedAt: new Date('2026-12-01T00:00:00Z'), link: 'https://example.com/changelog' } } });
    try {
      for (const message of ['a', 'b']) await call(deprecated.url, 'POST', `/api/v1/agents/${AGENT_ID}/run`, { headers: key, json: { message } });
      const answer = await call(deprecated.url, 'GET', `${RUN_LIST}?limit=1`, { headers: key });
      expect(answer.status).to.equal(200);
      expect(answer.headers.get('deprecation')).to.match(/^@\d+$/u);
      expect(answer.headers.get('link')).to.match(/^<https:\/\/example\.com\/changelog>; rel="deprecation"; type="text\/html", <[^>]+>; rel="next"$/u);
      expect(nextLink(answer, deprecated.url)).to.be.a('string');
    } finally {
      await deprecated.close();
    }
  });

  it('is served on the main listener only: the egress listener answers 404', async function () {
    expectProblem(await call(apps.egressUrl, 'GET', RUN_LIST, { headers: key }), 404, 'not_found');
    expectProblem(await call(apps.egressUrl, 'GET', '/v1/runs', { headers: key }), 404, 'not_found');
  });

  it('charges the credential window once per request, 400s included, and answers 429 over it', async function () {
    const limited = await startApps({ limits: { credential: { limit: 3, windowSeconds: 60 }, agent: { limit: 30, windowSeconds: 60 } } });
    try {
      const remaining: (string | null)[] = [];
      for (const query of ['', '?status=bad', '?limit=1&limit=2']) {
        remaining.push((await call(limited.url, 'GET', `${RUN_LIST}${query}`, { headers: key })).headers.get('ratelimit-remaining'));
      }
      expect(remaining).to.deep.equal(['2', '1', '0']);
      const refused = await call(limited.url, 'GET', RUN_LIST, { headers: key });
      expectRateLimited(refused, 3, 60);
      checker.expectDocumented(RUN_LIST, 'GET', refused);
    } finally {
      await limited.close();
    }
  });

  it('answers 503 with Retry-After when the run store is lost, charged', async function () {
    const failing = await startApps({ override: () => ({ listRuns: { execute: () => Promise.reject(new DependencyUnavailableError('redis')) } }) });
    try {
      const answer = await call(failing.url, 'GET', RUN_LIST, { headers: key });
      expectProblem(answer, 503, 'service_unavailable');
      expect(answer.headers.get('retry-after')).to.match(/^\d+$/u);
      expect(answer.headers.get('ratelimit-remaining')).to.match(/^\d+$/u);
      checker.expectDocumented(RUN_LIST, 'GET', answer);
    } finally {
      await failing.close();
    }
  });
});
