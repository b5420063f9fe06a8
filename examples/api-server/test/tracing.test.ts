import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { sha256Hex } from '@svc/core';
import { eventually, RecordingLogger } from '@svc/core/testing';
import { expect } from 'chai';
import { settingsFrom, startServer, startTracing, tracingRequested, type RunningServer, type Tracing } from '@svc/api-server';

const KEY = 'svc-tracing-test-key-0123456789abcdef';

describe('Tracing (the SDK with its in-memory exporter, in process)', function () {
  let tracing: Tracing | undefined;
  let server: RunningServer | undefined;
  afterEach(async function () {
    await server?.stop();
    await tracing?.shutdown();
    server = undefined;
    tracing = undefined;
  });

  it('is started only when the standard OTEL_* variables ask for it', async function () {
    expect(tracingRequested({})).to.equal(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).to.equal(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).to.equal(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).to.equal(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).to.equal(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).to.equal(false);
    expect(await startTracing({})).to.equal(undefined);
    const refused = await startTracing({ OTEL_TRACES_EXPORTER: 'zipkin' }).then(() => undefined, (error: unknown) => error);
    expect(refused).to.be.instanceOf(RangeError).with.property('message').that.includes('OTEL_TRACES_EXPORTER=zipkin');
  });

  it('gives one request its server span, with the use case, the credential check and the run attempt as its descendants', async function () {
    const exporter = new InMemorySpanExporter();
    tracing = await startTracing({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'svc-tracing-test' }, { exporter });
    const settings = settingsFrom({
      base_url: 'http://127.0.0.1:1',
      listen: { host: '127.0.0.1', port: 0 },
      egress: { url: 'http://127.0.0.1:2', listen: { host: '127.0.0.1', port: 0 } },
      admin_listen: { port: 0 },
      worker: { enabled: true, concurrency: 1 },
      accounts: [{ id: 'acct_traced', api_keys: [{ id: 'key_traced', sha256: sha256Hex(KEY) }], agents: [{ id: 'agent_traced' }] }],
    });
    const logger = new RecordingLogger();
    server = await startServer(settings, { logger });
    const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/agents/agent_traced/run`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'x-request-id': 'req-traced-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      body: JSON.stringify({ message: 'trace me' }),
    });
    expect(res.status).to.equal(202);
    const runId = ((await res.json()) as { data: { run_id: string } }).data.run_id;
    const spans = async (): Promise<ReadableSpan[]> => {
      await tracing?.flush();
      return exporter.getFinishedSpans();
    };
    await eventually(async () => (await spans()).some((s) => s.name === 'RunLifecycle.attempt' && s.attributes['svc.run_id'] === runId), 'the run attempt span', 10_000, 20);

    const finished = await spans();
    const request = finished.find((s) => s.kind === SpanKind.SERVER && s.attributes['svc.request_id'] === 'req-traced-1');
    expect(request, 'the request span').to.not.equal(undefined);
    const req = request as ReadableSpan;
    expect(req.name).to.equal('POST /api/v1/agents/:agent_id/run');
    expect(req.attributes).to.include({
      'http.request.method': 'POST',
      'http.route': '/api/v1/agents/:agent_id/run',
      'http.response.status_code': 202,
      'svc.operation': 'startRun',
      'svc.account_id': 'acct_traced',
      'svc.credential_id': 'key_traced',
      'client.address': '127.0.0.1',
    });
    expect(req.spanContext().traceId, 'the incoming traceparent is continued').to.equal('0af7651916cd43dd8448eb211c80319c');
    expect(req.resource.attributes['service.name']).to.equal('svc-tracing-test');

    const childrenOf = (parent: ReadableSpan): ReadableSpan[] => finished.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
    expect(childrenOf(req).map((s) => s.name)).to.have.members(['Authenticate.execute', 'StartRun.execute']);
    const useCase = childrenOf(req).find((s) => s.name === 'StartRun.execute') as ReadableSpan;
    expect(useCase.attributes['svc.outcome']).to.equal('ok');
    expect(useCase.spanContext().traceId).to.equal(req.spanContext().traceId);
    expect(JSON.stringify(finished.map((s) => s.attributes))).not.to.include(KEY);

    // The access log line names the request's trace (docs/decisions.md "Observability").
    const line = logger.lines.find((l) => l.message === 'request' && l.fields['request_id'] === 'req-traced-1');
    expect(line?.fields, 'the access log line').to.include({ trace_id: '0af7651916cd43dd8448eb211c80319c', operation: 'startRun', status: 202 });
  });
});
