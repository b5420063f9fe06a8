import { expect } from 'chai';
import type { Run } from '@svc/core';
import { aRun, eventually, FailingRunStore } from '@svc/core/testing';
import { expectProblem, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import { openStream, parseSse } from '../../../tools/test-support/sse.js';
import { ACCOUNT_B, apiKey, bearer, call, SECRETS, startApps, type RunningApps } from './support/harness.js';
import { OpenApiChecker } from './support/openapi-check.js';

const key = apiKey(SECRETS.keyA);
const cancelPath = (runId: string): string => `/api/v1/runs/${runId}/cancel`;
const eventsPath = (runId: string): string => `/api/v1/runs/${runId}/events`;

describe('adapter-http: cancel and events of runs (docs/CONTRACT.md "Runs lifecycle")', function () {
  let apps: RunningApps;
  let checker: OpenApiChecker;
  let n = 0;

  async function given(overrides: Partial<Run> = {}): Promise<Run> {
    n += 1;
    const run = aRun({ runId: `run-ce-${n}`, createdAt: new Date(), updatedAt: new Date(), ...overrides });
    await apps.world.runs.save(run);
    return run;
  }

  beforeEach(async function () {
    apps = await startApps({ settings: { runEventsKeepAliveMs: 40 } });
    checker = OpenApiChecker.fromYaml((await call(apps.url, 'GET', '/openapi.yaml')).text);
  });
  afterEach(async function () {
    await apps.close();
  });

  describe('POST /api/v1/runs/{run_id}/cancel', function () {
    it('cancels a queued run at once (200, cancelled); again → 409 run_final', async function () {
      const run = await given();
      const answer = await call(apps.url, 'POST', cancelPath(run.runId), { headers: key });
      expect(answer.status, answer.text).to.equal(200);
      checker.expectDocumented('/api/v1/runs/{run_id}/cancel', 'POST', answer);
      expectRateLimitHeaders(answer, true);
      const data = (answer.body as { data: Record<string, unknown> }).data;
      expect(data).to.include({ run_id: run.runId, status: 'cancelled' });
      expect(data['cancel_requested_at']).to.be.a('string');
      expect((await apps.world.runs.get(run.runId))?.status).to.equal('cancelled');
      const again = await call(apps.url, 'POST', cancelPath(run.runId), { headers: key });
      checker.expectDocumented('/api/v1/runs/{run_id}/cancel', 'POST', again);
      expect(expectProblem(again, 409, 'run_final').detail).to.match(/already cancelled/u);
    });

    it('asks a running run to stop: 200 running with cancel_requested_at; asked again → 200 with the same time', async function () {
      const run = await given({ status: 'running', attempts: 1 });
      await apps.world.runs.reportProgress(run.runId, { percent: 0, message: 'Started.', updatedAt: new Date() });
      const first = await call(apps.url, 'POST', cancelPath(run.runId), { headers: bearer(SECRETS.tokenWrite) });
      expect(first.status, first.text).to.equal(200);
      checker.expectDocumented('/api/v1/runs/{run_id}/cancel', 'POST', first);
      const data = (first.body as { data: Record<string, unknown> }).data;
      expect(data).to.include({ status: 'running' });
      const again = await call(apps.url, 'POST', cancelPath(run.runId), { headers: key });
      expect(again.status).to.equal(200);
      expect((again.body as { data: Record<string, unknown> }).data['cancel_requested_at']).to.equal(data['cancel_requested_at']);
    });

    it("another account's run answers 404 exactly like a missing one; a token without runs:write 403", async function () {
      const run = await given({ accountId: ACCOUNT_B, agentId: 'agent_of_b' });
      const foreign = await call(apps.url, 'POST', cancelPath(run.runId), { headers: key });
      const missing = await call(apps.url, 'POST', cancelPath('no-such-run'), { headers: key });
      expect(expectProblem(foreign, 404, 'not_found').detail).to.equal(expectProblem(missing, 404, 'not_found').detail);
      expect((await apps.world.runs.get(run.runId))?.status).to.equal('queued');
      expectProblem(await call(apps.url, 'POST', cancelPath(run.runId), { headers: bearer(SECRETS.tokenNoScope) }), 403, 'insufficient_scope');
    });

    it('a lost run store answers 503 with Retry-After', async function () {
      const down = await startApps({ override: (w) => ({ cancelRun: w.coreWith({ runStore: new FailingRunStore(w.runs).failWith('unavailable') }).cancelRun }) });
      try {
        const answer = await call(down.url, 'POST', cancelPath('any'), { headers: key });
        expectProblem(answer, 503, 'service_unavailable');
        expect(answer.headers.get('retry-after')).to.equal('5');
      } finally {
        await down.close();
      }
    });
  });

  describe('GET /api/v1/runs/{run_id}/events', function () {
    it('sends the history from run.queued, then live events, each data the bare run; closes after the final event', async function () {
      const run = await given();
      await apps.world.runs.transition(run.runId, { to: 'running', at: new Date(), countAttempt: true });
      const stream = await openStream(apps.url, eventsPath(run.runId), key);
      expect(stream.status).to.equal(200);
      expect(stream.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
      expect(stream.headers.get('cache-control')).to.equal('no-store');
      expect(stream.headers.get('x-accel-buffering')).to.equal('no');
      expect(stream.headers.get('ratelimit-remaining')).to.match(/^\d+$/u);
      await eventually(() => stream.events.filter((e) => e.id !== undefined).length === 2, 'the history');
      await eventually(() => stream.events.some((e) => e.comment === 'keep-alive'), 'a keep-alive comment');
      expect(stream.ended()).to.equal(false);
      await apps.world.runs.transition(run.runId, { to: 'succeeded', at: new Date(), output: { ok: 1 } });
      await stream.finished;
      expect(stream.ended(), 'closed by the server').to.equal(true);
      const events = stream.events.filter((e) => e.id !== undefined);
      expect(events.map((e) => e.event)).to.deep.equal(['run.queued', 'run.running', 'run.succeeded']);
      const getRun = await call(apps.url, 'GET', `/api/v1/runs/${run.runId}`, { headers: key });
      expect(events[2]?.data).to.deep.equal((getRun.body as { data: unknown }).data, 'data is the data of GET run');
      expect(new Set(events.map((e) => e.id)).size).to.equal(3);
      await eventually(() => apps.world.runs.watcherCount === 0, 'the watch released');
    });

    it('resumes after Last-Event-ID with exactly the events after it; unknown id → whole history; after the final event → no event, closed', async function () {
      const run = await given();
      await apps.world.runs.transition(run.runId, { to: 'running', at: new Date(), countAttempt: true });
      await apps.world.runs.transition(run.runId, { to: 'failed', at: new Date(), failureReason: 'No.' });
      const all = await apps.world.runs.events(run.runId);
      const resumed = await call(apps.url, 'GET', eventsPath(run.runId), { headers: { ...key, 'last-event-id': all[0]?.id as string } });
      expect(parseSse(resumed.text).events.map((e) => e.event)).to.deep.equal(['run.running', 'run.failed']);
      const unknown = await call(apps.url, 'GET', eventsPath(run.runId), { headers: { ...key, 'last-event-id': 'nope' } });
      expect(parseSse(unknown.text).events.map((e) => e.event)).to.deep.equal(['run.queued', 'run.running', 'run.failed']);
      const after = await call(apps.url, 'GET', eventsPath(run.runId), { headers: { ...key, 'last-event-id': all[2]?.id as string } });
      expect(after.status).to.equal(200);
      expect(after.text).to.equal('');
    });

    it('a client that disconnects releases its watch; the server stop (closingStreams) ends open streams', async function () {
      const run = await given();
      const streams = await Promise.all([1, 2, 3].map(() => openStream(apps.url, eventsPath(run.runId), key)));
      await eventually(() => apps.world.runs.watcherCount === 3, 'three watches');
      for (const s of streams) s.abort();
      await Promise.all(streams.map((s) => s.finished));
      await eventually(() => apps.world.runs.watcherCount === 0, 'every watch released after the disconnects');
      const closing = new AbortController();
      const stopping = await startApps({ settings: { closingStreams: closing.signal } });
      try {
        await stopping.world.runs.save(aRun({ runId: 'run-stop' }));
        const open = await openStream(stopping.url, eventsPath('run-stop'), key);
        await eventually(() => stopping.world.runs.watcherCount === 1, 'one watch');
        closing.abort();
        await open.finished;
        expect(open.ended()).to.equal(true);
        expect(stopping.world.runs.watcherCount).to.equal(0);
      } finally {
        await stopping.close();
      }
    });

    it("another account's run → 404 like a missing one; a lost store at open → 503 with Retry-After; HEAD → headers only", async function () {
      const run = await given({ accountId: ACCOUNT_B, agentId: 'agent_of_b' });
      const foreign = await call(apps.url, 'GET', eventsPath(run.runId), { headers: key });
      const missing = await call(apps.url, 'GET', eventsPath('no-such-run'), { headers: key });
      expect(expectProblem(foreign, 404, 'not_found').detail).to.equal(expectProblem(missing, 404, 'not_found').detail);
      const own = await given();
      const head = await fetch(`${apps.url}${eventsPath(own.runId)}`, { method: 'HEAD', headers: key });
      expect(head.status).to.equal(200);
      expect(head.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
      const down = await startApps({ override: (w) => ({ streamRunEvents: w.coreWith({ runStore: new FailingRunStore(w.runs).failWith('unavailable') }).streamRunEvents }) });
      try {
        const answer = await call(down.url, 'GET', eventsPath('any'), { headers: key });
        expectProblem(answer, 503, 'service_unavailable');
        expect(answer.headers.get('retry-after')).to.equal('5');
      } finally {
        await down.close();
      }
    });
  });
});
