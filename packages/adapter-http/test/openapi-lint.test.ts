import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { call, startApps, type RunningApps } from './support/harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const CONFIG = join(here, '..', 'redocly.yaml');
// The package's bin, run with this Node (no shell, no npx: nothing is fetched).
const CLI = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/**
 * Loaded into the linter's process before it starts: any socket it opens or host name it
 * looks up is refused and reported on stderr, so the test proves the lint runs offline
 * (telemetry off, no update check, no remote `$ref`).
 */
const OFFLINE_GUARD = `
import net from 'node:net';
import dns from 'node:dns';
const refuse = (what) => { process.stderr.write('NETWORK ATTEMPT: ' + what + '\\n'); throw new Error('network disabled in this test: ' + what); };
net.Socket.prototype.connect = function () { refuse('connect ' + JSON.stringify(arguments[0])); };
dns.lookup = (host) => refuse('lookup ' + host);
dns.promises.lookup = (host) => refuse('lookup ' + host);
`;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function node(args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      // 20 s: the lint takes about 0.5 s here; a hung child must not hang the suite.
      { cwd, timeout: 20_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    );
  });
}

interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number; readonly ignored: number };
  readonly problems: readonly { readonly ruleId: string; readonly severity: string; readonly message: string; readonly location: readonly { readonly pointer: string }[] }[];
}

describe('adapter-http: the served OpenAPI document passes Redocly CLI (recommended ruleset) with 0 errors and 0 warnings', function () {
  let apps: RunningApps;
  let dir: string;
  before(async function () {
    apps = await startApps();
    dir = await mkdtemp(join(tmpdir(), 'svc-openapi-lint-'));
    await writeFile(join(dir, 'offline-guard.mjs'), OFFLINE_GUARD);
  });
  after(async function () {
    await apps?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('lints /openapi.yaml as served, offline', async function () {
    const served = await call(apps.url, 'GET', '/openapi.yaml');
    expect(served.status).to.equal(200);
    await writeFile(join(dir, 'openapi.yaml'), served.text);
    const run = await node(['--import', './offline-guard.mjs', CLI, 'lint', 'openapi.yaml', '--config', CONFIG, '--format', 'json'], dir);
    expect(run.stderr, 'no network use').to.not.include('NETWORK ATTEMPT');
    const report = JSON.parse(run.stdout) as LintReport;
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    expect(problems, 'lint problems').to.deep.equal([]);
    expect(report.totals).to.include({ errors: 0, warnings: 0 });
    expect(run.code, run.stderr).to.equal(0);
  });

  it('the offline guard catches a network attempt (so its silence above means something)', async function () {
    await writeFile(join(dir, 'try-network.mjs'), "await fetch('http://example.com/').catch(() => undefined);\n");
    const run = await node(['--import', './offline-guard.mjs', 'try-network.mjs'], dir);
    expect(run.stderr).to.include('NETWORK ATTEMPT');
  });

  it('reports a broken document (the linter is really run on the file)', async function () {
    await writeFile(join(dir, 'broken.yaml'), 'openapi: 3.1.0\ninfo: {title: x, version: "1"}\npaths:\n  /a:\n    get:\n      responses: {}\n');
    const run = await node(['--import', './offline-guard.mjs', CLI, 'lint', 'broken.yaml', '--config', CONFIG, '--format', 'json'], dir);
    const report = JSON.parse(run.stdout) as LintReport;
    expect(report.totals.errors + report.totals.warnings).to.be.greaterThan(0);
  });
});
