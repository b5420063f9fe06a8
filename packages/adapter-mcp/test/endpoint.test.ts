import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { expect } from 'chai';
import { createMcpEndpoint, MCP_TOOLS, type McpEndpoint, type McpProblemCode } from '@svc/adapter-mcp';
import { createCore, ExactNumber, type Core, type ValidationIssue } from '@svc/core';
import {
  aConnection,
  anAgent,
  aStoredCredential,
  FailingRunQueue,
  InMemoryAgentCatalog,
  InMemoryConnectionCatalog,
  InMemoryCredentialStore,
  InMemoryRecordWriter,
  InMemoryRuns,
  RecordingLogger,
} from '@svc/core/testing';

const KEY = 'svc-mcp-adapter-test-key-000000000001';
const TOKEN_READ = 'svcpt_mcp-adapter-test-token-read-0001';
const BASE_URL = 'https://api.mcp.example.test';
const CONNECTION_ID = aConnection().connectionId;
const AGENT_ID = anAgent().agentId;
/** How often the endpoint told the test door that a tool call met a lost dependency. */
let unavailableCalls = 0;

/** The problem details a test door builds: what adapter-http's `problemOf` builds, reduced. */
const problemOf = (code: McpProblemCode, detail: string, extra: { errors?: readonly ValidationIssue[] | undefined; requestId?: string | undefined }) => ({
  code,
  detail,
  ...(extra.errors !== undefined ? { errors: extra.errors } : {}),
  ...(extra.requestId !== undefined ? { request_id: extra.requestId } : {}),
});

/**
 * A minimal door over node:http, doing what adapter-http does before it hands an exchange
 * over: identify the credential, parse the JSON body (here with JSON.parse, plus a hook
 * that swaps in an exact number), then `handle`.
 */
async function serve(core: Core, endpoint: McpEndpoint, rewrite: (body: unknown) => unknown = (b) => b): Promise<{ server: Server; url: string }> {
  const server = createServer(async (req, res) => {
    const apiKeys = req.headers['x-api-key'] === undefined ? [] : [String(req.headers['x-api-key'])];
    const authorizations = req.headers.authorization === undefined ? [] : [req.headers.authorization];
    const principal = await core.authenticate.execute({ apiKeys, authorizations });
    if (!principal.ok) {
      res.writeHead(401).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = rewrite(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    // As the HTTP adapter does: a message other than one tool call is charged before the exchange.
    const meter = core.rateLimits.meterFor(principal.value);
    if (!endpoint.isToolCall(body)) await meter.charge();
    await endpoint.handle({
      req,
      res,
      agentId: AGENT_ID,
      body,
      principal: principal.value,
      credentials: { apiKeys, authorizations },
      route: { egressHeader: req.headers['x-svc-egress'] as string | undefined },
      requestId: 'req-1',
      meter,
      unavailable: () => {
        unavailableCalls += 1;
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe('adapter-mcp: the endpoint on the core use cases', function () {
  let writer: InMemoryRecordWriter;
  let runs: InMemoryRuns;
  let core: Core;
  let endpoint: McpEndpoint;
  let server: Server;
  let client: Client;
  let logger: RecordingLogger;

  async function start(rewrite?: (body: unknown) => unknown, queue?: FailingRunQueue): Promise<void> {
    unavailableCalls = 0;
    writer = new InMemoryRecordWriter();
    writer.defineTable('dbo.orders', ['id', 'amount', 'note']);
    runs = new InMemoryRuns();
    core = createCore(
      {
        credentials: new InMemoryCredentialStore([aStoredCredential(KEY), aStoredCredential(TOKEN_READ, { scopes: ['runs:read'] })]),
        agents: new InMemoryAgentCatalog([anAgent()]),
        connections: new InMemoryConnectionCatalog([aConnection()]),
        recordWriter: writer,
        runs,
        ...(queue !== undefined ? { runQueue: queue } : {}),
      },
      { baseUrl: BASE_URL, rateLimits: { credential: { limit: 100, windowSeconds: 60 }, agent: { limit: 2, windowSeconds: 60 } } },
    );
    logger = new RecordingLogger();
    endpoint = createMcpEndpoint(core, { name: 'svc-test', version: '0.0.1', problemOf, logger });
    const served = await serve(core, endpoint, rewrite);
    server = served.server;
    client = new Client({ name: 'adapter-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers: { 'x-api-key': KEY } } }));
  }

  afterEach(async function () {
    await client?.close();
    await endpoint?.close();
    await new Promise((resolve) => server?.close(resolve));
    await core?.close();
  });

  it("lists the tool table, each with the core's JSON Schemas as its input schema (REST body) and output schema (REST data)", async function () {
    await start();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.deep.equal(MCP_TOOLS.map((t) => t.name));
    for (const tool of MCP_TOOLS) {
      const listed = tools.find((t) => t.name === tool.name);
      expect(listed?.inputSchema, tool.name).to.deep.equal(tool.inputSchema);
      expect(listed?.outputSchema, tool.name).to.deep.equal(tool.outputSchema);
      expect(listed?.annotations?.title).to.equal(tool.title);
    }
  });

  it('hands the arguments to the use case unvalidated by the SDK, so the core names the field (one validation)', async function () {
    await start();
    const result = await client.callTool({ name: 'start_run', arguments: { message: '' } });
    expect(result.isError).to.equal(true);
    expect(result.structuredContent).to.deep.include({ code: 'validation_failed', request_id: 'req-1' });
    expect((result.structuredContent as { errors: ValidationIssue[] }).errors).to.deep.equal([{ path: '/message', message: 'must not be empty' }]);
  });

  it('keeps an exact number the door parsed as ExactNumber all the way to the writer', async function () {
    const exact = new ExactNumber('12345678901234567890.123456789');
    await start((body) => {
      const message = body as { params?: { arguments?: { values?: Record<string, unknown> } } };
      if (message.params?.arguments?.values !== undefined) message.params.arguments.values['amount'] = exact;
      return body;
    });
    const result = (await client.callTool({ name: 'insert_record', arguments: { connection_id: CONNECTION_ID, entity: 'dbo.orders', values: { id: 1, amount: 0 } } })) as CallToolResult;
    expect(result.structuredContent).to.deep.equal({ rows_affected: 1 });
    const [row] = writer.rowsOf('dbo.orders') ?? [];
    expect(row?.['amount']).to.be.instanceOf(ExactNumber);
    expect(String(row?.['amount'])).to.equal('12345678901234567890.123456789');
  });

  it('authenticates each call with its REST operation: a runs:read token may get_run, not start_run nor write rows', async function () {
    await start();
    const reader = new Client({ name: 'reader', version: '1' });
    const address = server.address() as AddressInfo;
    await reader.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN_READ}` } } }));
    try {
      const start = await reader.callTool({ name: 'start_run', arguments: { message: 'x' } });
      expect(start.structuredContent).to.deep.include({ code: 'insufficient_scope' });
      const write = await reader.callTool({ name: 'update_record', arguments: { connection_id: CONNECTION_ID, entity: 'dbo.orders', key_column: 'id', key_value: 1, values: { note: 'x' } } });
      expect(write.structuredContent).to.deep.include({ code: 'unsupported_credential' });
      const read = await reader.callTool({ name: 'get_run', arguments: { run_id: 'nothing' } });
      expect(read.structuredContent).to.deep.include({ code: 'not_found' });
    } finally {
      await reader.close();
    }
  });

  it("charges start_run to the agent's window: the third call in the window is rate_limited", async function () {
    await start();
    for (let i = 0; i < 2; i++) expect((await client.callTool({ name: 'start_run', arguments: { message: `m${i}` } })).isError ?? false).to.equal(false);
    const refused = await client.callTool({ name: 'start_run', arguments: { message: 'm3' } });
    expect(refused.structuredContent).to.deep.include({ code: 'rate_limited' });
  });

  it('a lost dependency is a service_unavailable tool error; the log line names its type, never its message', async function () {
    const queue = new FailingRunQueue(new InMemoryRuns().queue);
    queue.failWith('unavailable');
    await start(undefined, queue);
    const result = await client.callTool({ name: 'start_run', arguments: { message: 'x' } });
    expect(result.isError).to.equal(true);
    expect(result.structuredContent).to.deep.equal({
      code: 'service_unavailable',
      detail: 'A service this call needs is unavailable; nothing was done. Retry after the Retry-After seconds.',
      request_id: 'req-1',
    });
    expect(unavailableCalls, 'the door is told, to set Retry-After').to.equal(1);
    expect(logger.lines.map((l) => l.message)).to.include('mcp tool call: dependency unavailable');
  });
});
