import { expect } from 'chai';
import { parse } from 'yaml';
import {
  anInsert,
  anUpdate,
  apiKey,
  call,
  egressRecordsPath,
  recordsPath,
  runPath,
  SECRETS,
  startApps,
  type Answer,
  type RunningApps,
} from './support/harness.js';

type Obj = Record<string, unknown>;

const key = apiKey(SECRETS.keyA);
const DEPRECATED_AT = new Date('2026-12-01T00:00:00Z');
const SUNSET_AT = new Date('2027-06-01T00:00:00Z');
const LINK = 'https://example.com/changelog#get-run';

function expectNotDeprecated(answer: Answer, what: string): void {
  for (const name of ['deprecation', 'sunset', 'link']) expect(answer.headers.get(name), `${name} on ${what}`).to.equal(null);
}

/** operationId → `deprecated` flag of every operation in the document. */
function deprecatedFlags(doc: Obj): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const item of Object.values(doc['paths'] as Record<string, Obj>)) {
    for (const method of ['get', 'post', 'patch']) {
      const op = item[method] as Obj | undefined;
      if (op !== undefined) out[String(op['operationId'])] = op['deprecated'] === true;
    }
  }
  return out;
}

describe('adapter-http: deprecation', function () {
  let apps: RunningApps;
  let runUrl: string;
  before(async function () {
    apps = await startApps({ deprecations: { getRun: { deprecatedAt: DEPRECATED_AT, sunsetAt: SUNSET_AT, link: LINK } } });
    const started = await call(apps.url, 'POST', runPath(), { headers: key, json: { message: 'x' } });
    expect(started.status).to.equal(202);
    runUrl = `/api/v1/runs/${(started.body as { data: { run_id: string } }).data.run_id}`;
  });
  after(async function () {
    await apps.close();
  });

  it('the deprecated operation answers Deprecation (@unix), Sunset (HTTP-date) and Link rel="deprecation", on success and errors', async function () {
    for (const answer of [
      await call(apps.url, 'GET', runUrl, { headers: key }),
      await call(apps.url, 'GET', '/api/v1/runs/unknown', { headers: key }),
      await call(apps.url, 'GET', runUrl),
    ]) {
      expect(answer.headers.get('deprecation'), String(answer.status)).to.equal(`@${DEPRECATED_AT.getTime() / 1000}`);
      expect(answer.headers.get('deprecation')).to.equal('@1796083200');
      const sunset = answer.headers.get('sunset') ?? '';
      expect(sunset).to.equal('Tue, 01 Jun 2027 00:00:00 GMT');
      expect(new Date(sunset).getTime()).to.equal(SUNSET_AT.getTime());
      expect(answer.headers.get('link')).to.match(new RegExp(`^<${LINK.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}>; rel="deprecation"`));
    }
  });

  it('other operations do not answer with deprecation headers', async function () {
    expectNotDeprecated(await call(apps.url, 'GET', '/api/v1'), 'the index');
    expectNotDeprecated(await call(apps.url, 'GET', '/openapi.yaml'), 'the document');
    expectNotDeprecated(await call(apps.url, 'POST', recordsPath(), { headers: key, json: anInsert() }), 'insert');
    expectNotDeprecated(await call(apps.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() }), 'update');
    expectNotDeprecated(await call(apps.url, 'POST', runPath(), { headers: key, json: { message: 'x' } }), 'run start');
    expectNotDeprecated(await call(apps.egressUrl, 'POST', egressRecordsPath(), { headers: key, json: anInsert() }), 'egress insert');
  });

  it('the document marks that operation, and only it, deprecated: true', async function () {
    const doc = parse((await call(apps.url, 'GET', '/openapi.yaml')).text) as Obj;
    expect(deprecatedFlags(doc)).to.deep.equal({
      describeApi: false,
      insertRecord: false,
      updateRecord: false,
      startRun: false,
      getRun: true,
      cancelRun: false,
      streamRunEvents: false,
      listRuns: false,
      callMcp: false,
      mcpProtectedResourceMetadata: false,
      insertRecordViaEgress: false,
      updateRecordViaEgress: false,
      listAgents: false,
      getAgent: false,
      listConnections: false,
      getConnection: false,
      prepareFile: false,
      completeFile: false,
      listFiles: false,
      getFile: false,
    });
  });

  it('a deprecated row insert: both addresses answer the headers, without Sunset when none is set, and the document marks both', async function () {
    const other = await startApps({ deprecations: { insertRecord: { deprecatedAt: DEPRECATED_AT, link: 'https://example.com/x' } } });
    try {
      for (const answer of [
        await call(other.url, 'POST', recordsPath(), { headers: key, json: anInsert() }),
        await call(other.egressUrl, 'POST', egressRecordsPath(), { headers: key, json: anInsert({ values: { id: 3 } }) }),
      ]) {
        expect(answer.status).to.equal(201);
        expect(answer.headers.get('deprecation')).to.equal('@1796083200');
        expect(answer.headers.get('sunset')).to.equal(null);
        expect(answer.headers.get('link')).to.match(/^<https:\/\/example\.com\/x>; rel="deprecation"/);
      }
      expectNotDeprecated(await call(other.url, 'PATCH', recordsPath(), { headers: key, json: anUpdate() }), 'update');
      const flags = deprecatedFlags(parse((await call(other.url, 'GET', '/openapi.yaml')).text) as Obj);
      expect(Object.keys(flags).filter((id) => flags[id])).to.have.members(['insertRecord', 'insertRecordViaEgress']);
    } finally {
      await other.close();
    }
  });
});
