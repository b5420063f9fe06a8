import { expect } from 'chai';
import { wireBody, type RunQueue } from '@svc/core';
import { ACCOUNT_B, aFileReference, anAgent, aPrincipal, fileReferences } from '@svc/core/testing';
import { AGENT, aWorld, BASE_URL, metered, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('StartRun', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  function start(body: unknown, agentId: string = AGENT.agentId) {
    return w.startRun.execute({ principal: aPrincipal(), agentId, body: wireBody(body) });
  }

  /** Starts a run with `body` and returns the paths of its issues; nothing is queued. */
  async function issuePathsOf(body: unknown): Promise<string[]> {
    const { result } = await start(body);
    const error = errorOf(result);
    expect(error.code).to.equal('validation_failed');
    expect(w.runs.all()).to.have.length(0);
    return (error.errors ?? []).map((i) => i.path);
  }

  describe('a run started with a message (Option 2)', function () {
    it('answers queued with a status_url under the base URL', async function () {
      const { result } = await start({ message: 'Summarise the attached contracts.' });
      const started = valueOf(result);
      expect(started.status).to.equal('queued');
      expect(started.run_id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(started.workflow_run_id).to.match(/^[0-9a-f-]{36}$/).and.not.equal(started.run_id);
      expect(started.status_url).to.equal(`${BASE_URL}/api/v1/runs/${started.run_id}`);
      expect(started.message).to.equal('Run queued with a message.');
    });

    it('records the run as queued in the store, with its request, owner and times', async function () {
      const { result } = await start({ message: 'hello' });
      const started = valueOf(result);
      const run = await w.runs.get(started.run_id);
      expect(run).to.deep.equal({
        runId: started.run_id,
        workflowRunId: started.workflow_run_id,
        agentId: AGENT.agentId,
        accountId: AGENT.accountId,
        status: 'queued',
        createdAt: w.clock.now(),
        updatedAt: w.clock.now(),
        request: { kind: 'message', message: 'hello' },
        attempts: 0,
      });
      expect(w.queue.take()).to.equal(started.run_id);
    });

    it('makes the run readable by GetRun with RFC 3339 times', async function () {
      const started = valueOf((await start({ message: 'hello' })).result);
      const { result } = await w.getRun.execute({ principal: aPrincipal(), runId: started.run_id });
      const view = valueOf(result);
      const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
      expect(view).to.include({
        run_id: started.run_id,
        workflow_run_id: started.workflow_run_id,
        agent_id: AGENT.agentId,
        status: 'queued',
        status_url: started.status_url,
        attempts: 0,
      });
      expect(view.created_at).to.match(rfc3339).and.equal('2026-01-01T00:00:00.000Z');
      expect(view.updated_at).to.match(rfc3339).and.equal(view.created_at);
    });

    it('refuses an empty message at /message', async function () {
      expect(await issuePathsOf({ message: '' })).to.deep.equal(['/message']);
    });

    it('refuses a message that is not a string at /message', async function () {
      expect(await issuePathsOf({ message: 42 })).to.deep.equal(['/message']);
    });

    it('refuses an unknown member', async function () {
      expect(await issuePathsOf({ message: 'hi', priority: 'high' })).to.deep.equal(['/priority']);
    });
  });

  describe('a run started with files (Option 1)', function () {
    it('records the files, defaults process_together to false and background files to none', async function () {
      const files = fileReferences(2);
      const started = valueOf((await start({ files })).result);
      expect(started.message).to.equal('Run queued with 2 files.');
      expect((await w.runs.get(started.run_id))?.request).to.deep.equal({ kind: 'files', files, processTogether: false, backgroundFiles: [] });
    });

    it('keeps every Option 1 member: message, process_together, notification_email, background_files', async function () {
      const body = {
        files: [aFileReference()],
        message: 'Compare these.',
        process_together: true,
        notification_email: 'ops@example.com',
        background_files: [aFileReference({ file_key: 'uploads/glossary.txt', file_name: 'glossary.txt', content_type: 'text/plain' })],
      };
      const started = valueOf((await start(body)).result);
      expect(started.message).to.equal('Run queued with 1 file and 1 background file.');
      expect((await w.runs.get(started.run_id))?.request).to.deep.equal({
        kind: 'files',
        files: body.files,
        message: 'Compare these.',
        processTogether: true,
        notificationEmail: 'ops@example.com',
        backgroundFiles: body.background_files,
      });
    });

    it('accepts a body with files and message (both shapes present is Option 1)', async function () {
      const started = valueOf((await start({ files: [aFileReference()], message: 'hi' })).result);
      expect((await w.runs.get(started.run_id))?.request.kind).to.equal('files');
    });

    it('accepts 1 and 50 files', async function () {
      for (const n of [1, 50]) {
        const { result } = await start({ files: fileReferences(n) });
        expect(result.ok, `${n} files`).to.equal(true);
      }
      expect(w.runs.all().map((r) => (r.request.kind === 'files' ? r.request.files.length : 0))).to.deep.equal([1, 50]);
    });

    it('refuses 0 files at /files', async function () {
      const { result } = await start({ files: [] });
      expect(errorOf(result).errors).to.deep.equal([{ path: '/files', message: 'must have at least 1 element(s)' }]);
    });

    it('refuses 51 files at /files', async function () {
      const { result } = await start({ files: fileReferences(51) });
      expect(errorOf(result).errors).to.deep.equal([{ path: '/files', message: 'must have at most 50 elements' }]);
      expect(w.runs.all()).to.have.length(0);
    });

    it('accepts 10 background files and refuses 11 at /background_files', async function () {
      expect((await start({ files: [aFileReference()], background_files: fileReferences(10) })).result.ok).to.equal(true);
      const { result } = await start({ files: [aFileReference()], background_files: fileReferences(11) });
      expect(errorOf(result).errors).to.deep.equal([{ path: '/background_files', message: 'must have at most 10 elements' }]);
      expect(w.runs.all()).to.have.length(1);
    });

    it('refuses a process_together that is not a boolean', async function () {
      for (const value of ['true', 1, null]) {
        expect(await issuePathsOf({ files: [aFileReference()], process_together: value }), JSON.stringify(value)).to.deep.equal([
          '/process_together',
        ]);
      }
    });

    it('refuses a notification_email that is not an e-mail address', async function () {
      for (const value of ['not-an-email', '', 'a@', 42]) {
        expect(await issuePathsOf({ files: [aFileReference()], notification_email: value }), JSON.stringify(value)).to.deep.equal([
          '/notification_email',
        ]);
      }
    });

    it('refuses a content_type that is not a media type, at its index', async function () {
      for (const value of ['pdf', 'application/', '/pdf', 'application pdf', '']) {
        const paths = await issuePathsOf({ files: [aFileReference(), aFileReference({ content_type: value })] });
        expect(new Set(paths), JSON.stringify(value)).to.deep.equal(new Set(['/files/1/content_type']));
      }
    });

    it('refuses a bad background file at its own path', async function () {
      expect(await issuePathsOf({ files: [aFileReference()], background_files: [{ file_key: 'k', file_name: 'n' }] })).to.deep.equal([
        '/background_files/0/content_type',
      ]);
    });

    it('refuses an empty file_key, a missing file_name and an unknown member of a file', async function () {
      expect(await issuePathsOf({ files: [{ file_key: '', content_type: 'application/pdf', size: 3 }] })).to.have.members([
        '/files/0/file_key',
        '/files/0/file_name',
        '/files/0/size',
      ]);
    });

    it('refuses files that are not an array', async function () {
      expect(await issuePathsOf({ files: aFileReference() })).to.deep.equal(['/files']);
    });
  });

  describe('neither shape', function () {
    it('refuses {message, background_files} without files, naming /files', async function () {
      expect(await issuePathsOf({ message: 'hi', background_files: [aFileReference()] })).to.deep.equal(['/files']);
    });

    it('refuses {message, notification_email} without files, naming /files', async function () {
      expect(await issuePathsOf({ message: 'hi', notification_email: 'ops@example.com' })).to.deep.equal(['/files']);
    });

    it('refuses {message, process_together} without files, naming /files', async function () {
      expect(await issuePathsOf({ message: 'hi', process_together: true })).to.deep.equal(['/files']);
    });

    it('refuses {} with one issue on the body itself', async function () {
      const { result } = await start({});
      const error = errorOf(result);
      expect(error.code).to.equal('validation_failed');
      expect(error.errors).to.deep.equal([{ path: '', message: 'must contain `files` (Option 1) or `message` (Option 2)' }]);
      expect(error.detail).to.match(/^request body: /);
    });

    for (const body of [null, [], 'hello', 3]) {
      it(`refuses a body that is not an object: ${JSON.stringify(body)}`, async function () {
        expect(await issuePathsOf(body)).to.deep.equal(['']);
      });
    }
  });

  describe('agent', function () {
    it('answers not_found for an unknown agent, and queues nothing', async function () {
      const { result } = await start({ message: 'hi' }, 'agent_missing');
      expect(errorOf(result)).to.deep.equal({ code: 'not_found', detail: 'The agent was not found.' });
      expect(w.runs.all()).to.have.length(0);
    });

    it("answers another account's agent exactly like a missing one", async function () {
      const missing = await start({ message: 'hi' }, 'agent_b');
      w.agents.add(anAgent({ agentId: 'agent_b', accountId: ACCOUNT_B }));
      const foreign = await start({ message: 'hi' }, 'agent_b');
      expect(errorOf(foreign.result).code).to.equal('not_found');
      expect(errorOf(foreign.result)).to.deep.equal(errorOf(missing.result));
      expect(w.runs.all()).to.have.length(0);
    });
  });

  it('rejects, and answers nothing, when the queue is unreachable', async function () {
    const down: RunQueue = { enqueue: () => Promise.reject(new Error('queue down')) };
    const startRun = metered(w.coreWith({ runQueue: down }).startRun, w.rateLimits);
    let thrown: unknown;
    try {
      await startRun.execute({ principal: aPrincipal(), agentId: AGENT.agentId, body: { message: 'hi' } });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(Error).with.property('message', 'queue down');
  });
});
