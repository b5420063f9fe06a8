import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { freePort } from '../../../tools/test-support/ports.js';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const KEY = 'svc-agent-runtime-example-key-000000000001';

interface RunView {
  readonly status: string;
  readonly attempts: number;
  readonly failure_reason?: string;
  readonly progress?: { readonly percent?: number; readonly message?: string; readonly updated_at: string };
  readonly output?: unknown;
}

// README "Plug in your agent runtime": the example runs as written (from source here; the
// README's `node examples/agent-runtime/dist/main.js` is the same file built), and its
// processor's progress, output and RunFailedError are what GET /api/v1/runs/{id} shows.
describe('examples/agent-runtime: the API server with a processor plugged in (child process)', function () {
  this.timeout(60_000);
  let dir: string;
  let child: ChildProcess;
  let url: string;
  let stdout = '';

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'svc-agent-runtime-'));
    const [port, egressPort] = [await freePort(), await freePort()];
    url = `http://127.0.0.1:${port}`;
    const config = {
      base_url: url,
      listen: { host: '127.0.0.1', port },
      egress: { url: `http://127.0.0.1:${egressPort}`, listen: { host: '127.0.0.1', port: egressPort } },
      admin_listen: { port: 0 },
      // The runs name made-up file keys: this runtime reads only the request's names and types.
      files: { verify_keys: false },
      accounts: [{ id: 'acct_rt', api_keys: [{ id: 'key_rt', sha256: sha256Hex(KEY) }], agents: [{ id: 'agent_rt' }] }],
    };
    await writeFile(join(dir, 'config.json'), JSON.stringify(config));
    child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'examples/agent-runtime/src/main.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, SVC_CONFIG: join(dir, 'config.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await eventually(() => stdout.includes('svc API with your agent runtime on'), 'the example to listen', 30_000);
  });

  after(async function () {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  async function startRun(body: unknown): Promise<string> {
    const res = await fetch(`${url}/api/v1/agents/agent_rt/run`, { method: 'POST', headers: { 'X-API-Key': KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).to.equal(202);
    return ((await res.json()) as { data: { run_id: string } }).data.run_id;
  }

  async function finalRun(runId: string): Promise<RunView> {
    let run: RunView | undefined;
    await eventually(async () => {
      const res = await fetch(`${url}/api/v1/runs/${runId}`, { headers: { 'X-API-Key': KEY } });
      run = ((await res.json()) as { data: RunView }).data;
      return ['succeeded', 'failed', 'cancelled'].includes(run.status);
    }, `run ${runId} to end`, 20_000);
    return run as RunView;
  }

  it('drives a run to succeeded, its progress and output visible at GET', async function () {
    const runId = await startRun({ files: [{ file_key: 'k1', file_name: 'invoice.pdf', content_type: 'application/pdf' }], message: 'the total' });
    const run = await finalRun(runId);
    expect(run).to.deep.include({ status: 'succeeded', attempts: 1, output: { files_read: 1, answer: 'You asked: the total' } });
    expect(run.progress).to.include({ percent: 100, message: 'Read invoice.pdf' });
  });

  it('fails a run at once with the reason of a RunFailedError', async function () {
    const runId = await startRun({ files: [{ file_key: 'k2', file_name: 'photo.png', content_type: 'image/png' }] });
    expect(await finalRun(runId)).to.deep.include({ status: 'failed', attempts: 1, failure_reason: 'photo.png is not a PDF.' });
  });
});

describe('README "Plug in your agent runtime"', function () {
  it('shows examples/agent-runtime/src/main.ts exactly as it is', async function () {
    const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Plug in your agent runtime'));
    const shown = /```ts\n([\s\S]*?)```/u.exec(section)?.[1];
    expect(shown).to.equal(await readFile(join(REPO_ROOT, 'examples/agent-runtime/src/main.ts'), 'utf8'));
  });
});
