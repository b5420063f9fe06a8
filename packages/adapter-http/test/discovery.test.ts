import { expect } from 'chai';
import { FailingAgentCatalog, FailingConnectionCatalog, anAgent, aConnection } from '@svc/core/testing';
import { expectData, expectProblem, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import {
  ACCOUNT_B,
  AGENT_ID,
  apiKey,
  BASE_URL,
  bearer,
  call,
  CONNECTION_ID,
  FOREIGN_AGENT_ID,
  FOREIGN_CONNECTION_ID,
  PG_CONNECTION_ID,
  runPath,
  SECRETS,
  startApps,
  type Answer,
  type RunningApps,
} from './support/harness.js';

// Discovery of agents and connections over HTTP (docs/CONTRACT.md "Discovery";
// docs/decisions.md "Discovery: agents and connections").

const key = apiKey(SECRETS.keyA);

/** The `rel="next"` URL of an answer's `Link`, or null. */
function nextLink(answer: Answer): string | null {
  const link = answer.headers.get('link');
  if (link === null) return null;
  const match = /^<([^>]+)>; rel="next"$/u.exec(link);
  expect(match, `Link: ${link}`).to.not.equal(null);
  return match?.[1] ?? null;
}

/** Follows `Link: rel="next"` from `path` to the last page; the configured base URL is mapped to where the app listens. */
async function followLinks(apps: RunningApps, path: string, headers: Record<string, string> = key): Promise<Answer[]> {
  const answers: Answer[] = [];
  let url: string | null = `${apps.url}${path}`;
  while (url !== null) {
    const answer = await call('', 'GET', url, { headers });
    expect(answer.status, answer.text).to.equal(200);
    answers.push(answer);
    const next = nextLink(answer);
    if (next !== null) expect(next.startsWith(`${BASE_URL}/api/v1/`), next).to.equal(true);
    url = next === null ? null : next.replace(BASE_URL, apps.url);
    expect(answers.length).to.be.below(50);
  }
  return answers;
}

interface AgentBody {
  readonly data: { agent_id: string; name: string | null; description: string | null; created_at: string | null; run_url: string; mcp_url: string }[];
  readonly next_cursor: string | null;
}

describe('adapter-http: discovery of agents and connections', function () {
  let apps: RunningApps;
  const agentsOfA = Array.from({ length: 11 }, (_, i) => `agent_p${String(i).padStart(2, '0')}`);
  const connectionsOfA = Array.from({ length: 6 }, (_, i) => `${String(i).repeat(8)}-aaaa-4aaa-8aaa-aaaaaaaaaaaa`);
  beforeEach(async function () {
    apps = await startApps();
    for (const agentId of agentsOfA) apps.world.agents.add(anAgent({ agentId, name: `Agent ${agentId}` }));
    apps.world.agents.add(anAgent({ agentId: 'agent_p05b', accountId: ACCOUNT_B }));
    for (const connectionId of connectionsOfA) apps.world.connections.add(aConnection({ connectionId, type: 'postgresql' }));
  });
  afterEach(async function () {
    await apps.close();
  });

  it('GET /api/v1/agents pages by Link to the last page: {data, next_cursor}, next_cursor the Link URL\'s cursor, null and no Link at the end', async function () {
    const pages = await followLinks(apps, '/api/v1/agents?limit=4');
    expect(pages).to.have.length(3);
    const ids: string[] = [];
    pages.forEach((page, i) => {
      const body = page.body as AgentBody;
      expect(Object.keys(body).sort()).to.deep.equal(['data', 'next_cursor']);
      expect(page.headers.get('content-type')).to.match(/^application\/json/u);
      expectRateLimitHeaders(page, true);
      ids.push(...body.data.map((a) => a.agent_id));
      const next = nextLink(page);
      if (i < pages.length - 1) {
        expect(body.data).to.have.length(4);
        const url = new URL(next ?? '');
        expect(url.searchParams.get('limit')).to.equal('4');
        expect(url.searchParams.get('cursor')).to.equal(body.next_cursor);
      } else {
        expect(body.next_cursor).to.equal(null);
        expect(next).to.equal(null);
      }
    });
    expect(ids).to.deep.equal([AGENT_ID, ...agentsOfA].sort());
    expect(ids).to.not.include(FOREIGN_AGENT_ID).and.not.include('agent_p05b');
    const first = (pages[0]?.body as AgentBody).data[0];
    expect(first).to.deep.equal({
      agent_id: AGENT_ID,
      name: null,
      description: null,
      created_at: null,
      run_url: `${BASE_URL}/api/v1/agents/${AGENT_ID}/run`,
      mcp_url: `${BASE_URL}/api/v1/agents/${AGENT_ID}/mcp`,
    });
    // Default limit 20: everything of A on one page.
    const all = await call(apps.url, 'GET', '/api/v1/agents', { headers: key });
    expect(all.status).to.equal(200);
    expect((all.body as AgentBody).data).to.have.length(12);
    expect((all.body as AgentBody).next_cursor).to.equal(null);
  });

  it("GET /api/v1/connections answers a bare array, paged by Link only; never B's, never a host, user or password", async function () {
    const pages = await followLinks(apps, '/api/v1/connections?limit=3');
    expect(pages).to.have.length(3);
    const all = pages.flatMap((page) => {
      expect(page.body).to.be.an('array');
      expectRateLimitHeaders(page, true);
      return page.body as Record<string, unknown>[];
    });
    expect(all.map((c) => c['connection_id'])).to.deep.equal([CONNECTION_ID, PG_CONNECTION_ID, ...connectionsOfA].sort());
    expect(all.map((c) => c['connection_id'])).to.not.include(FOREIGN_CONNECTION_ID);
    for (const c of all) expect(Object.keys(c).sort()).to.deep.equal(['connection_id', 'created_at', 'egress_source_address', 'name', 'records_url', 'type', 'writable']);
    expect(all.find((c) => c['connection_id'] === CONNECTION_ID)).to.deep.include({ type: 'sqlserver', writable: true, egress_source_address: null, records_url: `${BASE_URL}/api/v1/connections/${CONNECTION_ID}/records` });
    expect(all.find((c) => c['connection_id'] === PG_CONNECTION_ID)).to.deep.include({ type: 'postgresql', writable: false });
    // Exactly a page: the last page of 3 of 9 has no Link.
    expect(nextLink(pages[2] as Answer)).to.equal(null);
  });

  it('reads one agent and one connection; B\'s answer 404 exactly like missing ones', async function () {
    const agent = expectData<Record<string, unknown>>(await call(apps.url, 'GET', `/api/v1/agents/${agentsOfA[0] ?? ''}`, { headers: key }), 200);
    expect(agent).to.include({ agent_id: agentsOfA[0], name: `Agent ${agentsOfA[0] ?? ''}` });
    const connection = expectData<Record<string, unknown>>(await call(apps.url, 'GET', `/api/v1/connections/${PG_CONNECTION_ID.toUpperCase()}`, { headers: key }), 200);
    expect(connection).to.include({ connection_id: PG_CONNECTION_ID, writable: false });
    const without = (a: Answer): unknown => ({ ...(a.body as Record<string, unknown>), request_id: undefined });
    for (const [foreign, missing] of [
      [`/api/v1/agents/${FOREIGN_AGENT_ID}`, '/api/v1/agents/agent_of_z'],
      [`/api/v1/connections/${FOREIGN_CONNECTION_ID}`, '/api/v1/connections/11111111-2222-4333-8444-555555555556'],
    ] as const) {
      const f = await call(apps.url, 'GET', foreign, { headers: key });
      const m = await call(apps.url, 'GET', missing, { headers: key });
      expectProblem(f, 404, 'not_found');
      expectProblem(m, 404, 'not_found');
      expectRateLimitHeaders(f, true);
      expect(JSON.stringify(without(f)).replace(FOREIGN_CONNECTION_ID, '<id>')).to.equal(JSON.stringify(without(m)).replace('11111111-2222-4333-8444-555555555556', '<id>'));
    }
    // B sees its own.
    expect(expectData<{ agent_id: string }>(await call(apps.url, 'GET', `/api/v1/agents/${FOREIGN_AGENT_ID}`, { headers: apiKey(SECRETS.keyB) }), 200).agent_id).to.equal(FOREIGN_AGENT_ID);
  });

  it('reads a path parameter percent-decoded, and one without % as sent (the router skips decoding it)', async function () {
    const id = agentsOfA[0] ?? '';
    const encoded = [...id].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    expect(expectData<{ agent_id: string }>(await call(apps.url, 'GET', `/api/v1/agents/${encoded}`, { headers: key }), 200).agent_id).to.equal(id);
    expect(expectData<{ agent_id: string }>(await call(apps.url, 'GET', `/api/v1/agents/${id}`, { headers: key }), 200).agent_id).to.equal(id);
    // A % that does not decode is kept as sent, as @koa/router kept it: no such agent.
    expectProblem(await call(apps.url, 'GET', '/api/v1/agents/%zz', { headers: key }), 404, 'not_found');
  });

  it('a bad or repeated limit or cursor answers 400 (validation_failed, or invalid_cursor for a cursor this list did not mint) naming the parameter, charged', async function () {
    for (const list of ['/api/v1/agents', '/api/v1/connections']) {
      for (const [query, parameter, code] of [
        ['limit=0', 'limit', 'validation_failed'],
        ['limit=101', 'limit', 'validation_failed'],
        ['limit=abc', 'limit', 'validation_failed'],
        ['limit=', 'limit', 'validation_failed'],
        ['limit=2&limit=3', 'limit', 'validation_failed'],
        ['cursor=nope', 'cursor', 'invalid_cursor'],
        ['cursor=', 'cursor', 'invalid_cursor'],
        ['cursor=a&cursor=b', 'cursor', 'validation_failed'],
      ] as const) {
        const answer = await call(apps.url, 'GET', `${list}?${query}`, { headers: key });
        const problem = expectProblem(answer, 400, code);
        expect(problem.detail, `${list}?${query}`).to.include(`query parameter ${parameter}`);
        expect(problem.errors?.[0]?.path).to.equal(`/${parameter}`);
        expectRateLimitHeaders(answer, true);
      }
    }
    // Unknown parameters are ignored, as everywhere.
    expect((await call(apps.url, 'GET', '/api/v1/agents?sort=desc', { headers: key })).status).to.equal(200);
  });

  it('an OAuth access token is refused 401 unsupported_credential on all four, uncharged; no credential 401', async function () {
    for (const path of ['/api/v1/agents', `/api/v1/agents/${AGENT_ID}`, '/api/v1/connections', `/api/v1/connections/${CONNECTION_ID}`]) {
      const token = await call(apps.url, 'GET', path, { headers: bearer(SECRETS.tokenWrite) });
      expectProblem(token, 401, 'unsupported_credential');
      expectRateLimitHeaders(token, false);
      expectProblem(await call(apps.url, 'GET', path), 401, 'missing_credential');
      expect((await call(apps.url, 'GET', path, { headers: bearer(SECRETS.keyA) })).status, path).to.equal(200);
    }
  });

  it('GET beside POST …/run keeps both Allow lists; other methods 405; HEAD answers; nothing on the egress listener', async function () {
    for (const [method, path, allow] of [
      ['POST', `/api/v1/agents/${AGENT_ID}`, 'GET, HEAD, OPTIONS'],
      ['GET', runPath(), 'POST, OPTIONS'],
      ['POST', '/api/v1/agents', 'GET, HEAD, OPTIONS'],
      ['DELETE', `/api/v1/connections/${CONNECTION_ID}`, 'GET, HEAD, OPTIONS'],
      ['PUT', '/api/v1/connections', 'GET, HEAD, OPTIONS'],
    ] as const) {
      const answer = await call(apps.url, method, path, { headers: key });
      expectProblem(answer, 405, 'method_not_allowed');
      expect(answer.headers.get('allow'), `${method} ${path}`).to.equal(allow);
    }
    const head = await call(apps.url, 'HEAD', '/api/v1/agents?limit=1', { headers: key });
    expect(head.status).to.equal(200);
    expect(head.text).to.equal('');
    expect(head.headers.get('link')).to.match(/rel="next"$/u);
    for (const path of ['/api/v1/agents', '/v1/agents', '/api/v1/connections', `/v1/connections/${CONNECTION_ID}`]) {
      expectProblem(await call(apps.egressUrl, 'GET', path, { headers: key }), 404, 'not_found');
    }
  });

  it('a lost catalog answers 503 service_unavailable with Retry-After, charged', async function () {
    const failing = await startApps({
      override: (world) => {
        const core = world.coreWith({ agents: new FailingAgentCatalog(world.agents).failWith('unavailable'), connections: new FailingConnectionCatalog(world.connections).failWith('unavailable') });
        return { listAgents: core.listAgents, getAgent: core.getAgent, listConnections: core.listConnections, getConnection: core.getConnection };
      },
    });
    try {
      for (const path of ['/api/v1/agents', `/api/v1/agents/${AGENT_ID}`, '/api/v1/connections', `/api/v1/connections/${CONNECTION_ID}`]) {
        const answer = await call(failing.url, 'GET', path, { headers: key });
        expectProblem(answer, 503, 'service_unavailable');
        expect(answer.headers.get('retry-after')).to.equal('5');
        expectRateLimitHeaders(answer, true);
      }
    } finally {
      await failing.close();
    }
  });
});
