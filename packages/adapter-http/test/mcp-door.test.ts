import { expect } from 'chai';
import { ExactNumber } from '@svc/core';
import type { McpDoorExchange } from '@svc/adapter-http';
import { expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import { AGENT_ID, apiKey, BASE_URL, bearer, call, FOREIGN_AGENT_ID, SECRETS, startApps, type RunningApps } from './support/harness.js';

const mcpPath = (agent: string = AGENT_ID): string => `/api/v1/agents/${agent}/mcp`;
const metadataUrl = (agent: string = AGENT_ID): string => `${BASE_URL}/.well-known/oauth-protected-resource/api/v1/agents/${agent}/mcp`;

/**
 * The HTTP adapter's part of the MCP endpoint, with a recording door in place of
 * adapter-mcp: what it checks before it hands an exchange over, and what it hands over.
 */
describe('adapter-http: the MCP endpoint mount', function () {
  let apps: RunningApps;
  const handed: McpDoorExchange[] = [];

  before(async function () {
    apps = await startApps({
      settings: {
        mcp: {
          handle: async (exchange) => {
            handed.push(exchange);
            // A tool call charges the request itself (the door's use case); the recording door charges it here.
            if (!exchange.meter.charged) await exchange.meter.charge();
            exchange.charged(exchange.meter);
            if ((exchange.body as { params?: { name?: unknown } }).params?.name === 'lost') exchange.unavailable();
            exchange.res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
          },
          isToolCall: (body) => (body as { method?: unknown } | null)?.method === 'tools/call',
        },
      },
    });
  });
  after(async function () {
    await apps?.close();
  });
  beforeEach(function () {
    handed.length = 0;
  });

  it('hands the exchange over with the parsed body (exact numbers kept), the principal, every credential line and the raw X-Svc-Egress', async function () {
    const answer = await call(apps.url, 'POST', mcpPath(), {
      headers: { ...apiKey(SECRETS.keyA), 'content-type': 'application/json', 'x-svc-egress': 'true' },
      raw: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"n":12345678901234567890.5}}}',
    });
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('x-request-id')).to.be.a('string');
    const [exchange] = handed;
    expect(exchange?.agentId).to.equal(AGENT_ID);
    expect(exchange?.principal.credentialId).to.equal('key_a1');
    expect(exchange?.credentials).to.deep.equal({ apiKeys: [SECRETS.keyA], authorizations: [] });
    expect(exchange?.route).to.deep.equal({ egressHeader: 'true' });
    expect(exchange?.requestId).to.equal(answer.headers.get('x-request-id'));
    const n = (exchange?.body as { params: { arguments: { n: unknown } } }).params.arguments.n;
    expect(n).to.be.instanceOf(ExactNumber);
  });

  it('identifies the credential only: a token without scopes is handed over (each tool call is authorized later)', async function () {
    const answer = await call(apps.url, 'POST', mcpPath(), { headers: bearer(SECRETS.tokenNoScope), json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(answer.status).to.equal(200);
    expect(handed[0]?.principal.kind).to.equal('oauth');
  });

  it('401 with resource_metadata in WWW-Authenticate, before the body is read; nothing handed over', async function () {
    const missing = await call(apps.url, 'POST', mcpPath(), { headers: { 'content-type': 'text/plain' }, raw: 'x' });
    expect(missing.status).to.equal(401);
    expect(missing.headers.get('www-authenticate')).to.equal(`Bearer realm="svc", resource_metadata="${metadataUrl()}"`);
    const expired = await call(apps.url, 'POST', mcpPath(), { headers: bearer(SECRETS.tokenExpired), json: {} });
    expect(expired.status).to.equal(401);
    expect(expired.body).to.include({ code: 'expired_credential' });
    expect(expired.headers.get('www-authenticate')).to.equal(`Bearer realm="svc", resource_metadata="${metadataUrl()}", error="invalid_token"`);
    const odd = await call(apps.url, 'POST', mcpPath('a"b c'), {});
    expect(odd.headers.get('www-authenticate')).to.equal(`Bearer realm="svc", resource_metadata="${metadataUrl('a%22b%20c')}"`);
    expect(handed).to.have.length(0);
  });

  it('body errors are problem details (415, 400 invalid_json) before the agent is looked up; nothing handed over', async function () {
    const text = await call(apps.url, 'POST', mcpPath(FOREIGN_AGENT_ID), { headers: { ...apiKey(SECRETS.keyA), 'content-type': 'text/plain' }, raw: '{}' });
    expect(text.status).to.equal(415);
    const broken = await call(apps.url, 'POST', mcpPath(FOREIGN_AGENT_ID), { headers: { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' }, raw: '{"jsonrpc":' });
    expect(broken.status).to.equal(400);
    expect(broken.body).to.include({ code: 'invalid_json' });
    expect(handed).to.have.length(0);
    // Charged once like any authenticated request, with its headers.
    expectRateLimitHeaders(text, true);
    expect(Number(broken.headers.get('ratelimit-remaining'))).to.equal(Number(text.headers.get('ratelimit-remaining')) - 1);
  });

  it('charges every message but one tool call before the exchange (the tool call charges itself); Retry-After when the door says a dependency is lost', async function () {
    const list = await call(apps.url, 'POST', mcpPath(), { headers: apiKey(SECRETS.keyA), json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(list.status).to.equal(200);
    expect(handed[0]?.meter.charged, 'tools/list: charged by the HTTP adapter').to.equal(true);
    const toolCall = await call(apps.url, 'POST', mcpPath(), { headers: apiKey(SECRETS.keyA), json: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'lost' } } });
    expect(Number(toolCall.headers.get('ratelimit-remaining')), 'the tool call charged once').to.equal(Number(list.headers.get('ratelimit-remaining')) - 1);
    expect(toolCall.headers.get('retry-after')).to.equal('5');
    expect(list.headers.get('retry-after')).to.equal(null);
  });

  it("another account's agent and a missing one: the same 404; nothing handed over", async function () {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const foreign = await call(apps.url, 'POST', mcpPath(FOREIGN_AGENT_ID), { headers: apiKey(SECRETS.keyA), json: body });
    const missing = await call(apps.url, 'POST', mcpPath('agent_of_z'), { headers: apiKey(SECRETS.keyA), json: body });
    expect([foreign.status, missing.status]).to.deep.equal([404, 404]);
    const { request_id: _a, ...a } = foreign.body as Record<string, unknown>;
    const { request_id: _b, ...b } = missing.body as Record<string, unknown>;
    expect(a).to.deep.equal(b);
    expect(handed).to.have.length(0);
  });

  it('GET and DELETE answer 405 with Allow: POST; the main listener only', async function () {
    for (const method of ['GET', 'DELETE']) {
      const answer = await call(apps.url, method, mcpPath(), { headers: apiKey(SECRETS.keyA) });
      expect(answer.status, method).to.equal(405);
      expect(answer.headers.get('allow')).to.include('POST');
    }
    expect((await call(apps.egressUrl, 'POST', `/v1/agents/${AGENT_ID}/mcp`, { headers: apiKey(SECRETS.keyA), json: {} })).status).to.equal(404);
  });

  it('serves the RFC 9728 metadata of any id, public and cacheable', async function () {
    const answer = await call(apps.url, 'GET', `/.well-known/oauth-protected-resource/api/v1/agents/${AGENT_ID}/mcp`);
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('cache-control')).to.match(/^public, max-age=\d+$/);
    expect(answer.body).to.deep.include({ resource: `${BASE_URL}/api/v1/agents/${AGENT_ID}/mcp`, bearer_methods_supported: ['header'], scopes_supported: ['runs:write', 'runs:read', 'files:write'] });
  });
});

describe('adapter-http: no MCP door configured', function () {
  it('the endpoint answers 404 not_found, as for an unknown agent', async function () {
    const apps = await startApps();
    try {
      const answer = await call(apps.url, 'POST', mcpPath(), { headers: apiKey(SECRETS.keyA), json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      expect(answer.status).to.equal(404);
      expect(answer.body).to.include({ code: 'not_found', detail: 'The agent was not found.' });
    } finally {
      await apps.close();
    }
  });
});
