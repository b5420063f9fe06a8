import { validate, compileErrors } from '@readme/openapi-parser';
import { expect } from 'chai';
import { parse } from 'yaml';
import { BASE_URL, call, EGRESS_URL, startApps, type RunningApps } from './support/harness.js';

type Obj = Record<string, unknown>;

describe('adapter-http: the served OpenAPI document', function () {
  let apps: RunningApps;
  before(async function () {
    apps = await startApps();
  });
  after(async function () {
    await apps.close();
  });

  it('is served at /openapi.yaml and /docs/api-reference/openapi.yaml with the same bytes', async function () {
    const a = await fetch(`${apps.url}/openapi.yaml`);
    const b = await fetch(`${apps.url}/docs/api-reference/openapi.yaml`);
    expect(a.status).to.equal(200);
    expect(b.status).to.equal(200);
    expect(a.headers.get('content-type')).to.match(/^application\/yaml/);
    const bytesA = Buffer.from(await a.arrayBuffer());
    const bytesB = Buffer.from(await b.arrayBuffer());
    expect(bytesA.length).to.be.greaterThan(1000);
    expect(bytesA.equals(bytesB)).to.equal(true);
    expect(a.headers.get('etag')).to.be.a('string').and.equal(b.headers.get('etag'));
  });

  it('is cacheable: If-None-Match with its ETag answers 304 without a body', async function () {
    const first = await call(apps.url, 'GET', '/openapi.yaml');
    const etag = first.headers.get('etag') ?? '';
    expect(first.headers.get('cache-control')).to.match(/max-age=\d+/);
    const again = await call(apps.url, 'GET', '/openapi.yaml', { headers: { 'if-none-match': etag } });
    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
  });

  it('validates as OpenAPI 3.1 with @readme/openapi-parser', async function () {
    const text = (await call(apps.url, 'GET', '/openapi.yaml')).text;
    const doc = parse(text) as Obj;
    expect(doc['openapi']).to.match(/^3\.1\./);
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).to.equal(true);
  });

  it('names the configured base URL as servers[0].url and the egress URL on the egress path', async function () {
    const doc = parse((await call(apps.url, 'GET', '/openapi.yaml')).text) as Obj;
    const servers = doc['servers'] as { url: string }[];
    expect(servers[0]?.url).to.equal(BASE_URL);
    const egress = (doc['paths'] as Obj)['/v1/connections/{connection_id}/records'] as Obj;
    expect((egress['servers'] as { url: string }[])[0]?.url).to.equal(EGRESS_URL);
  });

  it('documents every operation the app serves, with unique operation ids and no deprecated flag by default', async function () {
    const doc = parse((await call(apps.url, 'GET', '/openapi.yaml')).text) as Obj;
    const paths = doc['paths'] as Record<string, Obj>;
    expect(Object.keys(paths)).to.have.members([
      '/api/v1',
      '/api/v1/connections/{connection_id}/records',
      '/api/v1/agents/{agent_id}/run',
      '/api/v1/runs/{run_id}',
      '/api/v1/runs/{run_id}/cancel',
      '/api/v1/runs/{run_id}/events',
      '/api/v1/runs',
      '/api/v1/agents/{agent_id}/mcp',
      '/.well-known/oauth-protected-resource/api/v1/agents/{agent_id}/mcp',
      '/v1/connections/{connection_id}/records',
      // Discovery
      '/api/v1/agents',
      '/api/v1/agents/{agent_id}',
      '/api/v1/connections',
      '/api/v1/connections/{connection_id}',
      // Files
      '/api/v1/files',
      '/api/v1/files/{file_key}/upload',
      '/api/v1/files/{file_key}/complete',
      '/api/v1/files/{file_key}',
    ]);
    const ids: string[] = [];
    for (const item of Object.values(paths)) {
      for (const method of ['get', 'post', 'patch', 'put', 'delete']) {
        const op = item[method] as Obj | undefined;
        if (op === undefined) continue;
        ids.push(String(op['operationId']));
        expect(op, String(op['operationId'])).to.not.have.property('deprecated');
      }
    }
    expect(ids).to.have.members([
      'describeApi',
      'insertRecord',
      'updateRecord',
      'startRun',
      'getRun',
      'cancelRun',
      'streamRunEvents',
      'listRuns',
      'callMcp',
      'mcpProtectedResourceMetadata',
      'insertRecordViaEgress',
      'updateRecordViaEgress',
      // Discovery
      'listAgents',
      'getAgent',
      'listConnections',
      'getConnection',
      'listFiles',
      'prepareFile',
      'uploadFile',
      'completeFile',
      'getFile',
      'deleteFile',
    ]);
  });
});
