import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../../tools/consumer/src/run.js';
import { tarballManifest } from '../../../tools/consumer/src/consumer.js';
import { API_KEY, AGENT, SQL_CONNECTION, startApiServer, type ApiServer } from './support/api-server.js';

// What a customer gets: @svc/client and @svc/cli packed with `pnpm pack`, installed with
// plain npm into a project outside the workspace, with no network at all: their
// dependencies are packed from this workspace's node_modules (`npm pack --ignore-scripts`
// of each installed package, the versions the lockfile pins) and `npm install --offline`
// with an empty cache refuses to fetch anything. Then a plain ESM script and the installed
// `svc` call a live server.

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PACKAGES = ['packages/client', 'packages/cli'];

/** The real directory of package `name` as seen from the `node_modules` folder `nodeModules`, and that package's own `node_modules`. */
async function installed(name: string, nodeModules: string): Promise<{ dir: string; nodeModules: string }> {
  const dir = await realpath(join(nodeModules, name));
  // pnpm puts a package's dependencies beside it: .pnpm/<id>/node_modules/{<name>, <its deps>}.
  return { dir, nodeModules: join(dir, ...name.split('/').map(() => '..')) };
}

/**
 * The runtime dependencies of the workspace packages `dirs`, with theirs, as installed:
 * package name → its real directory (one version of each, as the lockfile has them).
 */
async function runtimeDependencies(dirs: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const queue: { name: string; from: string }[] = [];
  const enqueue = (manifest: { dependencies?: Record<string, string> }, from: string): void => {
    for (const name of Object.keys(manifest.dependencies ?? {})) if (!name.startsWith('@svc/')) queue.push({ name, from });
  };
  for (const dir of dirs) enqueue(JSON.parse(await readFile(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }, join(REPO_ROOT, dir, 'node_modules'));
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (found.has(next.name)) continue;
    const pkg = await installed(next.name, next.from);
    found.set(next.name, pkg.dir);
    enqueue(JSON.parse(await readFile(join(pkg.dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }, pkg.nodeModules);
  }
  return found;
}

describe('@svc/client and @svc/cli packed and installed with npm, offline, outside the workspace', function () {
  // Two pnpm packs (each builds first), a few npm packs, one offline npm install.
  this.timeout(300_000);
  let work = '';
  let api: ApiServer | undefined;
  /** The API server being started in `before`: `after` stops it even when `before` failed before it was awaited. */
  let starting: Promise<ApiServer> | undefined;
  const tarballs: string[] = [];

  before(async function () {
    work = await mkdtemp(join(tmpdir(), 'svc-client-tarball-'));
    const packs = join(work, 'packs');
    await mkdir(packs, { recursive: true });
    const packingWorkspace = (async () => {
      // One after the other: each pnpm pack builds first (tsc -b), and the CLI's build includes the client's.
      const packed: string[] = [];
      for (const dir of PACKAGES) {
        const { stdout } = await run('pnpm', ['pack', '--pack-destination', packs], { cwd: join(REPO_ROOT, dir) });
        packed.push(stdout.trim().split('\n').at(-1) ?? '');
      }
      return packed;
    })();
    // The API server starts once those builds are done (its own start builds too: never two
    // builds at once), while the rest is packed and installed (it needs none of it).
    starting = packingWorkspace.then(() => startApiServer());
    starting.catch(() => undefined); // awaited at the end of this hook; a failed pack must not leave its rejection unhandled
    // The installed dependencies at the same time: each npm pack reads one installed
    // package's directory and writes its own tarball.
    const packingDependencies = runtimeDependencies(PACKAGES).then((dependencies) =>
      Promise.all(
        [...dependencies].map(async ([name, dir]) => {
          // --ignore-scripts: an installed package's own prepack would try to build it from sources it does not ship.
          const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', packs, dir], { cwd: work });
          return join(packs, stdout.trim().split('\n').at(-1) ?? `${name}.tgz`);
        }),
      ),
    );
    const [workspaceTarballs, dependencyTarballs] = await Promise.all([packingWorkspace, packingDependencies]);
    tarballs.push(...workspaceTarballs, ...dependencyTarballs);
    const project = join(work, 'project');
    await run('mkdir', ['-p', project], { cwd: work });
    await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'svc-client-customer', version: '0.0.0', private: true, type: 'module' }, null, 2)}\n`);
    // An empty cache of its own: nothing can come from an earlier install either.
    await run('npm', ['install', '--offline', '--cache', join(work, 'npm-cache'), '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], { cwd: project });
    api = await starting;
  });
  after(async function () {
    await (api ?? (await starting?.catch(() => undefined)))?.stop();
    if (work !== '') await rm(work, { recursive: true, force: true });
  });

  it('ship a publishable manifest: no source condition, no workspace: version, the bin', async function () {
    const [client, cli] = await Promise.all(tarballs.slice(0, 2).map((t) => tarballManifest(t)));
    expect(JSON.stringify(client?.['exports'])).not.to.contain('source');
    expect(JSON.stringify(cli?.['dependencies'])).not.to.contain('workspace:');
    expect((cli?.['dependencies'] as Record<string, string>)['@svc/client']).to.equal(client?.['version']);
    expect(cli?.['bin']).to.deep.equal({ svc: './dist/main.js' });
  });

  it('a plain ESM script starts a run, waits for it, writes a row and reads a problem', async function () {
    const project = join(work, 'project');
    await writeFile(
      join(project, 'use.mjs'),
      `import { SvcApiError, SvcClient } from '@svc/client';
const client = new SvcClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY });
const started = await client.startRun(${JSON.stringify(AGENT)}, { message: 'from a customer project' });
const run = await client.waitForRun(started.run_id, { pollIntervalMs: 100, signal: AbortSignal.timeout(20000) });
const row = await client.insertRecord(${JSON.stringify(SQL_CONNECTION)}, { entity: 'dbo.orders', values: { id: 31, sku: 'T-1' } });
let problem;
try { await client.insertRecord(${JSON.stringify(SQL_CONNECTION)}, { entity: 'orders', values: { id: 1 } }); } catch (error) {
  problem = error instanceof SvcApiError ? { status: error.status, code: error.code, path: error.errors[0]?.path } : String(error);
}
console.log(JSON.stringify({ status: run.status, row, problem }));
`,
    );
    const { stdout } = await run(process.execPath, ['use.mjs'], { cwd: project, env: { ...process.env, BASE: api?.base ?? '', KEY: API_KEY } });
    expect(JSON.parse(stdout)).to.deep.equal({ status: 'succeeded', row: { rows_affected: 1 }, problem: { status: 400, code: 'validation_failed', path: '/entity' } });
  });

  it('the installed svc binary answers', async function () {
    const project = join(work, 'project');
    const { stdout } = await run(join(project, 'node_modules', '.bin', 'svc'), ['records', 'insert', SQL_CONNECTION, 'dbo.orders', 'id=32', '--base-url', api?.base ?? '', '--api-key', API_KEY], { cwd: project });
    expect(stdout).to.equal('rows_affected  1\n');
  });
});
