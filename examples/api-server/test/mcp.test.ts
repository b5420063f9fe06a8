import { Client, SdkHttpError, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { expect } from 'chai';
import { addresses, AGENT_B, AGENTS, e2eConfig, SECRETS, SQL_A } from './support/fixture.js';
import { apiKey, bearer, call } from '../../../tools/test-support/http.js';
import { startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

const mcpPath = (agent: string): string => `/api/v1/agents/${agent}/mcp`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A connected SDK client of `agent`'s endpoint, sending `headers` on every request. */
async function connect(base: string, agent: string, headers: Record<string, string>, mode: 'legacy' | 'auto' = 'legacy'): Promise<Client> {
  const client = new Client({ name: 'svc-mcp-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}${mcpPath(agent)}`), { requestInit: { headers } }));
  return client;
}

/** The problem details a tool error carries (as text content and as structured content). */
function problemOf(result: CallToolResult): Record<string, unknown> {
  expect(result.isError, JSON.stringify(result)).to.equal(true);
  const text = (result.content[0] as { type: string; text: string }).text;
  const problem = JSON.parse(text) as Record<string, unknown>;
  expect(result.structuredContent).to.deep.equal(problem);
  return problem;
}

function dataOf<T>(result: CallToolResult): T {
  expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
  const text = (result.content[0] as { type: string; text: string }).text;
  expect(JSON.parse(text)).to.deep.equal(result.structuredContent);
  return result.structuredContent as T;
}

/** One raw JSON-RPC POST to the endpoint. */
function rpc(base: string, agent: string, headers: Record<string, string>, body: unknown) {
  return call(base, 'POST', mcpPath(agent), { headers: { accept: 'application/json, text/event-stream', ...headers }, json: body });
}

describe('MCP endpoint (examples/api-server, SDK client over loopback)', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let base: string;
  const clients: Client[] = [];
  const open = async (...args: Parameters<typeof connect>): Promise<Client> => {
    const client = await connect(...args);
    clients.push(client);
    return client;
  };

  before(async function () {
    dir = await tempDir();
    const at = await addresses();
    const config = e2eConfig(at, { rate_limits: { credential: { requests: 600, window_seconds: 60 }, agent: { requests: 3, window_seconds: 60 } } });
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl);
    base = server.url;
  });

  after(async function () {
    for (const client of clients) await client.close();
    await server?.kill();
    await dir?.remove();
  });

  it('initializes (2025 handshake) without a session id and lists the six tools with the core schemas', async function () {
    const client = await open(base, AGENTS.main, apiKey(SECRETS.keyA));
    expect(client.getProtocolEra()).to.equal('legacy');
    expect(client.getServerVersion()?.name).to.equal('svc');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.deep.equal(['start_run', 'get_run', 'list_runs', 'list_connections', 'insert_record', 'update_record']);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName['get_run']?.inputSchema).to.deep.include({ type: 'object', required: ['run_id'] });
    expect(byName['insert_record']?.inputSchema.required).to.deep.equal(['connection_id', 'entity', 'values']);
    expect(byName['update_record']?.inputSchema.required).to.deep.equal(['connection_id', 'entity', 'key_column', 'key_value', 'values']);
    const start = byName['start_run']?.inputSchema as Record<string, unknown>;
    expect((start['oneOf'] as { required: string[] }[]).map((o) => o.required)).to.deep.equal([['files'], ['message']]);
    const answer = await rpc(base, AGENTS.main, apiKey(SECRETS.keyA), { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('mcp-session-id')).to.equal(null);
    expect(answer.headers.get('x-request-id')).to.be.a('string');
  });

  it('also serves the 2026-07-28 era (server/discover probe, per-request envelope) to a negotiating client, tool calls included', async function () {
    const client = await open(base, AGENTS.main, apiKey(SECRETS.keyA), 'auto');
    expect(client.getProtocolEra()).to.equal('modern');
    expect(client.getNegotiatedProtocolVersion()).to.equal('2026-07-28');
    const { tools } = await client.listTools();
    expect(tools).to.have.length(6);
    const started = dataOf<{ run_id: string }>(await client.callTool({ name: 'start_run', arguments: { message: 'modern era' } }));
    expect(dataOf<{ run_id: string; status: string }>(await client.callTool({ name: 'get_run', arguments: { run_id: started.run_id } }))).to.include({ run_id: started.run_id, status: 'queued' });
    expect(problemOf(await client.callTool({ name: 'get_run', arguments: { run_id: 'nope' } }))).to.include({ code: 'not_found' });
  });

  it('start_run starts a run of the path agent, readable at its status_url over REST and with get_run', async function () {
    const client = await open(base, AGENTS.main, apiKey(SECRETS.keyA));
    const started = dataOf<{ run_id: string; status: string; status_url: string }>(await client.callTool({ name: 'start_run', arguments: { message: 'Hello from MCP' } }));
    expect(started.run_id).to.match(UUID);
    expect(started.status).to.equal('queued');
    expect(started.status_url).to.equal(`${base}/api/v1/runs/${started.run_id}`);
    const rest = await call(base, 'GET', new URL(started.status_url).pathname, { headers: apiKey(SECRETS.keyA) });
    expect(rest.status).to.equal(200);
    const restRun = (rest.body as { data: Record<string, unknown> }).data;
    expect(restRun).to.include({ run_id: started.run_id, agent_id: AGENTS.main, status: 'queued' });
    const viaMcp = dataOf<Record<string, unknown>>(await client.callTool({ name: 'get_run', arguments: { run_id: started.run_id } }));
    expect(viaMcp).to.deep.equal(restRun);
  });

  it('a run start_run made is listed by list_runs and by GET /api/v1/runs?agent_id=, as its status_url shows it (issue 15, Done when)', async function () {
    const client = await open(base, AGENTS.spare, apiKey(SECRETS.keyA));
    dataOf(await client.callTool({ name: 'start_run', arguments: { message: 'an earlier run' } }));
    const started = dataOf<{ run_id: string; status_url: string }>(await client.callTool({ name: 'start_run', arguments: { message: 'listed' } }));
    const atStatusUrl = (await call(base, 'GET', new URL(started.status_url).pathname, { headers: apiKey(SECRETS.keyA) })).body as { data: { run_id: string } };
    const rest = await call(base, 'GET', `/api/v1/runs?agent_id=${AGENTS.spare}&limit=100`, { headers: apiKey(SECRETS.keyA) });
    expect(rest.status).to.equal(200);
    const restList = rest.body as { data: { run_id: string }[]; next_cursor: string | null };
    const listedByRest = restList.data.find((r) => r.run_id === started.run_id);
    expect(listedByRest, 'listed by REST').to.deep.equal(atStatusUrl.data);
    const viaMcp = dataOf<{ data: { run_id: string }[]; next_cursor: string | null }>(await client.callTool({ name: 'list_runs', arguments: { agent_id: AGENTS.spare, limit: 100 } }));
    expect(viaMcp).to.deep.equal(restList);
    expect(viaMcp.data[0]?.run_id, 'newest first').to.equal(started.run_id);
    // Paging with next_cursor, and a cursor of other filters refused like REST.
    const first = dataOf<{ data: unknown[]; next_cursor: string | null }>(await client.callTool({ name: 'list_runs', arguments: { agent_id: AGENTS.spare, limit: 1 } }));
    expect(first.data).to.have.length(1);
    expect(first.next_cursor).to.be.a('string');
    const second = dataOf<{ data: unknown[] }>(await client.callTool({ name: 'list_runs', arguments: { agent_id: AGENTS.spare, limit: 1, cursor: first.next_cursor } }));
    expect(second.data).to.have.length(1).and.not.deep.equal(first.data);
    expect(problemOf(await client.callTool({ name: 'list_runs', arguments: { limit: 1, cursor: first.next_cursor } }))).to.include({ status: 400, code: 'invalid_cursor' });
    expect(problemOf(await client.callTool({ name: 'list_runs', arguments: { status: 'done' } }))).to.include({ status: 400, code: 'validation_failed', detail: 'query parameter status: must be one of queued, running, succeeded, failed, cancelled' });
    // B's list never shows A's run.
    const ofB = dataOf<{ data: { run_id: string }[] }>(await (await open(base, AGENT_B, apiKey(SECRETS.keyB))).callTool({ name: 'list_runs', arguments: { limit: 100 } }));
    expect(ofB.data.map((r) => r.run_id)).not.to.include(started.run_id);
  });

  it("list_connections answers the REST list wrapped with its next_cursor, the account's own only, API keys only", async function () {
    const client = await open(base, AGENTS.main, apiKey(SECRETS.keyA));
    const rest = await call(base, 'GET', '/api/v1/connections?limit=100', { headers: apiKey(SECRETS.keyA) });
    const viaMcp = dataOf<{ data: { connection_id: string }[]; next_cursor: string | null }>(await client.callTool({ name: 'list_connections', arguments: {} }));
    expect(viaMcp).to.deep.equal({ data: rest.body, next_cursor: null });
    expect(viaMcp.data.map((c) => c.connection_id)).to.include(SQL_A);
    const one = dataOf<{ data: unknown[]; next_cursor: string | null }>(await client.callTool({ name: 'list_connections', arguments: { limit: 1 } }));
    expect(one.data).to.have.length(1);
    expect(one.next_cursor).to.be.a('string');
    const ofB = dataOf<{ data: { connection_id: string }[] }>(await (await open(base, AGENT_B, apiKey(SECRETS.keyB))).callTool({ name: 'list_connections', arguments: {} }));
    expect(ofB.data.map((c) => c.connection_id)).not.to.include(SQL_A);
    expect(problemOf(await client.callTool({ name: 'list_connections', arguments: { limit: 0 } }))).to.include({ status: 400, code: 'validation_failed' });
    const token = await open(base, AGENTS.main, bearer(SECRETS.tokenWrite));
    expect(problemOf(await token.callTool({ name: 'list_connections', arguments: {} }))).to.include({ status: 401, code: 'unsupported_credential' });
  });

  it('insert_record and update_record write through the core (visible to a REST update of the same row)', async function () {
    const client = await open(base, AGENTS.main, apiKey(SECRETS.keyA));
    const inserted = dataOf(await client.callTool({ name: 'insert_record', arguments: { connection_id: SQL_A, entity: 'dbo.orders', values: { id: 9101, sku: 'MCP-1', qty: 1 } } }));
    expect(inserted).to.deep.equal({ rows_affected: 1 });
    const updated = dataOf(await client.callTool({ name: 'update_record', arguments: { connection_id: SQL_A, entity: 'dbo.orders', key_column: 'id', key_value: 9101, values: { qty: 5 } } }));
    expect(updated).to.deep.equal({ rows_affected: 1 });
    const rest = await call(base, 'PATCH', `/api/v1/connections/${SQL_A}/records`, { headers: apiKey(SECRETS.keyA), json: { entity: 'dbo.orders', key_column: 'id', key_value: 9101, values: { qty: 6 } } });
    expect(rest.status).to.equal(200);
    expect(rest.body).to.deep.equal({ data: { rows_affected: 1 } });
  });

  it('keeps numbers exact: a pretty-printed body with an id a double cannot hold inserts that very id', async function () {
    // Not compact JSON: read by the exact parser (objects without a prototype, ExactNumber).
    const raw = `{
  "jsonrpc": "2.0", "id": 7, "method": "tools/call",
  "params": { "name": "insert_record", "arguments": { "connection_id": "${SQL_A}", "entity": "dbo.orders", "values": { "id": 9007199254740993, "sku": "EXACT" } } }
}`;
    const answer = await call(base, 'POST', mcpPath(AGENTS.main), { headers: { ...apiKey(SECRETS.keyA), accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, raw });
    expect(answer.status).to.equal(200);
    expect(dataOf((answer.body as { result: CallToolResult }).result)).to.deep.equal({ rows_affected: 1 });
    const update = (key: string) => call(base, 'PATCH', `/api/v1/connections/${SQL_A}/records`, { headers: { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' }, raw: `{"entity":"dbo.orders","key_column":"id","key_value":${key},"values":{"qty":2}}` });
    expect((await update('9007199254740992')).body).to.deep.equal({ data: { rows_affected: 0 } });
    expect((await update('9007199254740993')).body).to.deep.equal({ data: { rows_affected: 1 } });
  });

  it('a domain error is a tool result with isError and the problem details REST answers', async function () {
    const client = await open(base, AGENTS.main, apiKey(SECRETS.keyA));
    const invalid = problemOf(await client.callTool({ name: 'insert_record', arguments: { connection_id: SQL_A, entity: 'orders', values: {} } }));
    const rest = await call(base, 'POST', `/api/v1/connections/${SQL_A}/records`, { headers: apiKey(SECRETS.keyA), json: { entity: 'orders', values: {} } });
    const { request_id: _a, ...mcpProblem } = invalid;
    const { request_id: _b, ...restProblem } = rest.body as Record<string, unknown>;
    expect(mcpProblem).to.deep.equal(restProblem);
    expect(invalid).to.include({ type: 'about:blank', title: 'Bad Request', status: 400, code: 'validation_failed' });
    expect(invalid['errors']).to.deep.include({ path: '/entity', message: (invalid['errors'] as { path: string; message: string }[])[0]?.message });
    const missing = problemOf(await client.callTool({ name: 'get_run', arguments: { run_id: 'no-such-run' } }));
    expect(missing).to.include({ status: 404, code: 'not_found', detail: 'The run was not found.' });
    const noConnection = problemOf(await client.callTool({ name: 'insert_record', arguments: { entity: 'dbo.orders', values: { id: 1 } } }));
    expect(noConnection).to.include({ status: 400, code: 'validation_failed', detail: '/connection_id: is required' });
  });

  it('row writes need an API key and start_run the runs:write scope: a tool error, as REST refuses', async function () {
    const client = await open(base, AGENTS.main, bearer(SECRETS.tokenNoScope));
    expect(await client.listTools()).to.have.property('tools').with.length(6);
    const scope = problemOf(await client.callTool({ name: 'start_run', arguments: { message: 'x' } }));
    expect(scope).to.include({ status: 403, code: 'insufficient_scope' });
    const writer = await open(base, AGENTS.main, bearer(SECRETS.tokenWrite));
    const write = problemOf(await writer.callTool({ name: 'insert_record', arguments: { connection_id: SQL_A, entity: 'dbo.orders', values: { id: 1 } } }));
    expect(write).to.include({ status: 401, code: 'unsupported_credential' });
    const started = dataOf<{ run_id: string }>(await writer.callTool({ name: 'start_run', arguments: { message: 'with a token' } }));
    expect(started.run_id).to.match(UUID);
  });

  it('a missing or bad credential is HTTP 401 with WWW-Authenticate naming the RFC 9728 metadata, which is served', async function () {
    const metadataUrl = `${base}/.well-known/oauth-protected-resource/api/v1/agents/${AGENTS.main}/mcp`;
    const missing = await rpc(base, AGENTS.main, {}, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(missing.status).to.equal(401);
    expect(missing.headers.get('www-authenticate')).to.equal(`Bearer realm="svc", resource_metadata="${metadataUrl}"`);
    expect(missing.body).to.include({ status: 401, code: 'missing_credential' });
    const bad = await rpc(base, AGENTS.main, apiKey('svc-not-a-key-of-anyone-0000'), { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(bad.status).to.equal(401);
    expect(bad.headers.get('www-authenticate')).to.equal(`Bearer realm="svc", resource_metadata="${metadataUrl}", error="invalid_token"`);
    let thrown: unknown;
    try {
      await connect(base, AGENTS.main, {});
    } catch (error) {
      thrown = error;
    }
    // Without an auth provider the SDK client reports the 401 as an HTTP error.
    expect(thrown).to.be.instanceOf(SdkHttpError);
    expect((thrown as SdkHttpError).status).to.equal(401);
    // For every agent id, existing or not (CONTRACT "Isolation between accounts", MCP): the same 401, and metadata served.
    const missingAgent = await rpc(base, 'agent_zzzz', {}, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(missingAgent.status).to.equal(401);
    expect(missingAgent.headers.get('www-authenticate')).to.equal(`Bearer realm="svc", resource_metadata="${base}/.well-known/oauth-protected-resource/api/v1/agents/agent_zzzz/mcp"`);
    const { request_id: _m, ...missingProblem } = missing.body as Record<string, unknown>;
    const { request_id: _z, ...missingAgentProblem } = missingAgent.body as Record<string, unknown>;
    expect(missingAgentProblem).to.deep.equal(missingProblem);
    expect((await call(base, 'GET', '/.well-known/oauth-protected-resource/api/v1/agents/agent_zzzz/mcp')).status).to.equal(200);
    const metadata = await call(base, 'GET', new URL(metadataUrl).pathname);
    expect(metadata.status).to.equal(200);
    expect(metadata.body).to.deep.include({ resource: `${base}${mcpPath(AGENTS.main)}`, bearer_methods_supported: ['header'], scopes_supported: ['runs:write', 'runs:read', 'files:write'] });
  });

  it("another account's agent answers 404 exactly like a missing one", async function () {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const foreign = await rpc(base, AGENT_B, apiKey(SECRETS.keyA), body);
    const missing = await rpc(base, 'agent_nobody', apiKey(SECRETS.keyA), body);
    expect(foreign.status).to.equal(404);
    expect(missing.status).to.equal(404);
    const { request_id: _a, ...a } = foreign.body as Record<string, unknown>;
    const { request_id: _b, ...b } = missing.body as Record<string, unknown>;
    expect(a).to.deep.equal(b);
    expect(a).to.include({ code: 'not_found' });
    let thrown: unknown;
    try {
      await connect(base, AGENT_B, apiKey(SECRETS.keyA));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.be.instanceOf(SdkHttpError);
    expect((thrown as SdkHttpError).status).to.equal(404);
  });

  it("start_run over the agent's window is a rate_limited tool error (status 429) with the rate-limit headers of the charge", async function () {
    const headers = apiKey(SECRETS.keyA2);
    const callStart = (id: number) => rpc(base, AGENTS.limit, headers, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'start_run', arguments: { message: `n${id}` } } });
    for (let i = 1; i <= 3; i++) {
      const ok = await callStart(i);
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('ratelimit-limit')).to.equal('3');
      expect(ok.headers.get('ratelimit-remaining')).to.equal(String(3 - i));
    }
    const refused = await callStart(4);
    expect(refused.status).to.equal(200);
    expect(refused.headers.get('ratelimit-remaining')).to.equal('0');
    const result = (refused.body as { result: CallToolResult }).result;
    expect(problemOf(result)).to.include({ status: 429, code: 'rate_limited' });
    // Every other message is charged once too, to the credential's window only.
    const tools = await rpc(base, AGENTS.limit, headers, { jsonrpc: '2.0', id: 5, method: 'tools/list' });
    expect(tools.status).to.equal(200);
    expect(tools.headers.get('ratelimit-limit'), 'tools/list is charged to the credential').to.equal('600');
    const before = Number(tools.headers.get('ratelimit-remaining'));
    const ping = await rpc(base, AGENTS.limit, headers, { jsonrpc: '2.0', id: 6, method: 'ping' });
    expect(Number(ping.headers.get('ratelimit-remaining')), 'ping: one more').to.equal(before - 1);
    const missingAgent = await rpc(base, 'agent_nobody', headers, { jsonrpc: '2.0', id: 7, method: 'tools/list' });
    expect(missingAgent.status).to.equal(404);
    expect(Number(missingAgent.headers.get('ratelimit-remaining')), 'a 404 is charged as REST charges it').to.equal(before - 2);
  });

  it('GET and DELETE answer 405 (stateless: no server-sent stream, no session)', async function () {
    for (const method of ['GET', 'DELETE']) {
      const answer = await call(base, method, mcpPath(AGENTS.main), { headers: apiKey(SECRETS.keyA) });
      expect(answer.status, method).to.equal(405);
      expect(answer.headers.get('allow')).to.match(/POST/);
    }
  });
});
