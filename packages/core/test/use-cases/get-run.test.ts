import { expect } from 'chai';
import { ACCOUNT_B, aPrincipal, aRun } from '@svc/core/testing';
import { aWorld, BASE_URL, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('GetRun', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  it('answers the run with RFC 3339 UTC times and its status_url', async function () {
    const run = aRun({
      status: 'failed',
      attempts: 2,
      failureReason: 'The agent gave up.',
      createdAt: new Date('2026-03-04T05:06:07.089Z'),
      updatedAt: new Date('2026-03-04T05:07:00Z'),
    });
    await w.runs.save(run);
    const { result } = await w.getRun.execute({ principal: aPrincipal(), runId: run.runId });
    expect(valueOf(result)).to.deep.equal({
      run_id: run.runId,
      workflow_run_id: run.workflowRunId,
      agent_id: run.agentId,
      status: 'failed',
      created_at: '2026-03-04T05:06:07.089Z',
      updated_at: '2026-03-04T05:07:00.000Z',
      status_url: `${BASE_URL}/api/v1/runs/${run.runId}`,
      attempts: 2,
      failure_reason: 'The agent gave up.',
    });
  });

  it('leaves failure_reason out while the run has none', async function () {
    const run = aRun();
    await w.runs.save(run);
    const view = valueOf((await w.getRun.execute({ principal: aPrincipal(), runId: run.runId })).result);
    expect(view).to.not.have.property('failure_reason');
  });

  it('answers not_found for an unknown run', async function () {
    const { result } = await w.getRun.execute({ principal: aPrincipal(), runId: 'no-such-run' });
    expect(errorOf(result)).to.deep.equal({ code: 'not_found', detail: 'The run was not found.' });
  });

  it("answers another account's run exactly like a missing one", async function () {
    const run = aRun({ accountId: ACCOUNT_B });
    const missing = await w.getRun.execute({ principal: aPrincipal(), runId: run.runId });
    await w.runs.save(run);
    const foreign = await w.getRun.execute({ principal: aPrincipal(), runId: run.runId });
    expect(errorOf(foreign.result).code).to.equal('not_found');
    expect(errorOf(foreign.result)).to.deep.equal(errorOf(missing.result));
    const owner = await w.getRun.execute({ principal: aPrincipal({ accountId: ACCOUNT_B, credentialId: 'key_b' }), runId: run.runId });
    expect(valueOf(owner.result).run_id).to.equal(run.runId);
  });

  it('answers not_found for a run id over 128 characters without asking the store', async function () {
    const runId = 'r'.repeat(129);
    await w.runs.save(aRun({ runId }));
    const { result } = await w.getRun.execute({ principal: aPrincipal(), runId });
    expect(errorOf(result).code).to.equal('not_found');
  });

  it('encodes the run id in status_url', async function () {
    const run = aRun({ runId: 'a/b c' });
    await w.runs.save(run);
    const view = valueOf((await w.getRun.execute({ principal: aPrincipal(), runId: run.runId })).result);
    expect(view.status_url).to.equal(`${BASE_URL}/api/v1/runs/a%2Fb%20c`);
  });
});
