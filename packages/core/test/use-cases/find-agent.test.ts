import { expect } from 'chai';
import { ACCOUNT_B, anAgent, aPrincipal } from '@svc/core/testing';
import { aWorld, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('FindAgent', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  it("answers an agent of the caller's account", async function () {
    const agent = anAgent();
    expect(valueOf(await w.coreWith({}).findAgent.execute({ principal: aPrincipal(), agentId: agent.agentId }))).to.deep.equal(agent);
  });

  it("answers another account's agent exactly like a missing one, and an over-long id without a lookup", async function () {
    const core = w.coreWith({});
    const foreign = errorOf(await core.findAgent.execute({ principal: aPrincipal({ accountId: ACCOUNT_B }), agentId: anAgent().agentId }));
    const missing = errorOf(await core.findAgent.execute({ principal: aPrincipal(), agentId: 'agent_nobody' }));
    expect(foreign).to.deep.equal(missing);
    expect(foreign).to.deep.equal({ code: 'not_found', detail: 'The agent was not found.' });
    expect(errorOf(await core.findAgent.execute({ principal: aPrincipal(), agentId: 'a'.repeat(129) })).code).to.equal('not_found');
  });

  it('charges nothing (the calls made through the endpoint are charged)', async function () {
    const core = w.coreWith({});
    await core.findAgent.execute({ principal: aPrincipal(), agentId: anAgent().agentId });
    const decision = await w.rateLimits.decide(aPrincipal());
    expect(decision.remaining).to.equal(decision.limit - 1);
  });
});
