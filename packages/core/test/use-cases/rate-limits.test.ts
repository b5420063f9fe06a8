import { expect } from 'chai';
import { createCore, DEFAULT_RATE_LIMITS, wireBody, type DomainError, type RateLimitDecision, type RateLimitPolicy, type RateLimitRule, type RateLimitStore, type Result } from '@svc/core';
import { ACCOUNT_A, anAgent, aPrincipal, aRun } from '@svc/core/testing';
import { AGENT, aRecordWrite, aWorld, ORDERS, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('rate limits of the use cases', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  function start(agentId: string = AGENT.agentId, body: unknown = { message: 'hi' }) {
    return w.startRun.execute({ principal: aPrincipal(), agentId, body: wireBody(body) });
  }

  async function startTimes(n: number, agentId: string = AGENT.agentId): Promise<void> {
    for (let i = 0; i < n; i++) {
      const { result } = await start(agentId);
      expect(result.ok, `start ${i + 1}`).to.equal(true);
    }
  }

  describe('per agent, on StartRun (30 / 60 s)', function () {
    it('refuses the 31st start for one agent within the window with rate_limited', async function () {
      await startTimes(30);
      const { result, rateLimit } = await start();
      const error = errorOf(result);
      expect(error.code).to.equal('rate_limited');
      expect(error.detail).to.contain('this agent');
      expect(rateLimit).to.include({ allowed: false, limit: 30, remaining: 0, key: `agent:${ACCOUNT_A}:${AGENT.agentId}` });
      expect(rateLimit.resetSeconds).to.be.within(1, 60);
      expect(rateLimit.retryAfterSeconds).to.be.within(1, 60);
      expect(w.runs.all()).to.have.length(30);
    });

    it('reports the agent window, the tighter one, on every allowed start', async function () {
      const { rateLimit } = await start();
      expect(rateLimit).to.include({ allowed: true, limit: 30, remaining: 29, key: `agent:${ACCOUNT_A}:${AGENT.agentId}` });
      expect(rateLimit.resetAt).to.equal(w.clock.now().getTime() / 1000 + 60);
    });

    it('still lets a second agent of the same credential through', async function () {
      w.agents.add(anAgent({ agentId: 'agent_other' }));
      await startTimes(30);
      expect(errorOf((await start()).result).code).to.equal('rate_limited');
      const other = await start('agent_other');
      expect(valueOf(other.result).status).to.equal('queued');
      expect(other.rateLimit).to.include({ allowed: true, key: `agent:${ACCOUNT_A}:agent_other`, remaining: 29 });
    });

    it('lets the agent through again once the window has passed', async function () {
      await startTimes(30);
      w.clock.advanceSeconds(59);
      expect(errorOf((await start()).result).code).to.equal('rate_limited');
      w.clock.advanceSeconds(1);
      const again = await start();
      expect(valueOf(again.result).status).to.equal('queued');
      expect(again.rateLimit).to.include({ remaining: 29 });
    });

    it('does not charge the credential window for a start the agent limit refused', async function () {
      await startTimes(30);
      for (let i = 0; i < 5; i++) expect(errorOf((await start()).result).code).to.equal('rate_limited');
      const { rateLimit } = await w.getRun.execute({ principal: aPrincipal(), runId: 'no-such-run' });
      expect(rateLimit.key).to.equal(`credential:${ACCOUNT_A}:key_1`);
      expect(rateLimit.remaining).to.equal(DEFAULT_RATE_LIMITS.credential.limit - 31);
    });

    it('does not charge the agent window for an invalid body or an invisible agent', async function () {
      for (let i = 0; i < 30; i++) {
        expect(errorOf((await start(AGENT.agentId, { message: '' })).result).code).to.equal('validation_failed');
        expect(errorOf((await start('agent_missing')).result).code).to.equal('not_found');
      }
      const { result, rateLimit } = await start();
      expect(valueOf(result).status).to.equal('queued');
      expect(rateLimit).to.include({ key: `agent:${ACCOUNT_A}:${AGENT.agentId}`, remaining: 29 });
    });
  });

  describe('per credential', function () {
    it('reports a decision of the credential window on every authenticated use case, success or failure', async function () {
      await w.runs.save(aRun());
      const decisions: RateLimitDecision[] = [
        (await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }))).rateLimit,
        (await w.insertRecord.execute(aRecordWrite({ entity: 'orders', values: { id: 1 } }))).rateLimit,
        (await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 2 } }))).rateLimit,
        (await w.updateRecord.execute(aRecordWrite({}))).rateLimit,
        (await w.getRun.execute({ principal: aPrincipal(), runId: aRun().runId })).rateLimit,
        (await w.getRun.execute({ principal: aPrincipal(), runId: 'no-such-run' })).rateLimit,
        (await start('agent_missing')).rateLimit,
        (await start(AGENT.agentId, {})).rateLimit,
      ];
      expect(decisions.map((d) => d.remaining)).to.deep.equal([599, 598, 597, 596, 595, 594, 593, 592]);
      for (const d of decisions) expect(d).to.include({ allowed: true, limit: 600, key: `credential:${ACCOUNT_A}:key_1`, resetSeconds: 60 });
    });

    it('refuses every use case once the credential window is spent, before doing anything', async function () {
      w = aWorld({ credential: { limit: 3, windowSeconds: 60 }, agent: { limit: 30, windowSeconds: 60 } });
      expect((await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }))).result.ok).to.equal(true);
      expect((await start()).result.ok).to.equal(true);
      const third = await w.getRun.execute({ principal: aPrincipal(), runId: 'no-such-run' });
      expect(third.rateLimit).to.include({ allowed: true, remaining: 0 });

      const refused: { result: Result<unknown, DomainError>; rateLimit: RateLimitDecision }[] = [
        await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 2 } })),
        await w.insertRecord.execute(aRecordWrite({ entity: 'not valid', values: {} })),
        await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 2 } })),
        await w.getRun.execute({ principal: aPrincipal(), runId: 'no-such-run' }),
        await start(),
      ];
      for (const { result, rateLimit } of refused) {
        const error = errorOf(result);
        expect(error.code).to.equal('rate_limited');
        expect(error.detail).to.contain('this credential');
        expect(rateLimit).to.include({ allowed: false, limit: 3, remaining: 0, key: `credential:${ACCOUNT_A}:key_1` });
        expect(rateLimit.retryAfterSeconds).to.be.within(1, 60);
      }
      expect(w.writer.received).to.have.length(1);
      expect(w.runs.all()).to.have.length(1);
    });

    it('keeps one window per credential', async function () {
      w = aWorld({ credential: { limit: 1, windowSeconds: 60 }, agent: { limit: 30, windowSeconds: 60 } });
      expect((await w.getRun.execute({ principal: aPrincipal(), runId: 'x' })).rateLimit.allowed).to.equal(true);
      expect((await w.getRun.execute({ principal: aPrincipal(), runId: 'x' })).rateLimit.allowed).to.equal(false);
      const other = await w.getRun.execute({ principal: aPrincipal({ credentialId: 'key_2' }), runId: 'x' });
      expect(other.rateLimit).to.include({ allowed: true, key: `credential:${ACCOUNT_A}:key_2` });
    });

    it('opens a new credential window once the old one has passed', async function () {
      w = aWorld({ credential: { limit: 1, windowSeconds: 10 }, agent: { limit: 30, windowSeconds: 60 } });
      await w.getRun.execute({ principal: aPrincipal(), runId: 'x' });
      const refused = await w.getRun.execute({ principal: aPrincipal(), runId: 'x' });
      expect(refused.rateLimit).to.include({ allowed: false, resetSeconds: 10, retryAfterSeconds: 10 });
      w.clock.advanceSeconds(10);
      expect((await w.getRun.execute({ principal: aPrincipal(), runId: 'x' })).rateLimit.allowed).to.equal(true);
    });
  });
});

describe('RateLimitPolicy rule lists', function () {
  /** A store that records the rule lists it is asked to charge and charges nothing. */
  function recordingPolicy(): { readonly policy: Pick<RateLimitPolicy, 'decide'>; readonly seen: (readonly RateLimitRule[])[] } {
    const seen: (readonly RateLimitRule[])[] = [];
    const store: RateLimitStore = {
      chargeAll(rules) {
        seen.push(rules);
        return Promise.resolve({ charged: true, windows: rules.map(() => ({ count: 1, msLeft: 60_000 })) });
      },
    };
    return { policy: createCore({ rateLimitStore: store }, { baseUrl: 'https://api.example.test' }).rateLimits, seen };
  }

  it('hands the store the same frozen list (same key strings) for the same credential and agent, request after request', async function () {
    const { policy, seen } = recordingPolicy();
    await policy.decide(aPrincipal(), 'agt_1');
    await policy.decide(aPrincipal(), 'agt_1');
    await policy.decide(aPrincipal());
    await policy.decide(aPrincipal());
    expect(seen[1]).to.equal(seen[0]);
    expect(seen[3]).to.equal(seen[2]);
    expect(seen[0]?.map((r) => r.key)).to.deep.equal([`credential:${ACCOUNT_A}:key_1`, `agent:${ACCOUNT_A}:agt_1`]);
    expect(seen[2]?.map((r) => r.key)).to.deep.equal([`credential:${ACCOUNT_A}:key_1`]);
    expect(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0]?.[0])).to.equal(true);
  });

  it('keeps accounts apart: the same credential and agent ids of two accounts get two windows', async function () {
    const { policy, seen } = recordingPolicy();
    await policy.decide(aPrincipal({ accountId: 'acct_a' }), 'agt_1');
    await policy.decide(aPrincipal({ accountId: 'acct_b' }), 'agt_1');
    expect(seen[0]?.map((r) => r.key)).to.deep.equal(['credential:acct_a:key_1', 'agent:acct_a:agt_1']);
    expect(seen[1]?.map((r) => r.key)).to.deep.equal(['credential:acct_b:key_1', 'agent:acct_b:agt_1']);
  });

  it('stays bounded: past 10 000 lists it starts again and still answers every credential with its own keys', async function () {
    const { policy, seen } = recordingPolicy();
    for (let i = 0; i < 10_050; i++) await policy.decide(aPrincipal({ credentialId: `key_${i}` }));
    const first = seen[0];
    await policy.decide(aPrincipal({ credentialId: 'key_0' }));
    // Made again after the restart: an equal list, not the first one.
    expect(seen[seen.length - 1]).not.to.equal(first);
    expect(seen[seen.length - 1]?.map((r) => r.key)).to.deep.equal([`credential:${ACCOUNT_A}:key_0`]);
  });
});
