import { domainError, err, type RecordWriter } from '@svc/core';
import { expect } from 'chai';
import { rawExchange } from '../../../tools/test-support/raw-http.js';
import { anInsert, anUpdate, apiKey, call, egressRecordsPath, recordsPath, runPath, SECRETS, startApps, type Answer, type RunningApps } from './support/harness.js';

// docs/CONTRACT.md "Runs lifecycle" (Idempotency-Key), over loopback HTTP on the in-memory core.

const START = { message: 'Summarise the orders of yesterday' };
const keyA = apiKey(SECRETS.keyA);
let issued = 0;
const aKey = (): string => `idem-http-${process.pid}-${Date.now()}-${++issued}`;

function expectProblemCode(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.text).to.equal(status);
  expect((answer.body as { code?: string }).code).to.equal(code);
}

async function runCount(apps: RunningApps, secret: string = SECRETS.keyA): Promise<number> {
  const listed = await call(apps.url, 'GET', '/api/v1/runs?limit=100', { headers: apiKey(secret) });
  expect(listed.status).to.equal(200);
  return (listed.body as { data: unknown[] }).data.length;
}

describe('Idempotency-Key over HTTP (run start, row insert, row update)', function () {
  let apps: RunningApps;
  afterEach(async function () {
    await apps.close();
  });

  it('a run start sent 5 times with one key makes one run: one 202, then byte-identical replays with Idempotent-Replayed: true', async function () {
    apps = await startApps();
    const key = aKey();
    const answers: Answer[] = [];
    for (let i = 0; i < 5; i++) answers.push(await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': key }, json: START }));
    const [first, ...replays] = answers as [Answer, ...Answer[]];
    expect(first.status).to.equal(202);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    for (const replay of replays) {
      expect(replay.status).to.equal(202);
      expect(replay.text).to.equal(first.text);
      expect(replay.headers.get('location')).to.equal(first.headers.get('location'));
      expect(replay.headers.get('content-type')).to.equal(first.headers.get('content-type'));
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      expect(replay.headers.get('x-request-id')).to.not.equal(first.headers.get('x-request-id'));
    }
    expect(await runCount(apps)).to.equal(1);
  });

  it('5 concurrent run starts with one key make one run: one 202, the others replays or 409 idempotency_key_in_use with Retry-After', async function () {
    apps = await startApps();
    const key = aKey();
    const answers = await Promise.all(Array.from({ length: 5 }, () => call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': key }, json: START })));
    const fresh = answers.filter((a) => a.status === 202 && a.headers.get('idempotent-replayed') === null);
    expect(fresh).to.have.length(1);
    for (const other of answers.filter((a) => a !== fresh[0])) {
      if (other.status === 202) {
        expect(other.text).to.equal(fresh[0]?.text);
        expect(other.headers.get('idempotent-replayed')).to.equal('true');
      } else {
        expectProblemCode(other, 409, 'idempotency_key_in_use');
        expect(other.headers.get('retry-after')).to.equal('1');
        expect(other.headers.get('ratelimit-remaining')).to.not.equal(null);
      }
    }
    expect(await runCount(apps)).to.equal(1);
  });

  it('the same key with another body answers 422 idempotency_key_reused; member order and whitespace do not count', async function () {
    apps = await startApps();
    const key = aKey();
    const headers = { ...keyA, 'idempotency-key': key, 'content-type': 'application/json' };
    const first = await call(apps.url, 'POST', recordsPath(), { headers, raw: '{"entity":"dbo.orders","values":{"id":2,"qty":1.0,"sku":"B-2"}}' });
    expect(first.status, first.text).to.equal(201);
    const reordered = await call(apps.url, 'POST', recordsPath(), { headers, raw: '{ "values": {"sku":"B-2", "qty": 1, "id": 2}, "entity": "dbo.orders" }' });
    expect(reordered.status).to.equal(201);
    expect(reordered.headers.get('idempotent-replayed')).to.equal('true');
    const other = await call(apps.url, 'POST', recordsPath(), { headers, raw: '{"entity":"dbo.orders","values":{"id":2,"qty":2,"sku":"B-2"}}' });
    expectProblemCode(other, 422, 'idempotency_key_reused');
    expect(other.headers.get('idempotent-replayed')).to.equal(null);
    // Another path (the egress address) is another request too.
    const egress = await call(apps.egressUrl, 'POST', egressRecordsPath(), { headers, raw: '{"entity":"dbo.orders","values":{"id":2,"qty":1.0,"sku":"B-2"}}' });
    expectProblemCode(egress, 422, 'idempotency_key_reused');
    expect(apps.world.writer.rowsOf('dbo.orders')).to.have.length(2);
  });

  it('an insert retried with one key writes once, on both listeners; an update too', async function () {
    apps = await startApps();
    for (const [base, path, id] of [
      [apps.url, recordsPath(), 20],
      [apps.egressUrl, egressRecordsPath(), 21],
    ] as const) {
      const key = aKey();
      const body = anInsert({ values: { id, sku: 'R', qty: 1, note: null, status: 'new' } });
      const first = await call(base, 'POST', path, { headers: { ...keyA, 'idempotency-key': key }, json: body });
      const retry = await call(base, 'POST', path, { headers: { ...keyA, 'idempotency-key': key }, json: body });
      expect(first.status, first.text).to.equal(201);
      expect(retry.status).to.equal(201);
      expect(retry.text).to.equal(first.text);
      expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    }
    expect(apps.world.writer.rowsOf('dbo.orders')?.map((r) => r['id'])).to.deep.equal([1, 20, 21]);
    const key = aKey();
    const update = await call(apps.url, 'PATCH', recordsPath(), { headers: { ...keyA, 'idempotency-key': key }, json: anUpdate() });
    expect(update.status).to.equal(200);
    // The row changes meanwhile; the replay is the first answer, not today's state.
    apps.world.writer.defineTable('dbo.orders', ['id', 'sku', 'qty', 'note', 'status'], []);
    const replay = await call(apps.url, 'PATCH', recordsPath(), { headers: { ...keyA, 'idempotency-key': key }, json: anUpdate() });
    expect(replay.text).to.equal(update.text);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('keys are scoped to the account: account B sending A\'s key gets its own fresh answer', async function () {
    apps = await startApps();
    const key = aKey();
    const a = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': key }, json: START });
    expect(a.status).to.equal(202);
    const b = await call(apps.url, 'POST', runPath('agent_of_b'), { headers: { ...apiKey(SECRETS.keyB), 'idempotency-key': key }, json: { message: 'other' } });
    expect(b.status).to.equal(202);
    expect(b.headers.get('idempotent-replayed')).to.equal(null);
    expect(b.text).to.not.equal(a.text);
    // B on A's agent: the not-found of any missing agent; only B's own use of a key counts against B.
    const probe = await call(apps.url, 'POST', runPath(), { headers: { ...apiKey(SECRETS.keyB), 'idempotency-key': aKey() }, json: START });
    const probeWithAsKey = await call(apps.url, 'POST', runPath(), { headers: { ...apiKey(SECRETS.keyB), 'idempotency-key': key }, json: START });
    expectProblemCode(probe, 404, 'not_found');
    expectProblemCode(probeWithAsKey, 422, 'idempotency_key_reused');
    expect(await runCount(apps)).to.equal(1);
    expect(await runCount(apps, SECRETS.keyB)).to.equal(1);
  });

  it('an empty, too long, non-printable or repeated key answers 400 validation_failed naming the header, and nothing runs', async function () {
    apps = await startApps();
    for (const key of ['', 'x'.repeat(256)]) {
      const answer = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': key }, json: START });
      expectProblemCode(answer, 400, 'validation_failed');
      expect((answer.body as { detail: string }).detail).to.equal('header Idempotency-Key: must be 1 to 255 printable ASCII characters, sent once');
      expect((answer.body as { errors: unknown }).errors).to.deep.equal([{ path: '/Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters, sent once' }]);
      expect(answer.headers.get('ratelimit-remaining')).to.not.equal(null);
    }
    const addr = new URL(apps.url);
    const body = JSON.stringify(START);
    for (const lines of [['Idempotency-Key: caf\xe9'], ['Idempotency-Key: a', 'Idempotency-Key: b']]) {
      const request = `POST ${runPath()} HTTP/1.1\r\nHost: ${addr.host}\r\nX-API-Key: ${SECRETS.keyA}\r\n${lines.join('\r\n')}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
      const exchange = await rawExchange(Number(addr.port), Buffer.from(request, 'latin1'), { timeoutMs: 5_000, expectAnswers: 1 });
      const answer = exchange.answers[0];
      expect(answer?.status, lines.join(' | ')).to.equal(400);
      expect(answer?.body.toString()).to.include('"code":"validation_failed"').and.include('/Idempotency-Key');
    }
    expect(await runCount(apps)).to.equal(0);
  });

  it('a 5xx is not kept: the same key runs again once the database answers', async function () {
    let failures = 1;
    apps = await startApps({
      override: (world) => {
        const flaky: RecordWriter = {
          insert: (request) => (failures-- > 0 ? Promise.resolve(err(domainError('connection_unavailable', 'The database of this connection cannot be reached.'))) : world.writer.insert(request)),
          update: (request) => world.writer.update(request),
        };
        return { insertRecord: world.coreWith({ recordWriter: flaky }).insertRecord };
      },
    });
    const key = aKey();
    const body = anInsert({ values: { id: 30, sku: 'R', qty: 1, note: null, status: 'new' } });
    const first = await call(apps.url, 'POST', recordsPath(), { headers: { ...keyA, 'idempotency-key': key }, json: body });
    expectProblemCode(first, 502, 'connection_unavailable');
    const retry = await call(apps.url, 'POST', recordsPath(), { headers: { ...keyA, 'idempotency-key': key }, json: body });
    expect(retry.status).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal(null);
    const again = await call(apps.url, 'POST', recordsPath(), { headers: { ...keyA, 'idempotency-key': key }, json: body });
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(apps.world.writer.rowsOf('dbo.orders')?.filter((r) => r['id'] === 30)).to.have.length(1);
  });

  it('a 401 and a 429 are not kept, a 4xx of the operation is; a replay is charged to the credential, never to the agent', async function () {
    apps = await startApps({ limits: { credential: { limit: 100, windowSeconds: 60 }, agent: { limit: 1, windowSeconds: 60 } } });
    const key = aKey();
    const unauthorized = await call(apps.url, 'POST', runPath(), { headers: { ...apiKey('svc-not-a-key-000000000000000000000000'), 'idempotency-key': key }, json: START });
    expect(unauthorized.status).to.equal(401);
    const first = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': key }, json: START });
    expect(first.status).to.equal(202);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    // The agent's window (1 / 60 s) is full: replays still pass, each charged to the credential.
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const replay = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': key }, json: START });
      expect(replay.status).to.equal(202);
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      remaining.push(replay.headers.get('ratelimit-remaining') ?? '');
    }
    expect(remaining).to.deep.equal(['98', '97', '96']);
    // A 429 (the agent's window) is not kept: the key is free, so another body is not a reuse.
    const limitedKey = aKey();
    const limited = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': limitedKey }, json: START });
    expectProblemCode(limited, 429, 'rate_limited');
    const otherBody = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': limitedKey }, json: { message: 'another' } });
    expectProblemCode(otherBody, 429, 'rate_limited');
    // A 4xx of the operation (validation) is kept and replayed byte for byte.
    const badKey = aKey();
    const bad = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': badKey }, json: { files: [] } });
    expectProblemCode(bad, 400, 'validation_failed');
    const badAgain = await call(apps.url, 'POST', runPath(), { headers: { ...keyA, 'idempotency-key': badKey }, json: { files: [] } });
    expect(badAgain.text).to.equal(bad.text);
    expect(badAgain.headers.get('idempotent-replayed')).to.equal('true');
    expect(await runCount(apps)).to.equal(1);
  });
});
