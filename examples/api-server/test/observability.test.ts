import { sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { expect } from 'chai';
import { requestCounts, scrape, valueOf } from './support/metrics.js';
import { addresses, type Addresses } from './support/fixture.js';
import { logLines, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

// Issue 13's "Done when": /metrics scraped after a mixed load matches, per operation and
// status class, the counts the load generator saw (docs/decisions.md "Observability").
const KEY = 'svc-observability-test-key-0123456789';
const OTHER_KEY = 'svc-observability-test-key-account-b-01';
const AGENT = 'agent_observed';
const AGENT_LIMIT = 5;
const EMAIL = 'observer@example.com';

/** The operation and status class a request of the load generator got. */
interface Seen {
  readonly operation: string;
  readonly status: number;
  readonly requestId: string;
}

describe('Observability of the API server (child process)', function () {
  this.timeout(60_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let at: Addresses;
  let server: ServerProcess | undefined;
  let adminUrl: string;

  before(async function () {
    dir = await tempDir();
    at = await addresses();
    const config = {
      base_url: at.url,
      listen: { host: '127.0.0.1', port: at.port },
      egress: { url: at.egressUrl, listen: { host: '127.0.0.1', port: at.egressPort } },
      admin_listen: { host: '127.0.0.1', port: 0 },
      rate_limits: { credential: { requests: 10_000, window_seconds: 60 }, agent: { requests: AGENT_LIMIT, window_seconds: 60 } },
      worker: { enabled: true, concurrency: 4 },
      // The run bodies name a made-up file key: what is observed is the requests, not the files.
      files: { verify_keys: false },
      log_level: 'info',
      accounts: [
        { id: 'acct_obs', api_keys: [{ id: 'key_obs', sha256: sha256Hex(KEY) }], agents: [{ id: AGENT }] },
        { id: 'acct_other', api_keys: [{ id: 'key_other', sha256: sha256Hex(OTHER_KEY) }] },
      ],
    };
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl);
    const listening = logLines(server).find((l) => l['msg'] === 'listening');
    expect(listening?.['admin_port'], 'the listening line names the admin port').to.be.a('number');
    adminUrl = `http://127.0.0.1:${listening?.['admin_port'] as number}`;
  });

  after(async function () {
    await server?.kill(5000);
    await dir?.remove();
  });

  async function send(operation: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Seen & { json: unknown }> {
    const requestId = `req-load-${Math.random().toString(36).slice(2)}`;
    const res = await fetch(`${at.url}${path}`, {
      method,
      headers: { ...headers, 'x-request-id': requestId, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { operation, status: res.status, requestId, json: text.startsWith('{') ? JSON.parse(text) : undefined };
  }

  it('counts, per operation and status class, exactly the requests a mixed load got (index, run starts and gets, 404, 401, 429)', async function () {
    const before = await scrape(adminUrl);
    const key = { 'x-api-key': KEY };
    const runBody = { files: [{ file_key: 'uploads/a.pdf', file_name: 'a.pdf', content_type: 'application/pdf' }], message: 'observe me', notification_email: EMAIL };
    const seen: (Seen & { json: unknown })[] = [];
    // Bounded: 8 rounds of 8 concurrent requests over loopback.
    for (let round = 0; round < 8; round++) {
      const batch = [
        send('describeApi', 'GET', '/api/v1'),
        send('startRun', 'POST', `/api/v1/agents/${AGENT}/run`, key, runBody),
        send('getRun', 'GET', '/api/v1/runs/00000000-0000-4000-8000-000000000000', key),
        send('unmatched', 'GET', `/api/v1/nothing-here-${round}`),
        send('startRun', 'POST', `/api/v1/agents/${AGENT}/run`, {}, runBody),
        send('getRun', 'GET', '/api/v1/runs/x', { 'x-api-key': 'svc-unknown-key-000000000000000' }),
        send('unmatched', 'DELETE', '/api/v1'),
        send('livez', 'GET', '/livez'),
      ];
      seen.push(...(await Promise.all(batch)));
    }
    const started = seen.filter((s) => s.operation === 'startRun' && s.status === 202);
    for (const s of started.slice(0, 3)) {
      const runId = (s.json as { data: { run_id: string } }).data.run_id;
      seen.push(await send('getRun', 'GET', `/api/v1/runs/${runId}`, key));
      seen.push(await send('getRun', 'GET', `/api/v1/runs/${runId}`, { 'x-api-key': OTHER_KEY }));
    }
    const statuses = new Set(seen.map((s) => s.status));
    for (const status of [200, 202, 401, 404, 405, 429]) expect(statuses, `the load got a ${status}`).to.include(status);
    expect(started).to.have.length(AGENT_LIMIT);

    const after = await scrape(adminUrl);
    const expected = new Map<string, number>();
    for (const s of seen) {
      const label = `${s.operation}|${Math.floor(s.status / 100)}xx`;
      expected.set(label, (expected.get(label) ?? 0) + 1);
    }
    const [countsBefore, countsAfter] = [requestCounts(before), requestCounts(after)];
    const delta = new Map([...countsAfter].map(([label, n]) => [label, n - (countsBefore.get(label) ?? 0)]).filter(([, n]) => (n as number) > 0) as [string, number][]);
    console.log(`      figures: ${seen.length} requests; per operation|class: ${JSON.stringify(Object.fromEntries(expected))}`);
    expect(Object.fromEntries(delta)).to.deep.equal(Object.fromEntries(expected));
    // The histogram saw the same requests as the counter.
    for (const [label, n] of expected) {
      const [operation, statusClass] = label.split('|') as [string, string];
      const histogramDelta = valueOf(after, 'svc_http_request_duration_seconds_count', { operation, status_class: statusClass }) - valueOf(before, 'svc_http_request_duration_seconds_count', { operation, status_class: statusClass });
      expect(histogramDelta, `histogram count of ${label}`).to.equal(n);
    }

    const refused = seen.filter((s) => s.status === 429).length;
    expect(valueOf(after, 'svc_rate_limit_decisions_total', { scope: 'agent', outcome: 'refused' })).to.equal(refused);
    expect(valueOf(after, 'svc_rate_limit_decisions_total', { scope: 'agent', outcome: 'allowed' })).to.equal(AGENT_LIMIT);
    expect(valueOf(after, 'svc_runs_started_total')).to.equal(AGENT_LIMIT);
    await eventually(async () => valueOf(await scrape(adminUrl), 'svc_runs_finished_total', { status: 'succeeded' }) === AGENT_LIMIT, 'every run to finish', 20_000, 50);
    const finished = await scrape(adminUrl);
    expect(valueOf(finished, 'svc_run_queue_wait_seconds_count')).to.equal(AGENT_LIMIT, 'one queue wait per run');
    expect(valueOf(finished, 'svc_run_queue_depth')).to.equal(0);
    expect(finished.has('process_cpu_user_seconds_total'), 'the process metrics').to.equal(true);

    // Log lines: every request line has its id and operation, authenticated ones the
    // account and credential; run lines lead back to the request that started the run.
    // pino writes asynchronously: the run lines reach this process a moment after the metrics.
    const runIds = started.map((s) => (s.json as { data: { run_id: string } }).data.run_id);
    const notified = (): number => logLines(server as ServerProcess).filter((l) => l['msg'] === 'run finished: notification due' && runIds.includes(l['run_id'] as string)).length;
    await eventually(() => notified() === runIds.length, 'the run lines', 10_000, 20);
    const lines = logLines(server as ServerProcess);
    const requestLines = new Map(lines.filter((l) => l['msg'] === 'request').map((l) => [l['request_id'] as string, l]));
    for (const s of seen) {
      const line = requestLines.get(s.requestId);
      expect(line, `a log line for ${s.requestId}`).to.include({ operation: s.operation, status: s.status, client_ip: '127.0.0.1' });
      if (s.status === 202) expect(line).to.include({ account_id: 'acct_obs', credential_id: 'key_obs' });
      if (s.status === 401) expect(line).not.to.have.any.keys('account_id', 'credential_id');
    }
    for (const s of started) {
      const runId = (s.json as { data: { run_id: string } }).data.run_id;
      const runLines = lines.filter((l) => l['run_id'] === runId);
      expect(runLines.map((l) => l['msg'])).to.include.members(['run finished', 'run finished: notification due']);
      for (const l of runLines) expect(l['request_id'], `${String(l['msg'])} names the request that started the run`).to.equal(s.requestId);
    }
    const stdout = (server as ServerProcess).stdout();
    expect(stdout).not.to.include(EMAIL);
    expect(stdout).not.to.include(KEY);
  });

  it('serves /metrics, /livez and /readyz on the admin listener only, never on the public address', async function () {
    expect((await fetch(`${adminUrl}/livez`)).status).to.equal(200);
    const ready = await fetch(`${adminUrl}/readyz`);
    expect([ready.status, await ready.json()]).to.deep.equal([200, { status: 'ready', checks: {} }]);
    const metrics = await fetch(`${adminUrl}/metrics`);
    expect(metrics.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    await metrics.arrayBuffer();
    for (const url of [at.url, at.egressUrl]) {
      const res = await fetch(`${url}/metrics`);
      expect(res.status, `${url}/metrics`).to.equal(404);
      await res.arrayBuffer();
    }
  });
});
