import { expect } from 'chai';
import { expectData, expectProblem, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import {
  anInsert,
  anUpdate,
  apiKey,
  bearer,
  call,
  egressRecordsPath,
  PG_CONNECTION_ID,
  recordsPath,
  SECRETS,
  startApps,
  type RunningApps,
} from './support/harness.js';

const key = apiKey(SECRETS.keyA);

describe('adapter-http: the egress route', function () {
  let apps: RunningApps;
  beforeEach(async function () {
    apps = await startApps();
  });
  afterEach(async function () {
    await apps.close();
  });

  const routes = (): string[] => apps.world.writer.received.map((c) => c.route);

  it('the egress address answers POST and PATCH records like the main one, always on the egress route', async function () {
    expect(expectData(await call(apps.egressUrl, 'POST', egressRecordsPath(), { headers: key, json: anInsert() }), 201)).to.deep.equal({ rows_affected: 1 });
    expect(expectData(await call(apps.egressUrl, 'PATCH', egressRecordsPath(), { headers: bearer(SECRETS.keyA), json: anUpdate() }), 200)).to.deep.equal({
      rows_affected: 1,
    });
    // The header means nothing there: the address is the route.
    expectData(await call(apps.egressUrl, 'POST', egressRecordsPath(), { headers: { ...key, 'x-svc-egress': 'false' }, json: anInsert({ values: { id: 9 } }) }), 201);
    expect(routes()).to.deep.equal(['egress', 'egress', 'egress']);
    expect(apps.world.writer.rowsOf('dbo.orders')?.find((r) => r['id'] === 1)?.['status']).to.equal('paid');
  });

  it('the egress address refuses what the main one refuses: 401, 400 writes_not_supported, 415, 400 invalid_json', async function () {
    const missing = await call(apps.egressUrl, 'POST', egressRecordsPath(), { json: anInsert() });
    expectProblem(missing, 401, 'missing_credential');
    expect(missing.headers.get('www-authenticate')).to.equal('Bearer realm="svc"');
    expectProblem(await call(apps.egressUrl, 'PATCH', egressRecordsPath(), { headers: bearer(SECRETS.tokenWrite), json: anUpdate() }), 401, 'unsupported_credential');
    const pg = await call(apps.egressUrl, 'POST', egressRecordsPath(PG_CONNECTION_ID), { headers: key, json: anInsert() });
    expectProblem(pg, 400, 'writes_not_supported');
    expectRateLimitHeaders(pg, true);
    expectProblem(await call(apps.egressUrl, 'POST', egressRecordsPath(), { headers: { ...key, 'content-type': 'text/plain' }, raw: '{}' }), 415, 'unsupported_media_type');
    expectProblem(await call(apps.egressUrl, 'POST', egressRecordsPath(), { headers: { ...key, 'content-type': 'application/json' }, raw: '{"a"' }), 400, 'invalid_json');
    expect(routes()).to.deep.equal([]);
  });

  it('the egress address answers 404 problem details to everything else', async function () {
    const cases: [string, string][] = [
      ['GET', '/api/v1'],
      ['GET', egressRecordsPath()],
      ['DELETE', egressRecordsPath()],
      ['PUT', egressRecordsPath()],
      ['GET', '/openapi.yaml'],
      ['GET', '/docs/api-reference/openapi.yaml'],
      ['GET', '/livez'],
      ['POST', recordsPath()],
      ['POST', '/api/v1/agents/agent_demo/run'],
      ['GET', '/'],
    ];
    for (const [method, path] of cases) {
      const answer = await call(apps.egressUrl, method, path, { headers: key, ...(method === 'POST' ? { json: anInsert() } : {}) });
      expectProblem(answer, 404, 'not_found');
    }
    expect(routes()).to.deep.equal([]);
  });

  it('on the main address X-Svc-Egress true (any case) takes the egress route, false or absent the default one', async function () {
    for (const value of ['true', 'TRUE', 'True', ' true ', 'false', 'FALSE', undefined]) {
      const headers = { ...key, ...(value !== undefined ? { 'x-svc-egress': value } : {}) };
      expectData(await call(apps.url, 'POST', recordsPath(), { headers, json: anInsert() }), 201);
    }
    expect(routes()).to.deep.equal(['egress', 'egress', 'egress', 'egress', 'default', 'default', 'default']);
  });

  it('on the main address any other X-Svc-Egress is 400 invalid_header naming the header, before any write', async function () {
    for (const value of ['maybe', '1', 'yes', 'true,false', '']) {
      const answer = await call(apps.url, 'PATCH', recordsPath(), { headers: { ...key, 'x-svc-egress': value }, json: anUpdate() });
      const problem = expectProblem(answer, 400, 'invalid_header');
      expect(problem.detail, value).to.include('X-Svc-Egress');
      expectRateLimitHeaders(answer, true);
    }
    expect(routes()).to.deep.equal([]);
  });
});
