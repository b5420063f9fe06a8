import { expect } from 'chai';
import { FailingRecordWriter, FailingRunQueue } from '@svc/core/testing';
import { expectData, expectProblem } from '../../../tools/test-support/http.js';
import { anInsert, apiKey, call, recordsPath, runPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

// The failing fakes of @svc/core/testing seen from HTTP: each answers what the real
// adapter's failure answers (docs/CONTRACT.md "Dependencies and faults", "Envelope and
// errors"), and the switch flips while the server runs.
describe('adapter-http: the failing fakes of @svc/core/testing', function () {
  let apps: RunningApps;
  let queue: FailingRunQueue;
  let writer: FailingRecordWriter;
  before(async function () {
    apps = await startApps({
      override: (world) => {
        queue = new FailingRunQueue(world.queue);
        writer = new FailingRecordWriter(world.writer);
        const core = world.coreWith({ runQueue: queue, recordWriter: writer });
        return { startRun: core.startRun, insertRecord: core.insertRecord };
      },
    });
  });
  afterEach(function () {
    queue.recover();
    writer.recover();
  });
  after(async function () {
    await apps.close();
  });

  it('an unavailable run queue answers 503 service_unavailable with Retry-After, and 202 once it recovers', async function () {
    queue.failWith('unavailable');
    const down = await call(apps.url, 'POST', runPath(), { headers: apiKey(SECRETS.keyA), json: { message: 'x' } });
    expectProblem(down, 503, 'service_unavailable');
    expect(down.headers.get('retry-after')).to.equal('5');
    expect(apps.world.runs.all()).to.deep.equal([]);
    queue.recover();
    const up = await call(apps.url, 'POST', runPath(), { headers: apiKey(SECRETS.keyA), json: { message: 'x' } });
    expect(expectData<{ status: string }>(up, 202).status).to.equal('queued');
  });

  it('a writer that times out answers 504 connection_timeout, one that cannot connect 502, one that fails unexpectedly 500', async function () {
    for (const [fault, status, code] of [
      ['connection_timeout', 504, 'connection_timeout'],
      ['connection_unavailable', 502, 'connection_unavailable'],
      ['unexpected_error', 500, 'internal_error'],
    ] as const) {
      writer.failNext(1, fault);
      const answer = await call(apps.url, 'POST', recordsPath(), { headers: apiKey(SECRETS.keyA), json: anInsert() });
      expectProblem(answer, status, code);
    }
    expect(apps.world.writer.received).to.deep.equal([]);
  });
});
