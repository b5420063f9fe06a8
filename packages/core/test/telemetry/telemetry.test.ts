import { expect } from 'chai';
import { createCore, inProcessPrincipal, type RecordWriter, type RunProcessor } from '@svc/core';
import { aConnection, anAgent, ACCOUNT_A, eventually, InMemoryAgentCatalog, InMemoryConnectionCatalog, InMemoryRecordWriter, RecordingLogger, RecordingTelemetry } from '@svc/core/testing';

const BASE_URL = 'http://127.0.0.1:8080';

describe('Telemetry: what createCore reports', function () {
  it('counts rate-limit decisions per window: every window allowed when charged, only the full one refused', async function () {
    const telemetry = new RecordingTelemetry();
    const agent = anAgent();
    const core = createCore(
      { agents: new InMemoryAgentCatalog([agent]), telemetry },
      { baseUrl: BASE_URL, rateLimits: { credential: { limit: 100, windowSeconds: 60 }, agent: { limit: 2, windowSeconds: 60 } } },
    );
    const principal = inProcessPrincipal(ACCOUNT_A);
    const statuses: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await core.startRun.execute({ principal, meter: core.rateLimits.meterFor(principal), agentId: agent.agentId, body: { message: `run ${i}` } });
      statuses.push(result.ok ? 'ok' : result.error.code);
    }
    await core.close();
    expect(statuses).to.deep.equal(['ok', 'ok', 'rate_limited']);
    expect(Object.fromEntries(telemetry.rateLimitDecisions)).to.deep.equal({ 'credential|allowed': 2, 'agent|allowed': 2, 'agent|refused': 1 });
    expect(telemetry.runsStarted).to.equal(2, 'a refused run start queues nothing');
  });

  it('times every row write with its connection and outcome (ok or the error code)', async function () {
    const telemetry = new RecordingTelemetry();
    const connection = aConnection();
    const writer = new InMemoryRecordWriter();
    writer.defineTable('dbo.orders', ['id', 'sku']);
    const core = createCore({ connections: new InMemoryConnectionCatalog([connection]), recordWriter: writer, telemetry }, { baseUrl: BASE_URL });
    const principal = inProcessPrincipal(ACCOUNT_A);
    const written = await core.insertRecord.execute({ principal, connectionId: connection.connectionId, body: { entity: 'dbo.orders', values: { id: 1, sku: 'A' } } });
    const unknown = await core.insertRecord.execute({ principal, connectionId: connection.connectionId, body: { entity: 'dbo.missing', values: { id: 2 } } });
    const refusedBeforeWriting = await core.insertRecord.execute({ principal, connectionId: connection.connectionId, body: { entity: 'no-dot', values: { id: 3 } } });
    await core.close();
    expect([written.ok, unknown.ok, refusedBeforeWriting.ok]).to.deep.equal([true, false, false]);
    expect(Object.fromEntries(telemetry.writes)).to.deep.equal({ [`${connection.connectionId}|ok`]: 1, [`${connection.connectionId}|unknown_entity`]: 1 });
    expect(telemetry.durations.every((d) => d >= 0 && d < 60)).to.equal(true, 'durations are seconds');
  });

  it('times a write whose writer throws or rejects as outcome error, and passes the failure on', async function () {
    const telemetry = new RecordingTelemetry();
    const connection = aConnection();
    const failing: RecordWriter = {
      insert: () => {
        throw new TypeError('a bug in the writer');
      },
      update: () => Promise.reject(new TypeError('a bug in the writer')),
    };
    const core = createCore({ connections: new InMemoryConnectionCatalog([connection]), recordWriter: failing, telemetry }, { baseUrl: BASE_URL });
    const principal = inProcessPrincipal(ACCOUNT_A);
    const insert = core.insertRecord.execute({ principal, connectionId: connection.connectionId, body: { entity: 'dbo.orders', values: { id: 1 } } });
    const update = core.updateRecord.execute({ principal, connectionId: connection.connectionId, body: { entity: 'dbo.orders', key_column: 'id', key_value: 1, values: { sku: 'B' } } });
    const outcomes = await Promise.allSettled([insert, update]);
    await core.close();
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'fulfilled'))).to.deep.equal(['a bug in the writer', 'a bug in the writer']);
    expect(Object.fromEntries(telemetry.writes)).to.deep.equal({ [`${connection.connectionId}|error`]: 2 });
  });

  it("reports each run's queue wait and final status, keeps the starting request's id on the run and in its log lines, and never shows it", async function () {
    const telemetry = new RecordingTelemetry();
    const logger = new RecordingLogger();
    const agent = anAgent();
    const core = createCore({ agents: new InMemoryAgentCatalog([agent]), telemetry }, { baseUrl: BASE_URL });
    const processor: RunProcessor = { process: (run) => Promise.resolve(run.request.message === 'fail' ? { ok: false, reason: 'No.' } : { ok: true }) };
    const principal = inProcessPrincipal(ACCOUNT_A);
    const ok = await core.startRun.execute({ principal, agentId: agent.agentId, body: { message: 'hello' }, requestId: 'req-ok' });
    const bad = await core.startRun.execute({ principal, agentId: agent.agentId, body: { message: 'fail' }, requestId: 'req-fail' });
    if (!ok.ok || !bad.ok) throw new Error('the runs should start');
    await core.startWorker(processor, { logger });
    try {
      await eventually(() => telemetry.runsFinished.size === 2, 'both runs to finish');
      expect(Object.fromEntries(telemetry.runsFinished)).to.deep.equal({ succeeded: 1, failed: 1 });
      expect(telemetry.waits).to.have.length(2);
      expect(telemetry.waits.every((w) => w >= 0)).to.equal(true);
      expect((await core.runs.store.get(ok.value.run_id))?.requestId).to.equal('req-ok');
      const finished = logger.lines.filter((l) => l.message === 'run finished').map((l) => [l.fields['run_id'], l.fields['request_id'], l.fields['status']]);
      expect(finished).to.have.deep.members([
        [ok.value.run_id, 'req-ok', 'succeeded'],
        [bad.value.run_id, 'req-fail', 'failed'],
      ]);
      const view = await core.getRun.execute({ principal, runId: ok.value.run_id });
      expect(JSON.stringify(view)).not.to.include('req-ok');
    } finally {
      await core.close();
    }
  });

  it('wraps no port when no telemetry is given', function () {
    const writer = new InMemoryRecordWriter();
    const core = createCore({ recordWriter: writer }, { baseUrl: BASE_URL });
    // The use cases hold the very writer given: nothing in between.
    expect((core.insertRecord as unknown as { writer: unknown }).writer).to.equal(writer);
  });
});
