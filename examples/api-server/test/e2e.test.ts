import { expect } from 'chai';
import { parse } from 'yaml';
import { addresses, AGENT_B, AGENTS, e2eConfig, INDEX, PG_A, SECRETS, SQL_A, SQL_B, type Addresses } from './support/fixture.js';
import { apiKey, bearer, call, expectData, expectProblem, expectRateLimited, expectRateLimitHeaders, type Answer, type Problem } from '../../../tools/test-support/http.js';
import { startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

const key = apiKey(SECRETS.keyA);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const records = (id: string = SQL_A): string => `/api/v1/connections/${id}/records`;
const egressRecords = (id: string = SQL_A): string => `/v1/connections/${id}/records`;
const run = (agent: string = AGENTS.main): string => `/api/v1/agents/${agent}/run`;
const file = (i = 0): Record<string, string> => ({ file_key: `uploads/${i}.pdf`, file_name: `${i}.pdf`, content_type: 'application/pdf' });
const files = (n: number): Record<string, string>[] => Array.from({ length: n }, (_, i) => file(i));

interface RunStart {
  readonly run_id: string;
  readonly workflow_run_id: string;
  readonly status: string;
  readonly status_url: string;
  readonly message: string;
}

/** The body without its request id: what must be identical between two 404s. */
function withoutRequestId(answer: Answer): Record<string, unknown> {
  const { request_id: _ignored, ...rest } = answer.body as Record<string, unknown>;
  return rest;
}

/** getRun is marked deprecated in the configuration file (docs/CONTRACT.md "Index and versioning"). */
const GET_RUN_DEPRECATION = { deprecated_at: '2026-12-01T00:00:00Z', sunset_at: '2027-06-30T00:00:00Z', link: 'https://e2e.example/changelog#get-run' };

describe('examples/api-server end to end (child process)', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let at: Addresses;
  let server: ServerProcess;
  let base: string;
  let egress: string;

  before(async function () {
    dir = await tempDir();
    at = await addresses();
    server = await startServerProcess(await writeConfig(dir.path, e2eConfig(at, { deprecations: { getRun: GET_RUN_DEPRECATION } })), at.url, at.egressUrl);
    base = server.url;
    egress = server.egressUrl;
  });

  after(async function () {
    await server?.kill();
    await dir?.remove();
  });

  describe('discovery', function () {
    it('GET /api/v1 needs no credential and returns every field of the index, unwrapped, from configuration', async function () {
      const answer = await call(base, 'GET', '/api/v1');
      expect(answer.status).to.equal(200);
      expect(answer.headers.get('content-type')).to.match(/^application\/json/);
      const index = answer.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      expect(index).to.not.have.property('data');
      expect(index).to.include.all.keys(
        'name', 'version', 'base_url', 'documentation_url', 'openapi_url', 'developers_url', 'authentication', 'onboarding',
        'rate_limits', 'versioning', 'resources', 'description', 'llms_txt_url', 'clients', 'webhooks_documentation_url',
      );
      expect(index['name']).to.equal(INDEX.name);
      expect(index['version']).to.equal('v1');
      expect(index['base_url']).to.equal(at.url);
      expect(index['documentation_url']).to.equal(INDEX.documentation_url);
      expect(index['openapi_url']).to.equal(`${at.url}/openapi.yaml`);
      for (const f of ['developers_url', 'llms_txt_url', 'webhooks_documentation_url', 'description']) expect(index[f], f).to.be.a('string').and.not.equal('');

      const methods = index['authentication']['methods'] as Record<string, unknown>[];
      expect(methods).to.be.an('array').with.length.above(0);
      const m = methods[0] as Record<string, unknown>;
      expect(m).to.include({ type: 'api_key', credential_creation: 'available_after_account_access', account_access: 'invite_required' });
      expect(m['self_serve']).to.be.a('boolean');
      expect(m['headers']).to.include.members(['X-API-Key', 'Authorization']);
      expect(m['scopes_supported']).to.include('runs:write');
      for (const f of ['documentation_url', 'flow', 'metadata_url']) expect(m[f], f).to.be.a('string').and.not.equal('');

      expect(index['onboarding']).to.deep.include({ account_access: 'invite_required', access_request_url: INDEX.access_request_url, public_sandbox_available: false });
      expect(index['onboarding']['trial']).to.deep.equal({ available: true, duration_days: 14, invite_required: true });

      const limits = index['rate_limits'];
      expect(limits).to.include({ requests: 600, window_seconds: 60, scope: 'credential' });
      expect(limits['response_headers']).to.have.members(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
      expect(limits['documentation_url']).to.be.a('string');

      const versioning = index['versioning'];
      expect(versioning).to.include({ strategy: 'url_path', current_version: 'v1', minimum_sunset_notice_days: 180 });
      expect(versioning['deprecation_headers']).to.include.members(['Deprecation', 'Sunset']);
      expect(versioning['documentation_url']).to.be.a('string');

      const resources = index['resources'] as Record<string, string>;
      expect(resources['agent_runs']).to.equal(`${at.url}/api/v1/agents/{agent_id}/run`);
      expect(resources['connection_records']).to.equal(`${at.url}/api/v1/connections/{connection_id}/records`);
      expect(resources['egress_connection_records']).to.equal(`${at.egressUrl}/v1/connections/{connection_id}/records`);
      expect(resources['agents']).to.equal(`${at.url}/api/v1/agents`);
      expect(resources['connections']).to.equal(`${at.url}/api/v1/connections`);
      for (const [name, url] of Object.entries(resources)) expect(url, name).to.match(/^http:\/\/127\.0\.0\.1:\d+\//);
      expect(index['clients']).to.have.all.keys('cli', 'cli_documentation_url');

      for (const secret of Object.values(SECRETS)) expect(answer.text).to.not.include(secret);
      expect(answer.text).to.not.match(/svc-[A-Za-z0-9_-]{8,}|svcpt_[A-Za-z0-9_-]{8,}|[0-9a-f]{64}/);
    });

    it('the index is cacheable: ETag, Cache-Control, and If-None-Match answers 304', async function () {
      const first = await call(base, 'GET', '/api/v1');
      const etag = first.headers.get('etag');
      expect(etag).to.be.a('string');
      expect(first.headers.get('cache-control')).to.match(/max-age=\d+/);
      const again = await call(base, 'GET', '/api/v1', { headers: { 'if-none-match': etag ?? '' } });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal('');
      expect(again.headers.get('etag')).to.equal(etag);
    });

    it('serves the same OpenAPI 3.1 document at both URLs, with servers[0].url the base URL', async function () {
      const a = await fetch(`${base}/openapi.yaml`);
      const b = await fetch(`${base}/docs/api-reference/openapi.yaml`);
      expect([a.status, b.status]).to.deep.equal([200, 200]);
      const [bytesA, bytesB] = [Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())];
      expect(bytesA.equals(bytesB)).to.equal(true);
      const doc = parse(bytesA.toString('utf8')) as { openapi: string; servers: { url: string }[]; paths: Record<string, { servers?: { url: string }[] }> };
      expect(doc.openapi).to.match(/^3\.1\./);
      expect(doc.servers[0]?.url).to.equal(at.url);
      expect(doc.paths['/v1/connections/{connection_id}/records']?.servers?.[0]?.url).to.equal(at.egressUrl);
    });
  });

  describe('authentication', function () {
    const insert = (values: Record<string, unknown> = { sku: 'AUTH', qty: 1 }) => ({ entity: 'dbo.orders', values });

    it('missing → 401 missing_credential with WWW-Authenticate, no rate-limit headers', async function () {
      const answer = await call(base, 'POST', records(), { json: insert() });
      expectProblem(answer, 401, 'missing_credential');
      expect(answer.headers.get('www-authenticate')).to.equal('Bearer realm="svc"');
      expectRateLimitHeaders(answer, false);
    });

    it('invalid → 401 invalid_credential with error="invalid_token"', async function () {
      for (const headers of [apiKey('svc-not-a-real-key-000000'), bearer('svc-not-a-real-key-000000'), bearer('svcpt_not-a-real-token-0000')]) {
        const answer = await call(base, 'POST', run(), { headers, json: { message: 'x' } });
        expectProblem(answer, 401, 'invalid_credential');
        expect(answer.headers.get('www-authenticate')).to.equal('Bearer realm="svc", error="invalid_token"');
      }
    });

    it('an API key works as a bearer token and in X-API-Key, on writes and run starts', async function () {
      expectData(await call(base, 'POST', records(), { headers: bearer(SECRETS.keyA), json: insert() }), 201);
      expectData(await call(base, 'POST', records(), { headers: apiKey(SECRETS.keyA), json: insert() }), 201);
      expectData(await call(base, 'POST', run(), { headers: bearer(SECRETS.keyA), json: { message: 'x' } }), 202);
      expectData(await call(base, 'POST', run(), { headers: apiKey(SECRETS.keyA), json: { message: 'x' } }), 202);
    });

    it('OAuth with runs:write on run start → 202; without it → 403 insufficient_scope', async function () {
      expectData<RunStart>(await call(base, 'POST', run(), { headers: bearer(SECRETS.tokenWrite), json: { message: 'x' } }), 202);
      const refused = await call(base, 'POST', run(), { headers: bearer(SECRETS.tokenNoScope), json: { message: 'x' } });
      expectProblem(refused, 403, 'insufficient_scope');
      expect(refused.headers.get('www-authenticate')).to.equal('Bearer realm="svc", error="insufficient_scope", scope="runs:write"');
    });

    it('expired → 401 expired_credential; OAuth on a write → 401 unsupported_credential', async function () {
      expectProblem(await call(base, 'POST', run(), { headers: bearer(SECRETS.tokenExpired), json: { message: 'x' } }), 401, 'expired_credential');
      for (const method of ['POST', 'PATCH']) {
        const answer = await call(base, method, records(), { headers: bearer(SECRETS.tokenWrite), json: { entity: 'dbo.orders', key_column: 'id', key_value: 1, values: { qty: 1 } } });
        expectProblem(answer, 401, 'unsupported_credential');
        expect(answer.headers.get('www-authenticate')).to.include('error="invalid_token"');
      }
    });

    it('two different credentials → 401 invalid_credential', async function () {
      for (const headers of [{ ...apiKey(SECRETS.keyA), ...bearer(SECRETS.keyA2) }, { ...apiKey(SECRETS.keyA), ...bearer(SECRETS.tokenWrite) }]) {
        expectProblem(await call(base, 'POST', run(), { headers, json: { message: 'x' } }), 401, 'invalid_credential');
      }
    });
  });

  describe('row writes', function () {
    it('insert on the demo table → 201 {data: {rows_affected: 1}} with rate-limit headers', async function () {
      const answer = await call(base, 'POST', records(), { headers: key, json: { entity: 'dbo.orders', values: { id: 500, sku: 'E2E-1', qty: 2, note: null, status: 'new' } } });
      expect(expectData(answer, 201)).to.deep.equal({ rows_affected: 1 });
      expectRateLimitHeaders(answer, true);
    });

    it('PATCH → 200 with rows_affected 1 for a matching key and 0 for none; 409 when the key selects several rows', async function () {
      expect(expectData(await call(base, 'PATCH', records(), { headers: key, json: { entity: 'dbo.orders', key_column: 'id', key_value: 1, values: { status: 'paid' } } }), 200)).to.deep.equal({ rows_affected: 1 });
      expect(expectData(await call(base, 'PATCH', records(), { headers: key, json: { entity: 'dbo.orders', key_column: 'id', key_value: 987654, values: { status: 'x' } } }), 200)).to.deep.equal({ rows_affected: 0 });
      for (let i = 0; i < 2; i += 1) {
        expectData(await call(base, 'POST', records(), { headers: key, json: { entity: 'dbo.orders', values: { sku: 'DUP-e2e', qty: i } } }), 201);
      }
      expectProblem(await call(base, 'PATCH', records(), { headers: key, json: { entity: 'dbo.orders', key_column: 'sku', key_value: 'DUP-e2e', values: { qty: 9 } } }), 409, 'ambiguous_key');
    });

    it('a write on the postgresql connection → 400 writes_not_supported', async function () {
      expectProblem(await call(base, 'POST', records(PG_A), { headers: key, json: { entity: 'public.orders', values: { a: 1 } } }), 400, 'writes_not_supported');
      expectProblem(await call(base, 'PATCH', records(PG_A), { headers: key, json: { entity: 'public.orders', key_column: 'id', key_value: 1, values: { a: 1 } } }), 400, 'writes_not_supported');
    });

    it('validation, unknown table and unknown column → 400 problems that name the field', async function () {
      const v = expectProblem(await call(base, 'POST', records(), { headers: key, json: { entity: 'orders', values: {} } }), 400, 'validation_failed');
      expect(v.errors?.map((e) => e.path)).to.include.members(['/entity', '/values']);
      expect(v.detail).to.match(/\/entity|\/values/);
      expectProblem(await call(base, 'POST', records(), { headers: key, json: { entity: 'dbo.nope', values: { a: 1 } } }), 400, 'unknown_entity');
      const col = expectProblem(await call(base, 'POST', records(), { headers: key, json: { entity: 'dbo.orders', values: { colour: 'red' } } }), 400, 'unknown_column');
      expect(col.detail).to.include('colour');
      const extra = expectProblem(await call(base, 'POST', records(), { headers: key, json: { entity: 'dbo.orders', values: { qty: 1 }, upsert: true } }), 400, 'validation_failed');
      expect(extra.detail).to.include('/upsert');
    });

    it('X-Svc-Egress: true and false are accepted; maybe → 400 invalid_header', async function () {
      expectData(await call(base, 'POST', records(), { headers: { ...key, 'x-svc-egress': 'true' }, json: { entity: 'dbo.orders', values: { sku: 'EG' } } }), 201);
      expectData(await call(base, 'POST', records(), { headers: { ...key, 'x-svc-egress': 'False' }, json: { entity: 'dbo.orders', values: { sku: 'EG' } } }), 201);
      const answer = await call(base, 'POST', records(), { headers: { ...key, 'x-svc-egress': 'maybe' }, json: { entity: 'dbo.orders', values: { sku: 'EG' } } });
      expectProblem(answer, 400, 'invalid_header');
      expectRateLimitHeaders(answer, true);
    });

    it('413 over 1 MiB, 415 for text/plain, 400 invalid_json, 405 with Allow', async function () {
      const big = JSON.stringify({ entity: 'dbo.orders', values: { note: 'x'.repeat(1024 * 1024) } });
      expectProblem(await call(base, 'POST', records(), { headers: { ...key, 'content-type': 'application/json' }, raw: big }), 413, 'payload_too_large');
      expectProblem(await call(base, 'POST', records(), { headers: { ...key, 'content-type': 'text/plain' }, raw: '{"entity":"dbo.orders","values":{"a":1}}' }), 415, 'unsupported_media_type');
      expectProblem(await call(base, 'POST', run(), { headers: { ...key, 'content-type': 'application/json' }, raw: '{"message": ' }), 400, 'invalid_json');
      const notAllowed = await call(base, 'DELETE', records(), { headers: key });
      expectProblem(notAllowed, 405, 'method_not_allowed');
      expect(notAllowed.headers.get('allow')).to.equal('POST, PATCH, OPTIONS');
      const options = await call(base, 'OPTIONS', run());
      expect(options.status).to.equal(204);
      expect(options.headers.get('allow')).to.equal('POST, OPTIONS');
    });
  });

  describe('not found looks the same for unknown and foreign resources', function () {
    it('connections: unknown and another account\'s → 404 with identical bodies apart from request ids', async function () {
      const unknown = '00000000-0000-4000-8000-00000000dead';
      const a = await call(base, 'POST', records(unknown), { headers: key, json: { entity: 'dbo.orders', values: { qty: 1 } } });
      const b = await call(base, 'POST', records(SQL_B), { headers: key, json: { entity: 'dbo.orders', values: { qty: 1 } } });
      expectProblem(a, 404, 'not_found');
      expectProblem(b, 404, 'not_found');
      // The detail may echo the id the caller sent; beyond that, nothing differs.
      const norm = (x: Answer, id: string) => JSON.parse(JSON.stringify(withoutRequestId(x)).split(id).join('<id>'));
      expect(norm(a, unknown)).to.deep.equal(norm(b, SQL_B));
      expect((a.body as Problem).request_id).to.not.equal((b.body as Problem).request_id);
      // Account B writes to it fine.
      expectData(await call(base, 'POST', records(SQL_B), { headers: apiKey(SECRETS.keyB), json: { entity: 'dbo.orders', values: { qty: 1 } } }), 201);
    });

    it('agents: unknown and another account\'s → identical 404 bodies apart from request ids', async function () {
      const a = await call(base, 'POST', run('agent_nobody'), { headers: key, json: { message: 'x' } });
      const b = await call(base, 'POST', run(AGENT_B), { headers: key, json: { message: 'x' } });
      expectProblem(a, 404, 'not_found');
      expectProblem(b, 404, 'not_found');
      expect(withoutRequestId(a)).to.deep.equal(withoutRequestId(b));
      expect(a.headers.get('x-request-id')).to.not.equal(b.headers.get('x-request-id'));
    });

    it('runs: unknown and another account\'s → identical 404 bodies apart from request ids', async function () {
      const theirs = expectData<RunStart>(await call(base, 'POST', run(AGENT_B), { headers: apiKey(SECRETS.keyB), json: { message: 'theirs' } }), 202);
      const a = await call(base, 'GET', '/api/v1/runs/00000000-0000-4000-8000-000000000000', { headers: key });
      const b = await call(base, 'GET', theirs.status_url, { headers: key });
      expectProblem(a, 404, 'not_found');
      expectProblem(b, 404, 'not_found');
      expect(withoutRequestId(a)).to.deep.equal(withoutRequestId(b));
      expectData(await call(base, 'GET', theirs.status_url, { headers: apiKey(SECRETS.keyB) }), 200);
    });
  });

  describe('runs', function () {
    it('answers the operation deprecated in the config file with Deprecation, Sunset and Link, and no other', async function () {
      const started = await call(base, 'POST', run(), { headers: key, json: { message: 'deprecation check' } });
      expect(started.status).to.equal(202);
      expect(started.headers.get('deprecation')).to.equal(null);
      const read = await call(base, 'GET', new URL(started.headers.get('location') ?? '').pathname, { headers: key });
      expect(read.status).to.equal(200);
      expect(read.headers.get('deprecation')).to.equal(`@${Date.parse(GET_RUN_DEPRECATION.deprecated_at) / 1000}`);
      expect(read.headers.get('sunset')).to.equal(new Date(GET_RUN_DEPRECATION.sunset_at).toUTCString());
      expect(read.headers.get('link')).to.equal(`<${GET_RUN_DEPRECATION.link}>; rel="deprecation"; type="text/html"`);
    });

    const start = (body: unknown): Promise<Answer> => call(base, 'POST', run(AGENTS.bounds), { headers: key, json: body });

    it('202 with Location equal to data.status_url, and GET there answers the run', async function () {
      const answer = await call(base, 'POST', run(), { headers: key, json: { files: [file()], message: 'Summarise', process_together: true, notification_email: 'ops@example.com' } });
      const data = expectData<RunStart>(answer, 202);
      expect(data.status).to.equal('queued');
      expect(data.run_id).to.match(UUID);
      expect(data.workflow_run_id).to.be.a('string').and.not.equal('');
      expect(data.message).to.be.a('string').and.not.equal('');
      expect(data.status_url).to.equal(`${at.url}/api/v1/runs/${data.run_id}`);
      expect(answer.headers.get('location')).to.equal(data.status_url);
      for (const headers of [key, bearer(SECRETS.tokenWrite)]) {
        const view = expectData<Record<string, unknown>>(await call(base, 'GET', data.status_url, { headers }), 200);
        expect(view).to.include({ run_id: data.run_id, workflow_run_id: data.workflow_run_id, agent_id: AGENTS.main, status_url: data.status_url });
        expect(['queued', 'running', 'succeeded', 'failed', 'cancelled']).to.include(view['status']);
        expect(view['created_at']).to.be.a('string');
        expect(view['updated_at']).to.be.a('string');
      }
    });

    it('accepts both body shapes: files (Option 1) and message only (Option 2)', async function () {
      expect(expectData<RunStart>(await start({ files: [file()] }), 202).status).to.equal('queued');
      expect(expectData<RunStart>(await start({ message: 'Only a message' }), 202).status).to.equal('queued');
    });

    it('files: 1 and 50 → 202; 0 and 51 → 400 naming /files', async function () {
      expectData(await start({ files: files(1) }), 202);
      expectData(await start({ files: files(50) }), 202);
      for (const n of [0, 51]) {
        const p = expectProblem(await start({ files: files(n) }), 400, 'validation_failed');
        expect(p.detail, `${n} files`).to.include('/files');
        expect(p.errors?.map((e) => e.path)).to.include('/files');
      }
    });

    it('background files: 10 → 202; 11 → 400 naming /background_files', async function () {
      expectData(await start({ files: files(1), background_files: files(10) }), 202);
      const p = expectProblem(await start({ files: files(1), background_files: files(11) }), 400, 'validation_failed');
      expect(p.detail).to.include('/background_files');
    });

    it('invalid shapes → 400 naming the field: empty message, Option 1 member without files, bad file reference, bad e-mail', async function () {
      const cases: [unknown, string][] = [
        [{ message: '' }, '/message'],
        [{ message: 'x', notification_email: 'ops@example.com' }, '/files'],
        [{ files: [{ file_key: 'k', file_name: 'n', content_type: 'pdf' }] }, '/files/0/content_type'],
        [{ files: [file()], notification_email: 'not-an-address' }, '/notification_email'],
        [{ files: [file()], colour: 'red' }, '/colour'],
        [{}, ''],
      ];
      for (const [body, path] of cases) {
        const p = expectProblem(await start(body), 400, 'validation_failed');
        expect(p.errors?.map((e) => e.path), JSON.stringify(body)).to.include(path);
        if (path !== '') expect(p.detail, JSON.stringify(body)).to.include(path);
      }
    });

    it('31 run starts for one agent within 60 s: the 31st is 429 with all seven headers; another agent still gets 202', async function () {
      const started = Date.now();
      for (let i = 1; i <= 30; i += 1) {
        const answer = await call(base, 'POST', run(AGENTS.limit), { headers: apiKey(SECRETS.keyA2), json: { message: `run ${i}` } });
        expect(answer.status, `start ${i}: ${answer.text}`).to.equal(202);
        expect(answer.headers.get('ratelimit-limit')).to.equal('30');
        expect(answer.headers.get('ratelimit-remaining')).to.equal(String(30 - i));
      }
      const refused = await call(base, 'POST', run(AGENTS.limit), { headers: apiKey(SECRETS.keyA2), json: { message: 'run 31' } });
      expect(Date.now() - started).to.be.below(60_000);
      expectRateLimited(refused, 30, 60);
      expect((refused.body as Problem).detail).to.include('agent');
      // The limit is per agent, whatever the credential.
      expectRateLimited(await call(base, 'POST', run(AGENTS.limit), { headers: bearer(SECRETS.tokenWrite), json: { message: 'run 32' } }), 30, 60);
      expectData(await call(base, 'POST', run(AGENTS.spare), { headers: apiKey(SECRETS.keyA2), json: { message: 'other agent' } }), 202);
    });
  });

  describe('the egress address', function () {
    it('answers POST and PATCH records (201 / 200) with the same credentials', async function () {
      expect(expectData(await call(egress, 'POST', egressRecords(), { headers: key, json: { entity: 'dbo.orders', values: { id: 777, sku: 'EGRESS' } } }), 201)).to.deep.equal({ rows_affected: 1 });
      expect(expectData(await call(egress, 'PATCH', egressRecords(), { headers: bearer(SECRETS.keyA), json: { entity: 'dbo.orders', key_column: 'id', key_value: 777, values: { qty: 5 } } }), 200)).to.deep.equal({ rows_affected: 1 });
      expectProblem(await call(egress, 'POST', egressRecords(PG_A), { headers: key, json: { entity: 'dbo.orders', values: { a: 1 } } }), 400, 'writes_not_supported');
      expectProblem(await call(egress, 'POST', egressRecords(SQL_B), { headers: key, json: { entity: 'dbo.orders', values: { a: 1 } } }), 404, 'not_found');
      expectProblem(await call(egress, 'POST', egressRecords(), { json: { entity: 'dbo.orders', values: { a: 1 } } }), 401, 'missing_credential');
    });

    it('answers 404 to everything else: GET /api/v1, GET records, /openapi.yaml, run start', async function () {
      for (const [method, path] of [
        ['GET', '/api/v1'],
        ['GET', egressRecords()],
        ['GET', '/openapi.yaml'],
        ['GET', '/docs/api-reference/openapi.yaml'],
        ['POST', records()],
        ['POST', `/api/v1/agents/${AGENTS.main}/run`],
      ] as const) {
        expectProblem(await call(egress, method, path, { headers: key, ...(method === 'POST' ? { json: { message: 'x' } } : {}) }), 404, 'not_found');
      }
    });
  });

  describe('logs', function () {
    it('the JSON log lines carry request ids and no secret ever sent', function () {
      const lines = server.stdout().split('\n').filter((l) => l.trim() !== '');
      expect(lines.length).to.be.above(20);
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const requests = parsed.filter((l) => l['msg'] === 'request');
      expect(requests.length).to.be.above(20);
      for (const r of requests) expect(r['request_id'], JSON.stringify(r)).to.be.a('string');
      const all = server.stdout() + server.stderr();
      for (const secret of Object.values(SECRETS)) expect(all, 'a secret in the output').to.not.include(secret);
    });
  });
});
