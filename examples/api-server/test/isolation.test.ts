// Isolation between accounts (docs/CONTRACT.md "Isolation between accounts"), proved for
// every operation of the served OpenAPI document on both listeners: account B's credential
// aimed at account A's resource gets the answer a missing resource of the same shape gets.
// Also the four reproductions of issue 18, over HTTP against the server as users run it.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { parse } from 'yaml';
import { sha256Hex } from '@svc/core';
import { CatalogDuplicateError, migrateCatalog, PostgresCatalog } from '@svc/adapter-postgres';
import { addresses, AGENT_B, AGENTS, e2eConfig, PG_A, SECRETS, SQL_A, SQL_B, type Addresses } from './support/fixture.js';
import { CATALOG_TEST_URL, dropSchema, fillCatalog, type AccountEntry } from './support/catalog-database.js';
import { comparable, documentedOperations, probeCoverage, type Comparable, type DocumentedOperation } from './support/isolation.js';
import { runBuilt, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';
import { apiKey, bearer, call, expectData, expectProblem, type CallOptions } from '../../../tools/test-support/http.js';
import { rawExchange } from '../../../tools/test-support/raw-http.js';

/** Account B's OAuth access tokens, added to the e2e configuration for these probes. */
const B_TOKENS = {
  write: 'svcpt_iso-b-token-runs-write-Zz9Yy8Xx7Ww6V',
  noScope: 'svcpt_iso-b-token-no-scope-Uu5Tt4Ss3Rr2Qq1',
} as const;

/** Account B's credentials, each probe variant sent with each that applies. */
const B = {
  key: apiKey(SECRETS.keyB),
  bearerKey: bearer(SECRETS.keyB),
  tokenWrite: bearer(B_TOKENS.write),
  tokenNoScope: bearer(B_TOKENS.noScope),
} as const;

/** One request of a probe, sent once at A's resource and once at a missing one. */
interface Variant {
  readonly name: string;
  readonly options: CallOptions;
  /** Sent with another method than the operation's (`HEAD` on a `GET`). */
  readonly method?: string;
}

/** A resource of account A and a missing resource of the same shape. */
interface Target {
  readonly name: string;
  /** Path parameter values naming A's resource. */
  readonly foreign: Readonly<Record<string, string>>;
  /** The same parameters naming nothing, of the same length and form. */
  readonly missing: Readonly<Record<string, string>>;
  /** A's own credential: its answer to the first variant shows the resource is there for A. */
  readonly owner: Record<string, string>;
}

/**
 * How an operation is probed: `resource` operations name a resource of one account in their
 * path; `account-free` operations answer the same whoever calls (the reason is required);
 * `list` operations list the caller's resources, and B's lists must never show A's.
 */
type Probe =
  | { readonly kind: 'resource'; readonly targets: () => readonly Target[]; readonly variants: readonly Variant[] }
  /** Makes a resource of the caller's own account from the body alone (a file prepare): what B makes, A never sees. */
  | { readonly kind: 'creates'; readonly why: string }
  | { readonly kind: 'account-free'; readonly why: string; readonly parameters?: Readonly<Record<string, string>> }
  | ListProbe;

// --- List probes (docs/CONTRACT.md "Isolation between accounts": absent from lists) ---

/** One request of a list probe, sent with B's credential. */
interface ListVariant extends Variant {
  /** The query string, `?` included (`''` for none); computed when sent (a cursor of A's list). */
  readonly query: () => string;
  /** A query of the same shape naming nothing (a missing agent): B's answer to it must equal B's answer to `query`. */
  readonly missing?: () => string;
  /** The status B must get on every page, when the variant fixes it. */
  readonly status?: number;
}

/**
 * A list operation: B's answer to every variant must contain none of `absent()` (ids of
 * A's resources), which A's answer to the first variant, with A's credential `owner`,
 * does contain (so that the probe can fail).
 */
interface ListProbe {
  readonly kind: 'list';
  readonly absent: () => readonly string[];
  readonly owner: Record<string, string>;
  readonly variants: readonly ListVariant[];
}

// --- end of list probes ---

/** A JSON body and B's API key; `headers` adds or replaces headers. */
const json = (name: string, body: unknown, headers: Record<string, string> = B.key): Variant => ({ name, options: { headers, json: body } });
const raw = (name: string, body: string, contentType: string): Variant => ({ name, options: { headers: { ...B.key, 'content-type': contentType }, raw: body } });

/** Variants of a row write: valid, every way a body can be wrong, every kind of B's credential. */
function recordWriteVariants(valid: Record<string, unknown>): Variant[] {
  return [
    json('a valid body', valid),
    json('a valid body, key as a bearer', valid, B.bearerKey),
    json('an unknown entity', { ...valid, entity: 'dbo.nothing_here' }),
    json('an unknown column', { ...valid, values: { no_such_column: 1 } }),
    json('no values', { ...valid, values: undefined }),
    json('an unknown member', { ...valid, extra: true }),
    json('a scalar body', 42),
    raw('unreadable JSON', '{"entity":', 'application/json'),
    raw('a text body', 'entity=dbo.orders', 'text/plain'),
    { name: 'no body', options: { headers: B.key } },
    json('an OAuth token with runs:write', valid, B.tokenWrite),
    json('an OAuth token without scopes', valid, B.tokenNoScope),
  ];
}

const INSERT = { entity: 'dbo.orders', values: { sku: 'ISO-1', qty: 1 } };
const UPDATE = { entity: 'dbo.orders', key_column: 'id', key_value: 1, values: { status: 'iso' } };
/** A valid run start (files, so that it may carry `notification_email`); its e-mail address is registered with the leak scan by `call`, so no answer may show it. */
const START = { files: [{ file_key: 'uploads/iso.pdf', file_name: 'iso.pdf', content_type: 'application/pdf' }], notification_email: 'iso-owner@example.com' };

/** Variants of a discovery read (`getAgent`, `getConnection`): every kind of B's credential, and HEAD. */
const discoveryReadVariants: readonly Variant[] = [
  { name: 'an API key', options: { headers: B.key } },
  { name: 'an API key as a bearer', options: { headers: B.bearerKey } },
  { name: 'HEAD', method: 'HEAD', options: { headers: B.key } },
  { name: 'an OAuth token with scopes', options: { headers: B.tokenWrite } },
  { name: 'an OAuth token without scopes', options: { headers: B.tokenNoScope } },
];

/** A cursor of the form this server mints whose signature is made up: refused like A's real cursor given to B. */
const FORGED_CURSOR = `${Buffer.from(JSON.stringify({ v: 1, after: 'a' })).toString('base64url')}.${'A'.repeat(43)}`;

/** Variants of a discovery list: pages of every size, a forged cursor, and the refusals (A's real cursor: the test itself). */
function discoveryListVariants(): ListVariant[] {
  return [
    { name: 'no parameters', query: () => '', options: { headers: B.key }, status: 200 },
    { name: 'limit=1, every page, key as a bearer', query: () => '?limit=1', options: { headers: B.bearerKey }, status: 200 },
    { name: 'limit=100', query: () => '?limit=100', options: { headers: B.key }, status: 200 },
    { name: 'HEAD', method: 'HEAD', query: () => '', options: { headers: B.key }, status: 200 },
    { name: 'a forged cursor', query: () => `?cursor=${FORGED_CURSOR}`, options: { headers: B.key }, status: 400 },
    { name: 'a bad limit', query: () => '?limit=0', options: { headers: B.key }, status: 400 },
    { name: 'an OAuth token with scopes', query: () => '', options: { headers: B.tokenWrite }, status: 401 },
    { name: 'an OAuth token without scopes', query: () => '', options: { headers: B.tokenNoScope }, status: 401 },
  ];
}

/** What differs between two comparable answers: `status`, `header <name>`, `body`. */
function differ(a: Comparable, b: Comparable): string[] {
  const out: string[] = [];
  if (a.status !== b.status) out.push('status');
  for (const name of new Set([...Object.keys(a.headers), ...Object.keys(b.headers)])) if (a.headers[name] !== b.headers[name]) out.push(`header ${name}`);
  if (JSON.stringify(a.body) !== JSON.stringify(b.body)) out.push('body');
  return out;
}

/** A missing id of the same shape as `id`: same length, same alphabet, no such resource. */
const uuidLike = (): string => randomUUID();
const agentLike = (id: string): string => `${id.slice(0, id.indexOf('_') + 1)}${'z'.repeat(id.length - id.indexOf('_') - 1)}`;

/** Where the accounts live: the configuration file, or a PostgreSQL catalog filled with the same entries. */
type Catalog = 'configuration file' | 'PostgreSQL catalog';

for (const catalog of ['configuration file', 'PostgreSQL catalog'] as const satisfies readonly Catalog[]) describe(`isolation between accounts on the ${catalog} (child process, every documented operation)`, function () {
  this.timeout(60_000);
  const schema = `iso_${process.pid}_${Date.now().toString(36)}`;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let at: Addresses;
  let server: ServerProcess;
  let operations: DocumentedOperation[];
  /** A run of account A (started in `before`). */
  let runOfA: string;
  /** Files of account A (made in `before`): a ready one, a pending one, and one its owner's delete probe deletes. */
  let fileOfA = '';
  let fileOfAPending = '';
  let fileOfAToDelete = '';
  const fileTarget = (fileKey: string): Target => ({ name: "A's file", foreign: { file_key: fileKey }, missing: { file_key: `file_${randomUUID().replace(/-/gu, '')}` }, owner: apiKey(SECRETS.keyA) });
  const fileVariants: readonly Variant[] = [
    { name: 'an API key', options: { headers: B.key } },
    { name: 'an API key as a bearer', options: { headers: B.bearerKey } },
    { name: 'an OAuth token without files:write', options: { headers: B.tokenWrite } },
    { name: 'an OAuth token without scopes', options: { headers: B.tokenNoScope } },
  ];
  /** Runs of account A the run list probe starts; absent from every list of B. */
  const listedRunsOfA: string[] = [];

  const connectionTargets = (): Target[] => [
    { name: "A's sqlserver connection", foreign: { connection_id: SQL_A }, missing: { connection_id: uuidLike() }, owner: apiKey(SECRETS.keyA) },
    { name: "A's postgresql connection (writes_not_supported for A)", foreign: { connection_id: PG_A }, missing: { connection_id: uuidLike() }, owner: apiKey(SECRETS.keyA) },
  ];

  // The agent's MCP endpoint (docs/CONTRACT.md "MCP"): B at A's agent answers as at a
  // missing agent, whatever the JSON-RPC message, body or credential; its RFC 9728 metadata
  // is public and names only the id it was asked for.
  const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };
  const mcpJson = (name: string, body: unknown, headers: Record<string, string> = B.key): Variant => json(name, body, { ...MCP_ACCEPT, ...headers });
  const MCP_INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'iso', version: '1' } } };
  const MCP_START = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'start_run', arguments: START } };
  const MCP_PROBES: Readonly<Record<string, Probe>> = {
    callMcp: {
      kind: 'resource',
      targets: () => [{ name: "A's agent", foreign: { agent_id: AGENTS.spare }, missing: { agent_id: agentLike(AGENTS.spare) }, owner: apiKey(SECRETS.keyA) }],
      variants: [
        mcpJson('initialize', MCP_INITIALIZE),
        mcpJson('tools/list', { jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        mcpJson('tools/call start_run', MCP_START),
        mcpJson('tools/call start_run, key as a bearer', MCP_START, B.bearerKey),
        mcpJson('tools/call insert_record on A\'s connection', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'insert_record', arguments: { connection_id: SQL_A, ...INSERT } } }),
        mcpJson('tools/call list_runs of A\'s agent', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'list_runs', arguments: { agent_id: AGENTS.spare } } }),
        mcpJson('tools/call list_connections', { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'list_connections', arguments: {} } }),
        mcpJson('an unknown method', { jsonrpc: '2.0', id: 4, method: 'no/such' }),
        mcpJson('a scalar body', 42),
        raw('unreadable JSON', '{"jsonrpc":', 'application/json'),
        raw('a text body', 'jsonrpc=2.0', 'text/plain'),
        { name: 'no body', options: { headers: { ...MCP_ACCEPT, ...B.key } } },
        mcpJson('an OAuth token with runs:write', MCP_START, B.tokenWrite),
        mcpJson('an OAuth token without scopes', MCP_START, B.tokenNoScope),
      ],
    },
    mcpProtectedResourceMetadata: { kind: 'account-free', why: 'RFC 9728 metadata is public and the same for any agent id (it echoes the id only)', parameters: { agent_id: AGENTS.spare } },
  };

  /**
   * One probe per documented operation id. An operation missing here fails the suite
   * ("every operation has a probe"), so a new operation is covered the day it lands.
   */
  const PROBES: Readonly<Record<string, Probe>> = {
    ...MCP_PROBES,
    describeApi: { kind: 'account-free', why: 'the index is public and the same for every caller (spec "Discovery")' },
    insertRecord: { kind: 'resource', targets: connectionTargets, variants: recordWriteVariants(INSERT) },
    updateRecord: { kind: 'resource', targets: connectionTargets, variants: recordWriteVariants(UPDATE) },
    insertRecordViaEgress: { kind: 'resource', targets: connectionTargets, variants: recordWriteVariants(INSERT) },
    updateRecordViaEgress: { kind: 'resource', targets: connectionTargets, variants: recordWriteVariants(UPDATE) },
    startRun: {
      kind: 'resource',
      targets: () => [{ name: "A's agent", foreign: { agent_id: AGENTS.spare }, missing: { agent_id: agentLike(AGENTS.spare) }, owner: apiKey(SECRETS.keyA) }],
      variants: [
        json('a valid body', START),
        json('a valid body, key as a bearer', START, B.bearerKey),
        json('files of the wrong type', { files: 'not-a-list' }),
        json('an unknown member', { ...START, extra: true }),
        json('an empty object', {}),
        raw('unreadable JSON', '{"message":', 'application/json'),
        raw('a text body', 'message=x', 'text/plain'),
        { name: 'no body', options: { headers: B.key } },
        json('an OAuth token with runs:write', START, B.tokenWrite),
        json('an OAuth token without scopes', START, B.tokenNoScope),
      ],
    },
    getRun: {
      kind: 'resource',
      targets: () => [{ name: "A's run", foreign: { run_id: runOfA }, missing: { run_id: uuidLike() }, owner: apiKey(SECRETS.keyA) }],
      variants: [
        { name: 'an API key', options: { headers: B.key } },
        { name: 'an API key as a bearer', options: { headers: B.bearerKey } },
        { name: 'HEAD', method: 'HEAD', options: { headers: B.key } },
        { name: 'an OAuth token with runs:read', options: { headers: B.tokenWrite } },
        { name: 'an OAuth token without scopes', options: { headers: B.tokenNoScope } },
        { name: 'If-None-Match', options: { headers: { ...B.key, 'if-none-match': '"x"' } } },
      ],
    },
    // The owner's first call cancels A's run (200), then 409 run_final: never the 404 of a missing one.
    cancelRun: {
      kind: 'resource',
      targets: () => [{ name: "A's run", foreign: { run_id: runOfA }, missing: { run_id: uuidLike() }, owner: apiKey(SECRETS.keyA) }],
      variants: [
        { name: 'an API key', options: { headers: B.key } },
        { name: 'an API key as a bearer', options: { headers: B.bearerKey } },
        { name: 'a JSON body', options: { headers: B.key, json: {} } },
        { name: 'an OAuth token with runs:write', options: { headers: B.tokenWrite } },
        { name: 'an OAuth token without scopes', options: { headers: B.tokenNoScope } },
      ],
    },
    // A's run is final once cancelRun's probe ran: the owner's stream answers its history and closes.
    streamRunEvents: {
      kind: 'resource',
      targets: () => [{ name: "A's run", foreign: { run_id: runOfA }, missing: { run_id: uuidLike() }, owner: apiKey(SECRETS.keyA) }],
      variants: [
        { name: 'an API key', options: { headers: B.key } },
        { name: 'an API key as a bearer', options: { headers: B.bearerKey } },
        { name: 'HEAD', method: 'HEAD', options: { headers: B.key } },
        { name: 'Last-Event-ID', options: { headers: { ...B.key, 'last-event-id': '1-0' } } },
        { name: 'an OAuth token with runs:read', options: { headers: B.tokenWrite } },
        { name: 'an OAuth token without scopes', options: { headers: B.tokenNoScope } },
      ],
    },

    // Discovery of agents and connections (docs/CONTRACT.md "Discovery"): reads are resource
    // probes; lists are `list` probes (A's ids never in any page B gets).
    listAgents: { kind: 'list', absent: () => Object.values(AGENTS), owner: apiKey(SECRETS.keyA), variants: discoveryListVariants() },
    getAgent: {
      kind: 'resource',
      targets: () => [{ name: "A's agent", foreign: { agent_id: AGENTS.main }, missing: { agent_id: agentLike(AGENTS.main) }, owner: apiKey(SECRETS.keyA) }],
      variants: discoveryReadVariants,
    },
    listConnections: { kind: 'list', absent: () => [SQL_A, PG_A], owner: apiKey(SECRETS.keyA), variants: discoveryListVariants() },
    getConnection: { kind: 'resource', targets: connectionTargets, variants: discoveryReadVariants },
    // Files (docs/CONTRACT.md "Files"): a file of A answers B as a missing one does.
    prepareFile: { kind: 'creates', why: "a file is prepared in the caller's own account from the body alone; A never sees B's (checked below)" },
    uploadFile: {
      kind: 'account-free',
      why: 'the signed upload address is the authorization (a capability, like a presigned URL): no credential is read, every caller gets the same answer',
      parameters: { file_key: `file_${'0'.repeat(32)}` },
    },
    completeFile: { kind: 'resource', targets: () => [fileTarget(fileOfA)], variants: fileVariants },
    getFile: { kind: 'resource', targets: () => [fileTarget(fileOfA)], variants: [...fileVariants, { name: 'HEAD', method: 'HEAD', options: { headers: B.key } }] },
    // The owner's first call deletes its file (204): never the 404 of a missing one.
    deleteFile: { kind: 'resource', targets: () => [fileTarget(fileOfAToDelete)], variants: fileVariants },
    listFiles: {
      kind: 'list',
      absent: () => [fileOfA, fileOfAPending],
      owner: apiKey(SECRETS.keyA),
      variants: [
        { name: 'no parameters', query: () => '', options: { headers: B.key }, status: 200 },
        { name: 'limit=1, every page, key as a bearer', query: () => '?limit=1', options: { headers: B.bearerKey }, status: 200 },
        { name: 'status=ready', query: () => '?status=ready&limit=100', options: { headers: B.key }, status: 200 },
        { name: 'a forged cursor', query: () => `?cursor=${FORGED_CURSOR}`, options: { headers: B.key }, status: 400 },
        { name: 'a bad status', query: () => '?status=nope', options: { headers: B.key }, status: 400 },
        { name: 'an OAuth token without files:write', query: () => '', options: { headers: B.tokenWrite }, status: 403 },
      ],
    },
    // List probe: the run list.
    listRuns: {
      kind: 'list',
      absent: () => [runOfA, ...listedRunsOfA],
      owner: apiKey(SECRETS.keyA),
      variants: [
        { name: 'an API key', query: () => '?limit=100', options: { headers: B.key } },
        { name: 'an API key as a bearer', query: () => '', options: { headers: B.bearerKey } },
        { name: 'HEAD', method: 'HEAD', query: () => '', options: { headers: B.key } },
        { name: 'an OAuth token with runs:read', query: () => '?status=queued', options: { headers: B.tokenWrite } },
        { name: 'an OAuth token without scopes', query: () => '', options: { headers: B.tokenNoScope } },
        { name: "A's agent", query: () => `?agent_id=${AGENTS.spare}`, missing: () => `?agent_id=${agentLike(AGENTS.spare)}`, options: { headers: B.key } },
        { name: "A's agent and status", query: () => `?agent_id=${AGENTS.spare}&status=queued&limit=1`, missing: () => `?agent_id=${agentLike(AGENTS.spare)}&status=queued&limit=1`, options: { headers: B.key } },
        { name: "a cursor of A's list", query: () => `?limit=1&cursor=${cursorOfA}`, options: { headers: B.key } },
        { name: 'a bad status', query: () => '?status=nope', options: { headers: B.key } },
      ],
    },
  };
  /** The `next_cursor` of the first page (limit 1) of A's run list, taken by the list probe's test. */
  let cursorOfA = '';

  /** Where the document says an operation is served, mapped onto this server's listeners. */
  const urlOf = (operation: DocumentedOperation, parameters: Readonly<Record<string, string>>): string => {
    let path = operation.path;
    for (const name of operation.pathParameters) {
      const value = parameters[name];
      if (value === undefined) throw new Error(`${operation.operationId}: the probe gives no value for {${name}}`);
      path = path.replace(`{${name}}`, encodeURIComponent(value));
    }
    return `${operation.serverUrl}${path}`;
  };

  before(async function () {
    dir = await tempDir();
    at = await addresses();
    // Run starts name made-up file keys here (START): file keys are checked in the files tests; here it is the accounts.
    const config = e2eConfig(at, { files: { verify_keys: false, storage: { kind: 'local', directory: `${dir.path}/files` } } });
    const accounts = config['accounts'] as Record<string, unknown>[];
    accounts[1] = {
      ...accounts[1],
      oauth_tokens: [
        { id: 'tok_b_write', sha256: sha256Hex(B_TOKENS.write), scopes: ['runs:write', 'runs:read'] },
        { id: 'tok_b_noscope', sha256: sha256Hex(B_TOKENS.noScope), scopes: [] },
      ],
    };
    if (catalog === 'PostgreSQL catalog') {
      await migrateCatalog({ connection: CATALOG_TEST_URL, schema });
      await fillCatalog(schema, config['accounts'] as AccountEntry[]);
      delete config['accounts'];
      config['catalog'] = { postgres: { schema } };
    }
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl, 20_000, { SVC_CATALOG_URL: CATALOG_TEST_URL });
    const served = await call(at.url, 'GET', '/openapi.yaml');
    expect(served.status).to.equal(200);
    operations = documentedOperations(parse(served.text) as Record<string, unknown>);
    runOfA = expectData<{ run_id: string }>(await call(at.url, 'POST', `/api/v1/agents/${AGENTS.spare}/run`, { headers: apiKey(SECRETS.keyA), json: START }), 202).run_id;
    const prepare = async (): Promise<{ file_key: string; upload_url: string; upload_headers: Record<string, string> }> =>
      expectData(await call(at.url, 'POST', '/api/v1/files', { headers: apiKey(SECRETS.keyA), json: { file_name: 'iso.csv', content_type: 'text/csv', size_bytes: 4 } }), 201);
    const ready = await prepare();
    expect((await call('', 'PUT', ready.upload_url, { raw: 'a,b\n', headers: ready.upload_headers })).status).to.equal(200);
    fileOfA = expectData<{ file_key: string }>(await call(at.url, 'POST', `/api/v1/files/${ready.file_key}/complete`, { headers: apiKey(SECRETS.keyA) }), 200).file_key;
    fileOfAPending = (await prepare()).file_key;
    fileOfAToDelete = (await prepare()).file_key;
  });

  after(async function () {
    await server?.kill();
    await dir?.remove();
    if (catalog === 'PostgreSQL catalog') await dropSchema(schema);
  });

  it('every operation of the served document has a probe, and every probe an operation', function () {
    expect(operations.length, 'operations in the served document').to.be.at.least(7);
    // Both listeners are in the document: the egress operations carry their own server.
    expect(new Set(operations.map((o) => o.serverUrl))).to.deep.equal(new Set([at.url, at.egressUrl]));
    expect(probeCoverage(operations, Object.keys(PROBES))).to.deep.equal({ unprobed: [], stale: [] });
  });

  it('an operation added to the document without a probe is named (the suite would fail)', function () {
    const document = {
      servers: [{ url: at.url }],
      paths: {
        '/api/v1/runs/{run_id}': { get: { operationId: 'getRun' } },
        '/api/v1/widgets/{widget_id}': { get: { operationId: 'getWidget' }, delete: { operationId: 'deleteWidget' } },
        '/v1/widgets': { servers: [{ url: at.egressUrl }], post: { operationId: 'createWidgetViaEgress' } },
      },
    };
    const added = documentedOperations(document);
    expect(added.map((o) => [o.operationId, o.method, o.serverUrl, o.pathParameters])).to.deep.equal([
      ['getRun', 'GET', at.url, ['run_id']],
      ['getWidget', 'GET', at.url, ['widget_id']],
      ['deleteWidget', 'DELETE', at.url, ['widget_id']],
      ['createWidgetViaEgress', 'POST', at.egressUrl, []],
    ]);
    expect(probeCoverage(added, Object.keys(PROBES))).to.deep.equal({
      unprobed: ['getWidget', 'deleteWidget', 'createWidgetViaEgress'],
      stale: Object.keys(PROBES).filter((id) => id !== 'getRun'),
    });
    expect(() => documentedOperations({ paths: { '/x': { get: {} } } })).to.throw(/GET \/x has no operationId/u);
  });

  it("what B creates A never sees: a file B prepares answers A as a missing one, and is in no list of A's", async function () {
    for (const operation of operations) {
      const probe = PROBES[operation.operationId];
      if (probe?.kind !== 'creates') continue;
      expect(operation.operationId).to.equal('prepareFile');
      const ofB = expectData<{ file_key: string }>(await call(at.url, 'POST', '/api/v1/files', { headers: B.key, json: { file_name: 'b.csv', content_type: 'text/csv', size_bytes: 4 } }), 201).file_key;
      const asA = await call(at.url, 'GET', `/api/v1/files/${ofB}`, { headers: apiKey(SECRETS.keyA) });
      const missing = await call(at.url, 'GET', `/api/v1/files/file_${'0'.repeat(32)}`, { headers: apiKey(SECRETS.keyA) });
      expect(differ(comparable(asA, ofB), comparable(missing, `file_${'0'.repeat(32)}`))).to.deep.equal([]);
      expect((await call(at.url, 'GET', '/api/v1/files?limit=100', { headers: apiKey(SECRETS.keyA) })).text).to.not.include(ofB);
    }
  });

  it("account-free operations answer B as they answer A and a caller without a credential", async function () {
    for (const operation of operations) {
      const probe = PROBES[operation.operationId];
      if (probe?.kind !== 'account-free') continue;
      const url = urlOf(operation, probe.parameters ?? {});
      const answers = [await call('', operation.method, url), await call('', operation.method, url, { headers: apiKey(SECRETS.keyA) }), await call('', operation.method, url, { headers: B.key })];
      const [anonymous, ...others] = answers.map((a) => comparable(a, ''));
      // The rate-limit headers of a credential aside, every answer is the same.
      for (const other of others) {
        const { 'ratelimit-limit': _l, 'x-ratelimit-limit': _x, ...headers } = other.headers;
        expect({ ...other, headers }, operation.operationId).to.deep.equal(anonymous);
      }
    }
  });

  it("B's credential at A's resource answers exactly as at a missing one, for every variant of every operation", async function () {
    let compared = 0;
    const failures: string[] = [];
    for (const operation of operations) {
      const probe = PROBES[operation.operationId];
      if (probe?.kind !== 'resource') continue;
      for (const target of probe.targets()) {
        // The resource is there for its owner: A's answer to the first variant is not the missing one's.
        const first = probe.variants[0] as Variant;
        const owners = await call('', first.method ?? operation.method, urlOf(operation, target.foreign), { ...first.options, headers: { ...first.options.headers, ...target.owner } });
        const missingForA = await call('', first.method ?? operation.method, urlOf(operation, target.missing), { ...first.options, headers: { ...first.options.headers, ...target.owner } });
        expect(owners.status, `${operation.operationId}, ${target.name}: A sees its own resource (${owners.text})`).to.not.equal(missingForA.status);

        for (const variant of probe.variants) {
          const method = variant.method ?? operation.method;
          const foreignId = Object.values(target.foreign).join('/');
          const missingId = Object.values(target.missing).join('/');
          const foreign = await call('', method, urlOf(operation, target.foreign), variant.options);
          const missing = await call('', method, urlOf(operation, target.missing), variant.options);
          compared += 1;
          const where = `${operation.operationId} ${method} (${operation.serverUrl === at.egressUrl ? 'egress' : 'main'} listener), ${target.name}, ${variant.name}`;
          if (missing.status >= 200 && missing.status < 300) failures.push(`${where}: a missing resource answered ${missing.status}`);
          const differences = differ(comparable(foreign, foreignId), comparable(missing, missingId));
          if (differences.length > 0) failures.push(`${where}: differs in ${differences.join(', ')}\n  foreign: ${foreign.status} ${foreign.text}\n  missing: ${missing.status} ${missing.text}`);
        }
      }
    }
    if (failures.length > 0) throw new Error(`${failures.length} of ${compared} pairs tell a foreign resource from a missing one:\n${failures.join('\n')}`);
    expect(compared, 'pairs compared').to.be.at.least(60);
  });

  // List probes: B's answers to a list, on every page, never contain A's resources.
  it("B's answers to a list never contain A's resources, on any page of any variant; a filter or a cursor naming A's answers as one naming nothing", async function () {
    let sent = 0;
    const failures: string[] = [];
    for (const operation of operations) {
      const probe = PROBES[operation.operationId];
      if (probe?.kind !== 'list') continue;
      const url = urlOf(operation, {});
      if (operation.operationId === 'listRuns') {
        // A second run of A, so that A's list has a next page and a cursor to hand to B.
        listedRunsOfA.push(expectData<{ run_id: string }>(await call(at.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: apiKey(SECRETS.keyA), json: START }), 202).run_id);
      }
      // A's real cursor given to B answers exactly like a forged one: 400 invalid_cursor, same detail.
      const firstOfA = await call('', operation.method, `${url}?limit=1`, { headers: probe.owner });
      const cursor = /[?&]cursor=([^&>]+)/u.exec(firstOfA.headers.get('link') ?? '')?.[1];
      expect(cursor, `${operation.operationId}: A's first page of 1 links a next page`).to.be.a('string');
      if (operation.operationId === 'listRuns') cursorOfA = String(cursor);
      const withCursorOfA = await call('', operation.method, `${url}?cursor=${cursor}`, { headers: apiKey(SECRETS.keyB) });
      const withForged = await call('', operation.method, `${url}?cursor=${FORGED_CURSOR}`, { headers: apiKey(SECRETS.keyB) });
      expectProblem(withCursorOfA, 400, 'invalid_cursor');
      expect(comparable(withCursorOfA, ''), `${operation.operationId}: A's cursor given to B`).to.deep.equal(comparable(withForged, ''));
      const absent = probe.absent();
      expect(absent.length, `${operation.operationId}: ids to look for`).to.be.greaterThan(0);
      // The probe can fail: A's own list holds every id it looks for.
      const owners = await call('', operation.method, `${url}?limit=100`, { headers: probe.owner });
      for (const id of absent) expect(owners.text, `${operation.operationId}: A's own list shows ${id}`).to.include(`"${id}"`);
      for (const variant of probe.variants) {
        const method = variant.method ?? operation.method;
        const where = `${operation.operationId} ${method}, ${variant.name}`;
        let next: string | null = `${url}${variant.query()}`;
        for (let page = 1; next !== null; page += 1) {
          const answer = await call('', method, next, variant.options);
          sent += 1;
          if (answer.status >= 500 || (variant.status !== undefined && answer.status !== variant.status)) {
            failures.push(`${where}, page ${page}: ${answer.status}${variant.status === undefined ? '' : ` (expected ${variant.status})`} ${answer.text}`);
          }
          const seen = `${[...answer.headers.values()].join('\n')}\n${answer.text}`.toLowerCase();
          const shown = absent.filter((id) => seen.includes(id.toLowerCase()));
          if (shown.length > 0) failures.push(`${where}, page ${page}: shows ${shown.join(', ')}\n  ${answer.status} ${answer.text}`);
          if (page === 1 && variant.missing !== undefined) {
            const missing = await call('', method, `${url}${variant.missing()}`, variant.options);
            const differences = differ(comparable(answer, ''), comparable(missing, ''));
            if (differences.length > 0) {
              failures.push(`${where}: differs from a missing resource in ${differences.join(', ')}\n  foreign: ${answer.status} ${answer.text}\n  missing: ${missing.status} ${missing.text}`);
            }
          }
          const link = method === 'GET' ? answer.headers.get('link') : null;
          next = link === null ? null : (/^<([^>]+)>; rel="next"$/u.exec(link)?.[1] ?? null);
          if (page > 20) throw new Error(`${where}: more than 20 pages`);
        }
      }
    }
    if (failures.length > 0) throw new Error(`${failures.length} of ${sent} list answers tell B about A:\n${failures.join('\n')}`);
    expect(sent, 'list answers checked').to.be.at.least(25);
  });

  it("the main listener's lists are not served on the egress listener", async function () {
    for (const operation of operations.filter((o) => o.serverUrl === at.url && PROBES[o.operationId]?.kind === 'list')) {
      expectProblem(await call('', operation.method, urlOf(operation, {}).replace(at.url, at.egressUrl), { headers: apiKey(SECRETS.keyA) }), 404, 'not_found');
    }
  });

  it("the main listener's operations are not served on the egress listener, for A's ids as for missing ones", async function () {
    for (const operation of operations.filter((o) => o.serverUrl === at.url && o.pathParameters.length > 0)) {
      const probe = PROBES[operation.operationId];
      if (probe?.kind !== 'resource') continue;
      for (const target of probe.targets()) {
        const onEgress = (parameters: Readonly<Record<string, string>>): string => urlOf(operation, parameters).replace(at.url, at.egressUrl);
        const foreign = await call('', operation.method, onEgress(target.foreign), { ...(probe.variants[0] as Variant).options, headers: target.owner });
        const missing = await call('', operation.method, onEgress(target.missing), { ...(probe.variants[0] as Variant).options, headers: target.owner });
        expectProblem(foreign, 404, 'not_found');
        expect(comparable(foreign, Object.values(target.foreign).join('/'))).to.deep.equal(comparable(missing, Object.values(target.missing).join('/')));
      }
    }
  });

  if (catalog === 'PostgreSQL catalog') {
    it("an id or a digest of account A given to account B is refused by the catalog, naming the holder", async function () {
      const admin = await PostgresCatalog.open({ connection: CATALOG_TEST_URL, schema });
      try {
        const refused = async (attempt: Promise<unknown>): Promise<CatalogDuplicateError> => {
          const error = await attempt.then(() => undefined, (e: unknown) => e);
          expect(error).to.be.instanceOf(CatalogDuplicateError);
          return error as CatalogDuplicateError;
        };
        expect((await refused(admin.admin.addAgent({ accountId: 'acct_b', id: AGENTS.main }))).message).to.match(/id "agent_main" is already used by .*acct_a/u);
        expect((await refused(admin.admin.importCredential({ credentialId: 'key_a1', accountId: 'acct_b', kind: 'api_key', sha256: sha256Hex('another secret'), scopes: [] }))).message).to.match(/id "key_a1" is already used by .*acct_a/u);
        expect((await refused(admin.admin.importCredential({ credentialId: 'key_b9', accountId: 'acct_b', kind: 'api_key', sha256: sha256Hex(SECRETS.keyA), scopes: [] }))).message).to.match(/this secret .* is already used by .*acct_a/u);
        expect((await refused(admin.admin.addConnection({ accountId: 'acct_b', id: SQL_A.toUpperCase(), type: 'sqlserver' }))).message).to.match(/is already used by .*acct_a/u);
      } finally {
        await admin.close();
      }
      // A's agent is still A's.
      expectProblem(await call(at.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: B.key, json: START }), 404, 'not_found');
    });
    return;
  }

  describe('the four reproductions of issue 18', function () {
    it('1. an API key id in two accounts is refused at start, naming both places (windows could never be merged)', async function () {
      const config = e2eConfig(await addresses());
      const accounts = config['accounts'] as { api_keys: { id: string; sha256: string }[] }[];
      accounts[1]!.api_keys[0]!.id = 'key_a1';
      const exit = await runBuilt('main', ['--config', await writeConfig(dir.path, config, 'duplicate-key.yaml')]);
      expect(exit.code, exit.stderr).to.not.equal(0);
      expect(exit.stderr).to.include('accounts[1].api_keys[0].id: credential "key_a1" is already defined at accounts[0].api_keys[0]');
    });

    it("1. B exhausting its window leaves A's keys untouched (distinct ids; the duplicate-id case is adapter-http's auth-and-rate-limits test)", async function () {
      const own = await addresses();
      const rateLimits = { credential: { requests: 3, window_seconds: 60 }, agent: { requests: 30, window_seconds: 60 } };
      const instance = await startServerProcess(await writeConfig(dir.path, { ...e2eConfig(own), rate_limits: rateLimits }, 'limited.yaml'), own.url, own.egressUrl);
      try {
        for (let i = 0; i < 3; i += 1) expect((await call(own.url, 'GET', `/api/v1/runs/${randomUUID()}`, { headers: B.key })).status).to.equal(404);
        expect((await call(own.url, 'GET', `/api/v1/runs/${randomUUID()}`, { headers: B.key })).status).to.equal(429);
        const a = await call(own.url, 'GET', `/api/v1/runs/${randomUUID()}`, { headers: apiKey(SECRETS.keyA) });
        expectProblem(a, 404, 'not_found');
        expect(a.headers.get('ratelimit-remaining')).to.equal('2');
      } finally {
        await instance.kill();
      }
    });

    it('2. an agent id in two accounts is refused at start, naming both places', async function () {
      const config = e2eConfig(await addresses());
      const accounts = config['accounts'] as { agents: { id: string }[] }[];
      accounts[1]!.agents.push({ id: AGENTS.main });
      const exit = await runBuilt('main', ['--config', await writeConfig(dir.path, config, 'duplicate-agent.yaml')]);
      expect(exit.code, exit.stderr).to.not.equal(0);
      expect(exit.stderr).to.include(`accounts[1].agents[1].id: agent "${AGENTS.main}" is already defined at accounts[0].agents[0]`);
    });

    it("3. two Authorization headers (A's key and B's) answer 401 invalid_credential on both listeners", async function () {
      for (const [port, path] of [
        [at.port, `/api/v1/connections/${SQL_B}/records`],
        [at.egressPort, `/v1/connections/${SQL_B}/records`],
        [at.port, `/api/v1/agents/${AGENT_B}/run`],
      ] as const) {
        const body = path.endsWith('/run') ? JSON.stringify(START) : JSON.stringify(INSERT);
        const [a, b] = [SECRETS.keyA, SECRETS.keyB];
        for (const credentials of [
          `Authorization: Bearer ${a}\r\nAuthorization: Bearer ${b}`,
          `Authorization: Bearer ${b}\r\nAuthorization: Bearer ${a}`,
          // One line, as a proxy joins repeated lines (RFC 9110 §5.3).
          `Authorization: Bearer ${b}, Bearer ${a}`,
          `X-API-Key: ${b}\r\nX-API-Key: ${a}`,
          `X-API-Key: ${b}, ${a}`,
          `X-API-Key: ${b}\r\nAuthorization: Bearer ${a}`,
        ]) {
          const request =
            `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${credentials}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
          const exchange = await rawExchange(port, request, { timeoutMs: 5000, expectAnswers: 1 });
          const answer = exchange.answers[0];
          expect(answer?.status, `${path} ${credentials.replaceAll(a, 'A').replaceAll(b, 'B')}: ${answer?.body.toString('utf8')}`).to.equal(401);
          expect(JSON.parse(answer!.body.toString('utf8'))).to.include({ code: 'invalid_credential' });
          expect(answer!.headers.get('www-authenticate')?.[0]).to.match(/^Bearer /u);
        }
      }
    });

    it("4. B's write through B's connection never reaches the row A wrote through A's (one table set per connection)", async function () {
      const sku = `ISO-A-${randomUUID().slice(0, 8)}`;
      expectData(await call(at.url, 'POST', `/api/v1/connections/${SQL_A}/records`, { headers: apiKey(SECRETS.keyA), json: { entity: 'dbo.orders', values: { sku, qty: 5 } } }), 201);
      const byB = { entity: 'dbo.orders', key_column: 'sku', key_value: sku, values: { status: 'taken-by-b' } };
      expect(expectData(await call(at.url, 'PATCH', `/api/v1/connections/${SQL_B}/records`, { headers: B.key, json: byB }), 200)).to.deep.equal({ rows_affected: 0 });
      expect(expectData(await call(at.egressUrl, 'PATCH', `/v1/connections/${SQL_B}/records`, { headers: B.key, json: byB }), 200)).to.deep.equal({ rows_affected: 0 });
      // A's row is still A's, unchanged by B: A's update selecting it by its old status finds it.
      const byA = { entity: 'dbo.orders', key_column: 'sku', key_value: sku, values: { note: 'still here' } };
      expect(expectData(await call(at.url, 'PATCH', `/api/v1/connections/${SQL_A}/records`, { headers: apiKey(SECRETS.keyA), json: byA }), 200)).to.deep.equal({ rows_affected: 1 });
    });
  });
});
