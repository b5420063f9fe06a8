// The run list (issue 15 "Discovery", docs/CONTRACT.md "Discovery"), over HTTP against the
// API server as users run it: in memory, and on Redis (the BullMQ run queue, whose store
// keeps the list indexes).
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { eventually } from '@svc/core/testing';
import { addresses, AGENT_B, AGENTS, e2eConfig, SECRETS, type Addresses } from './support/fixture.js';
import { everyPage } from './support/paging.js';
import { startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';
import { apiKey, bearer, call, expectData, expectProblem, type Answer } from '../../../tools/test-support/http.js';
import { deleteKeys, REDIS_URL, redisOrSkip } from '../../../tools/test-support/redis.js';

const keyA = apiKey(SECRETS.keyA);
const keyB = apiKey(SECRETS.keyB);

interface ListedRun {
  readonly run_id: string;
  readonly agent_id: string;
  readonly status: string;
  readonly created_at: string;
  readonly status_url: string;
}

interface RunList {
  readonly data: readonly ListedRun[];
  readonly next_cursor: string | null;
}

/** The order the list promises: `created_at` descending, then `run_id` (ASCII here: plain comparison is byte order). */
function newestFirst(runs: readonly ListedRun[]): string[] {
  return [...runs].sort((a, b) => (a.created_at === b.created_at ? (a.run_id < b.run_id ? -1 : 1) : a.created_at < b.created_at ? 1 : -1)).map((r) => r.run_id);
}

for (const backend of ['in-memory runs', 'Redis runs'] as const) {
  describe(`the run list end to end, ${backend} (child process)`, function () {
    this.timeout(60_000);
    const prefix = `svc-test-runs-list-${process.pid}-${Date.now().toString(36)}`;
    let redis: Redis | undefined;
    let dir: Awaited<ReturnType<typeof tempDir>>;
    let at: Addresses;
    let server: ServerProcess;
    /** A's runs as GET {status_url} answers them once final. */
    let runsOfA: ListedRun[];
    let runsOfB: string[];

    /** Starts a run and answers its id. */
    async function start(key: Record<string, string>, agent: string, message: string): Promise<string> {
      return expectData<{ run_id: string }>(await call(at.url, 'POST', `/api/v1/agents/${agent}/run`, { headers: key, json: { message } }), 202).run_id;
    }

    /** Follows `Link: rel="next"` from `path` to the last page (support `everyPage`), `Link` present exactly when `next_cursor` is. */
    function pages(path: string, key: Record<string, string>): Promise<Answer[]> {
      return everyPage(`${at.url}${path}`, key, (answer) => {
        const link = answer.headers.get('link');
        expect(link === null, `Link (${String(link)}) iff next_cursor (${String((answer.body as RunList).next_cursor)})`).to.equal((answer.body as RunList).next_cursor === null);
      });
    }
    const idsOf = (answers: readonly Answer[]): string[] => answers.flatMap((a) => (a.body as RunList).data.map((r) => r.run_id));

    before(async function () {
      // 50 ms runs (the demo's default is 500 ms): the tests need them final, not long.
      const extra: Record<string, unknown> = { worker: { enabled: true, concurrency: 4, demo_delay_ms: 50 } };
      if (backend === 'Redis runs') {
        redis = await redisOrSkip(this);
        Object.assign(extra, { redis_url: REDIS_URL, redis_prefix: prefix });
      }
      dir = await tempDir();
      at = await addresses();
      server = await startServerProcess(await writeConfig(dir.path, e2eConfig(at, extra)), at.url, at.egressUrl);
      // One at a time, so that created_at follows the order of the starts (ties: run id).
      const started: string[] = [];
      for (const [agent, message] of [
        [AGENTS.main, 'first'],
        [AGENTS.spare, 'second [fail]'],
        [AGENTS.main, 'third'],
        [AGENTS.spare, 'fourth'],
        [AGENTS.main, 'fifth [fail]'],
        [AGENTS.main, 'sixth'],
        [AGENTS.spare, 'seventh'],
      ] as const) {
        started.push(await start(keyA, agent, message));
      }
      runsOfB = [await start(keyB, AGENT_B, 'b one'), await start(keyB, AGENT_B, 'b two [fail]')];
      // The demo worker makes them final: succeeded, or failed for "[fail]".
      await eventually(
        async () => {
          runsOfA = await Promise.all(started.map(async (id) => expectData<ListedRun>(await call(at.url, 'GET', `/api/v1/runs/${id}`, { headers: keyA }), 200)));
          return runsOfA.every((r) => r.status === 'succeeded' || r.status === 'failed');
        },
        "A's runs to finish",
        20_000,
        50,
      );
    });

    after(async function () {
      await server?.kill();
      await dir?.remove();
      if (redis !== undefined) {
        await deleteKeys(redis, prefix);
        await redis.quit();
      }
    });

    it("lists A's runs newest first, each as its status_url answers it, paged to the last page with Link", async function () {
      const answers = await pages('/api/v1/runs?limit=3', keyA);
      expect(answers.map((a) => (a.body as RunList).data.length)).to.deep.equal([3, 3, 1]);
      expect(idsOf(answers)).to.deep.equal(newestFirst(runsOfA));
      // Each as GET {status_url} answers it (the runs are final: nothing changes meanwhile).
      const listed = answers.flatMap((a) => (a.body as RunList).data);
      for (const run of listed) expect(run).to.deep.equal(runsOfA.find((r) => r.run_id === run.run_id));
      const last = answers[answers.length - 1] as Answer;
      expect((last.body as RunList).next_cursor).to.equal(null);
      expect(last.headers.get('link')).to.equal(null);
    });

    it('filters by agent, by status, and by both, across pages', async function () {
      const expected = (keep: (r: ListedRun) => boolean): string[] => newestFirst(runsOfA.filter(keep));
      expect(idsOf(await pages(`/api/v1/runs?agent_id=${AGENTS.spare}&limit=2`, keyA))).to.deep.equal(expected((r) => r.agent_id === AGENTS.spare));
      expect(idsOf(await pages('/api/v1/runs?status=failed&limit=1', keyA))).to.deep.equal(expected((r) => r.status === 'failed')).and.have.length(2);
      expect(idsOf(await pages(`/api/v1/runs?agent_id=${AGENTS.main}&status=succeeded&limit=2`, bearer(SECRETS.tokenWrite)))).to.deep.equal(
        expected((r) => r.agent_id === AGENTS.main && r.status === 'succeeded'),
      );
      expect(idsOf(await pages('/api/v1/runs?status=queued', keyA))).to.deep.equal([]);
    });

    it("B's list never shows A's runs: unfiltered, with A's agent; A's cursor is refused (400 invalid_cursor)", async function () {
      const ofA = new Set(runsOfA.map((r) => r.run_id));
      const ofB = idsOf(await pages('/api/v1/runs?limit=1', keyB));
      expect(ofB).to.have.members(runsOfB);
      expect(ofB.filter((id) => ofA.has(id))).to.deep.equal([]);
      expect(idsOf(await pages(`/api/v1/runs?agent_id=${AGENTS.main}`, keyB))).to.deep.equal([]);
      const firstOfA = (await call(at.url, 'GET', '/api/v1/runs?limit=1', { headers: keyA })).body as RunList;
      expect(firstOfA.next_cursor, "A's list has a next page").to.be.a('string');
      const withCursor = expectProblem(await call(at.url, 'GET', `/api/v1/runs?cursor=${firstOfA.next_cursor ?? ''}`, { headers: keyB }), 400, 'invalid_cursor');
      expect(JSON.stringify(withCursor)).not.to.match(new RegExp([...ofA].join('|'), 'u'));
    });

    it('answers 400 naming the parameter, 403 to a token without runs:read, and is listed in the index', async function () {
      const problem = expectProblem(await call(at.url, 'GET', '/api/v1/runs?status=done', { headers: keyA }), 400, 'validation_failed');
      expect(problem.errors?.[0]?.path).to.equal('/status');
      expect(problem.detail).to.match(/^query parameter status: /u);
      expectProblem(await call(at.url, 'GET', '/api/v1/runs?limit=1000', { headers: keyA }), 400, 'validation_failed');
      expectProblem(await call(at.url, 'GET', '/api/v1/runs', { headers: bearer(SECRETS.tokenNoScope) }), 403, 'insufficient_scope');
      const index = (await call(at.url, 'GET', '/api/v1')).body as { resources: Record<string, string> };
      expect(index.resources['run_list']).to.equal(`${at.url}/api/v1/runs`);
      expectProblem(await call(at.egressUrl, 'GET', '/api/v1/runs', { headers: keyA }), 404, 'not_found');
    });
  });
}
