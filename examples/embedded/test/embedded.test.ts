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
function expectSucceededRun(output: EmbeddedOutput, baseUrl: string): void {
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
    status: 'succeeded',
    status_url: start.status_url,
    attempts: 1,
  });
  expect(view.created_at).to.match(RFC_3339);
  expect(view.updated_at).to.match(RFC_3339);
  expect(view.output, 'the processor output is stored with the run').to.deep.equal({ files_read: 1, total: '1234.50', currency: 'EUR' });
  expect(view.progress).to.include({ percent: 100, message: 'Read invoice-2026-001.pdf' });
  expect(view.progress?.updated_at).to.match(RFC_3339);
  expect(output.in_process_run).to.include({ agent_id: DEMO_AGENT_ID, status: 'succeeded', attempts: 1 });
  expect(output.in_process_run.output).to.deep.equal({ files_read: 0, total: '1234.50', currency: 'EUR' });
}

describe('examples/embedded', function () {
  it('runs as a script: plugs a processor in and prints the run-start result and the succeeded run as JSON', async function () {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', 'examples/embedded/src/main.ts'],
      { cwd: REPO_ROOT, timeout: 15_000 },
    );
    expect(stderr).to.equal('');
    const output = JSON.parse(stdout) as EmbeddedOutput;
    expect(output).to.have.all.keys('run_start', 'run', 'in_process_run');
    expectSucceededRun(output, 'http://127.0.0.1:8080');
    expect(stdout).to.not.match(/svc-[A-Za-z0-9_-]{20,}/, 'the API key must never be printed');
  });

  it('can be called in process, with another base URL', async function () {
    const output = await main({ baseUrl: 'https://svc.example.com' });
    expectSucceededRun(output, 'https://svc.example.com');
  });
});
