import { expect } from 'chai';
import { DependencyUnavailableError, viewOf, type ListRuns, type PageQuery, type Run } from '@svc/core';
import { ACCOUNT_B, aPrincipal, aRun, FailingRunStore } from '@svc/core/testing';
import { aWorld, BASE_URL, metered, type Metered, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('ListRuns', function () {
  let w: World;
  /** ListRuns on the world's store, called as the HTTP adapter calls it (a fresh meter per call). */
  let listRuns: Metered<ListRuns>;
  beforeEach(function () {
    w = aWorld();
    listRuns = metered(w.coreWith({}).listRuns, w.rateLimits);
  });

  /** Saves `n` runs of account A, one a minute from 2026-03-01 on (the last is the newest). */
  async function givenRuns(n: number, overrides: (i: number) => Partial<Run> = () => ({})): Promise<Run[]> {
    const runs: Run[] = [];
    for (let i = 0; i < n; i += 1) {
      const at = new Date(Date.UTC(2026, 2, 1, 0, i));
      const run = aRun({ runId: `run-${String(i).padStart(3, '0')}`, createdAt: at, updatedAt: at, ...overrides(i) });
      await w.runs.save(run);
      runs.push(run);
    }
    return runs;
  }

  const list = (page: PageQuery = {}, more: { agentId?: string; status?: string } = {}) => listRuns.execute({ principal: aPrincipal(), page, ...more });

  it("answers the caller's runs newest first, each as GET {status_url} shows it, 20 by default, with the next position", async function () {
    const runs = await givenRuns(25);
    const { result, rateLimit } = await list();
    const page = valueOf(result);
    expect(page.items).to.deep.equal(
      runs
        .slice(5)
        .reverse()
        .map((r) => viewOf(r, BASE_URL)),
    );
    expect(page.nextCursor, 'a next page').to.be.a('string');
    expect(rateLimit.allowed, 'charged once').to.equal(true);
  });

  it('pages to the last page with the cursor of each next position; the last page has no next', async function () {
    const runs = await givenRuns(7);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = valueOf((await list({ limit: '3', ...(cursor === undefined ? {} : { cursor }) })).result);
      seen.push(...page.items.map((r) => r.run_id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal(runs.map((r) => r.runId).reverse());
  });

  it('filters by agent and by status; an agent_id that names no agent of the account gives an empty list', async function () {
    const runs = await givenRuns(6, (i) => ({ agentId: i % 2 === 0 ? 'agent_x' : 'agent_y', status: i < 3 ? 'queued' : 'succeeded' }));
    const ids = async (more: { agentId?: string; status?: string }): Promise<string[]> => valueOf((await list({}, more)).result).items.map((r) => r.run_id);
    expect(await ids({ agentId: 'agent_x' })).to.deep.equal(['run-004', 'run-002', 'run-000']);
    expect(await ids({ status: 'queued' })).to.deep.equal(['run-002', 'run-001', 'run-000']);
    expect(await ids({ agentId: 'agent_y', status: 'succeeded' })).to.deep.equal(['run-005', 'run-003']);
    expect(valueOf((await list({}, { agentId: 'agent_unknown' })).result)).to.deep.equal({ items: [] });
    expect(runs).to.have.length(6);
  });

  it("never lists another account's runs, nor with that account's agent id", async function () {
    await givenRuns(2);
    await w.runs.save(aRun({ runId: 'run-of-b', accountId: ACCOUNT_B, agentId: 'agent_b', createdAt: new Date('2026-03-02T00:00:00Z') }));
    expect(valueOf((await list()).result).items.map((r) => r.run_id)).to.deep.equal(['run-001', 'run-000']);
    expect(valueOf((await list({}, { agentId: 'agent_b' })).result)).to.deep.equal({ items: [] });
    const ofB = valueOf((await listRuns.execute({ principal: aPrincipal({ accountId: ACCOUNT_B, credentialId: 'key_b' }), page: {} })).result);
    expect(ofB.items.map((r) => r.run_id)).to.deep.equal(['run-of-b']);
  });

  it("refuses a cursor made for other filters or another account with invalid_cursor, as a forged one", async function () {
    await givenRuns(4, (i) => ({ agentId: i % 2 === 0 ? 'agent_x' : 'agent_y' }));
    const cursor = valueOf((await list({ limit: 1 }, { agentId: 'agent_x' })).result).nextCursor;
    expect(cursor, 'a next page').to.be.a('string');
    expect(valueOf((await list({ limit: 1, ...(cursor === undefined ? {} : { cursor }) }, { agentId: 'agent_x' })).result).items).to.have.length(1);
    const refusals = [
      (await list({ ...(cursor === undefined ? {} : { cursor }) }, { agentId: 'agent_y' })).result,
      (await list({ ...(cursor === undefined ? {} : { cursor }) }, { agentId: 'agent_x', status: 'queued' })).result,
      (await list({ ...(cursor === undefined ? {} : { cursor }) })).result,
      (await listRuns.execute({ principal: aPrincipal({ accountId: ACCOUNT_B, credentialId: 'key_b' }), agentId: 'agent_x', page: { ...(cursor === undefined ? {} : { cursor }) } })).result,
    ];
    for (const result of refusals) expect(errorOf(result).code).to.equal('invalid_cursor');
  });

  it('refuses a status that is not a run status, naming the parameter, and charges the request', async function () {
    for (const status of ['', 'done', 'QUEUED', 'queued ']) {
      const { result, rateLimit } = await list({}, { status });
      expect(errorOf(result), JSON.stringify(status)).to.deep.equal({
        code: 'validation_failed',
        detail: 'query parameter status: must be one of queued, running, succeeded, failed, cancelled',
        errors: [{ path: '/status', message: 'must be one of queued, running, succeeded, failed, cancelled' }],
      });
      expect(rateLimit.allowed).to.equal(true);
    }
  });

  it('refuses a bad limit or cursor, naming the parameter', async function () {
    for (const limit of ['0', '101', 'ten', '', '1.5', 0, 101]) {
      const error = errorOf((await list({ limit })).result);
      expect(error.code).to.equal('validation_failed');
      expect(error.errors?.[0]?.path, JSON.stringify(limit)).to.equal('/limit');
      expect(error.detail).to.match(/^query parameter limit: /u);
    }
    for (const cursor of ['', 'not a cursor', Buffer.from('{"v":2,"after":"x"}').toString('base64url')]) {
      const error = errorOf((await list({ cursor })).result);
      expect([error.code, error.errors?.[0]?.path], JSON.stringify(cursor)).to.deep.equal(['invalid_cursor', '/cursor']);
    }
    expect(valueOf((await list({ limit: '100' })).result).items).to.deep.equal([]);
    expect(valueOf((await list({ limit: 1 })).result).items).to.deep.equal([]);
  });

  it('answers an empty list for an empty or over-long agent_id without asking the store', async function () {
    const down = new FailingRunStore(w.runs).failWith('unavailable');
    const listing = metered(w.coreWith({ runStore: down }).listRuns, w.rateLimits);
    for (const agentId of ['', 'a'.repeat(129)]) {
      expect(valueOf((await listing.execute({ principal: aPrincipal(), agentId, page: {} })).result)).to.deep.equal({ items: [] });
    }
    // ...while one that could be an agent id asks it, and a lost store rejects (HTTP 503).
    let thrown: unknown;
    try {
      await listing.execute({ principal: aPrincipal(), agentId: 'a'.repeat(128), page: {} });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(DependencyUnavailableError);
  });

  it('is rate-limited on the credential window, charged before anything is checked', async function () {
    w = aWorld({ credential: { limit: 2, windowSeconds: 60 }, agent: { limit: 30, windowSeconds: 60 } });
    listRuns = metered(w.coreWith({}).listRuns, w.rateLimits);
    expect((await list()).result.ok).to.equal(true);
    expect(errorOf((await list({}, { status: 'bad' })).result).code).to.equal('validation_failed');
    const refused = await list({}, { status: 'bad' });
    expect(errorOf(refused.result).code).to.equal('rate_limited');
    expect(refused.rateLimit.allowed).to.equal(false);
  });
});
