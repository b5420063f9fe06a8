import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { DEMO_AGENT_ID, main, type EmbeddedOutput } from '@svc/example-embedded';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The checks every output of the demo passes, whether run as a process or called. */
function expectQueuedRun(output: EmbeddedOutput, baseUrl: string): void {
  const { run_start: start, run: view } = output;
  expect(start.status).to.equal('queued');
  expect(start.run_id).to.match(UUID_V4);
  expect(start.workflow_run_id).to.match(UUID_V4).and.not.equal(start.run_id);
  expect(start.status_url).to.equal(`${baseUrl}/api/v1/runs/${start.run_id}`);
  expect(start.message).to.equal('Run queued with 1 file.');
  expect(view).to.include({
    run_id: start.run_id,
    workflow_run_id: start.workflow_run_id,
    agent_id: DEMO_AGENT_ID,
    status: 'queued',
    status_url: start.status_url,
    attempts: 0,
  });
  expect(view.created_at).to.match(RFC_3339);
  expect(view.updated_at).to.equal(view.created_at);
}

describe('examples/embedded', function () {
  it('runs as a script and prints the queued run-start result and the run as JSON', async function () {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', 'examples/embedded/src/main.ts'],
      { cwd: REPO_ROOT, timeout: 15_000 },
    );
    expect(stderr).to.equal('');
    const output = JSON.parse(stdout) as EmbeddedOutput;
    expect(output).to.have.all.keys('run_start', 'run');
    expectQueuedRun(output, 'http://127.0.0.1:8080');
    expect(stdout).to.not.match(/svc-[A-Za-z0-9_-]{20,}/, 'the API key must never be printed');
  });

  it('can be called in process, with another base URL', async function () {
    const output = await main({ baseUrl: 'https://svc.example.com' });
    expectQueuedRun(output, 'https://svc.example.com');
  });
});
