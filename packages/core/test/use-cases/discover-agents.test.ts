import { expect } from 'chai';
import { DependencyUnavailableError, type AgentView, type PageQuery } from '@svc/core';
import { ACCOUNT_B, anAgent, aPrincipal, FailingAgentCatalog } from '@svc/core/testing';
import { AGENT, aWorld, BASE_URL, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

/** Every agent id `w` lists for `principal`, following `next` page after page of `limit`. */
async function listedIds(w: World, limit: number, principal = aPrincipal()): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let page: PageQuery = { limit: String(limit) };
  for (let pages = 1; pages < 100; pages += 1) {
    const value = valueOf((await w.listAgents.execute({ principal, page })).result);
    ids.push(...value.items.map((a) => a.agent_id));
    if (value.nextCursor === undefined) return { ids, pages };
    page = { limit: String(limit), cursor: value.nextCursor };
  }
  throw new Error('next never ends');
}

describe('ListAgents and GetAgent (discovery)', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  it('shows every member, null when unknown, with run_url and mcp_url on the base URL (id percent-encoded)', async function () {
    w.agents.add(anAgent({ agentId: 'agent_full', name: 'Invoice reader', description: 'Reads invoices.', createdAt: new Date('2026-05-06T07:08:09.010Z') }));
    w.agents.add(anAgent({ agentId: 'agent:odd id' }));
    const { items, nextCursor: next } = valueOf((await w.listAgents.execute({ principal: aPrincipal() })).result);
    expect(next).to.equal(undefined);
    expect(items).to.deep.equal([
      { agent_id: 'agent:odd id', name: null, description: null, created_at: null, run_url: `${BASE_URL}/api/v1/agents/agent%3Aodd%20id/run`, mcp_url: `${BASE_URL}/api/v1/agents/agent%3Aodd%20id/mcp` },
      { agent_id: AGENT.agentId, name: null, description: null, created_at: null, run_url: `${BASE_URL}/api/v1/agents/${AGENT.agentId}/run`, mcp_url: `${BASE_URL}/api/v1/agents/${AGENT.agentId}/mcp` },
      {
        agent_id: 'agent_full',
        name: 'Invoice reader',
        description: 'Reads invoices.',
        created_at: '2026-05-06T07:08:09.010Z',
        run_url: `${BASE_URL}/api/v1/agents/agent_full/run`,
        mcp_url: `${BASE_URL}/api/v1/agents/agent_full/mcp`,
      },
    ] satisfies AgentView[]);
  });

  it("pages in ascending id order to the last page (default 20), never listing another account's agents", async function () {
    const mine = Array.from({ length: 24 }, (_, i) => `agent_${String(i).padStart(2, '0')}`);
    for (const id of [...mine].reverse()) w.agents.add(anAgent({ agentId: id }));
    for (const id of ['agent_00b', 'agent_zz']) w.agents.add(anAgent({ agentId: id, accountId: ACCOUNT_B }));
    const expected = [...mine, AGENT.agentId].sort();
    expect(await listedIds(w, 7)).to.deep.equal({ ids: expected, pages: 4 });
    expect(await listedIds(w, 25)).to.deep.equal({ ids: expected, pages: 1 });
    const first = valueOf((await w.listAgents.execute({ principal: aPrincipal() })).result);
    expect(first.items).to.have.length(20);
    expect(first.nextCursor).to.be.a('string');
    const b = valueOf((await w.listAgents.execute({ principal: aPrincipal({ accountId: ACCOUNT_B, credentialId: 'key_b' }) })).result);
    expect(b.items.map((a) => a.agent_id)).to.deep.equal(['agent_00b', 'agent_zz']);
  });

  it('refuses a bad limit or cursor naming the parameter, after charging the request', async function () {
    for (const limit of ['0', '101', '-1', '2.5', 'ten', '', '0x10']) {
      const { result, rateLimit } = await w.listAgents.execute({ principal: aPrincipal(), page: { limit } });
      expect(errorOf(result), limit).to.deep.include({ code: 'validation_failed' });
      expect(errorOf(result).errors?.[0]?.path, limit).to.equal('/limit');
      expect(rateLimit.allowed).to.equal(true);
    }
    for (const cursor of ['not-a-cursor', '', Buffer.from('{"v":2,"after":"x"}').toString('base64url')]) {
      const { result } = await w.listAgents.execute({ principal: aPrincipal(), page: { cursor } });
      expect(errorOf(result).errors?.[0]?.path, cursor).to.equal('/cursor');
    }
  });

  it('answers rate_limited before reading the page or the catalog once the window is spent', async function () {
    const limited = aWorld({ credential: { limit: 1, windowSeconds: 60 }, agent: { limit: 30, windowSeconds: 60 } });
    expect(valueOf((await limited.listAgents.execute({ principal: aPrincipal() })).result).items).to.have.length(1);
    const { result } = await limited.listAgents.execute({ principal: aPrincipal(), page: { limit: 'bad' } });
    expect(errorOf(result).code).to.equal('rate_limited');
    expect(errorOf((await limited.getAgent.execute({ principal: aPrincipal(), agentId: AGENT.agentId })).result).code).to.equal('rate_limited');
  });

  it("reads one agent; another account's answers exactly like a missing one", async function () {
    w.agents.add(anAgent({ agentId: 'agent_of_b', accountId: ACCOUNT_B, name: 'B' }));
    const view = valueOf((await w.getAgent.execute({ principal: aPrincipal(), agentId: AGENT.agentId })).result);
    expect(view).to.deep.equal({ agent_id: AGENT.agentId, name: null, description: null, created_at: null, run_url: `${BASE_URL}/api/v1/agents/${AGENT.agentId}/run`, mcp_url: `${BASE_URL}/api/v1/agents/${AGENT.agentId}/mcp` });
    const foreign = errorOf((await w.getAgent.execute({ principal: aPrincipal(), agentId: 'agent_of_b' })).result);
    const missing = errorOf((await w.getAgent.execute({ principal: aPrincipal(), agentId: 'agent_of_x' })).result);
    expect(foreign).to.deep.equal({ code: 'not_found', detail: 'The agent was not found.' });
    expect(foreign).to.deep.equal(missing);
    expect(valueOf((await w.getAgent.execute({ principal: aPrincipal({ accountId: ACCOUNT_B }), agentId: 'agent_of_b' })).result).name).to.equal('B');
    for (const agentId of ['', 'a'.repeat(129)]) expect(errorOf((await w.getAgent.execute({ principal: aPrincipal(), agentId })).result).code).to.equal('not_found');
  });

  it('rejects with DependencyUnavailableError when the catalog is lost, after charging (HTTP 503)', async function () {
    const agents = new FailingAgentCatalog(w.agents).failWith('unavailable');
    const core = w.coreWith({ agents });
    const meter = core.rateLimits.meterFor(aPrincipal());
    await core.listAgents.execute({ principal: aPrincipal(), meter }).then(
      () => expect.fail('resolved'),
      (error: unknown) => expect(error).to.be.instanceOf(DependencyUnavailableError),
    );
    expect(meter.charged).to.equal(true);
    await core.getAgent.execute({ principal: aPrincipal(), agentId: AGENT.agentId }).then(
      () => expect.fail('resolved'),
      (error: unknown) => expect(error).to.be.instanceOf(DependencyUnavailableError),
    );
    expect(agents.failures).to.equal(2);
  });
});
