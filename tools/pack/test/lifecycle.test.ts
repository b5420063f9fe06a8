import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, run } from '../../consumer/src/run.js';
import { BACKUP_FILE, guard, PackError, packageManagerOf, postpack, prepack, restore } from '../src/lifecycle.js';

// The prepack/postpack pair of every publishable package, on a package of its own in a
// temporary directory: unit by unit, then through real `npm pack` and `npm publish`.

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const NPM_ENV = { npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js', npm_command: 'pack' };
const PNPM_ENV = { npm_execpath: '/usr/lib/node_modules/pnpm/pnpm', npm_command: 'pack' };
const noGuard = (): void => undefined;

/** A package like the repository's: workspace: dependency, source condition, publishConfig.exports. */
function makePackage(root: string, options: { built?: boolean; withDependency?: boolean } = {}): { dir: string; text: string } {
  const dir = join(root, 'pkg');
  mkdirSync(join(dir, 'src'), { recursive: true });
  const manifest = {
    name: '@fixture/a',
    version: '1.0.0',
    type: 'module',
    exports: { '.': { source: './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' } },
    publishConfig: { exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } },
    files: ['dist'],
    scripts: {
      prepack: `node --import ${TSX} ${CLI} prepack`,
      postpack: `node --import ${TSX} ${CLI} postpack`,
    },
    dependencies: { '@fixture/b': 'workspace:^' },
  };
  // Two-space JSON and a trailing newline, as in the repository; restore must give these bytes back.
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  writeFileSync(join(dir, 'package.json'), text);
  writeFileSync(join(dir, 'src', 'index.ts'), 'export const answer: number = 42;\n');
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', rootDir: 'src', outDir: 'dist', declaration: true, types: [] }, include: ['src'] }),
  );
  if (options.withDependency ?? true) {
    mkdirSync(join(dir, 'node_modules', '@fixture', 'b'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', '@fixture', 'b', 'package.json'), JSON.stringify({ name: '@fixture/b', version: '2.3.4' }));
  }
  if (options.built === true) {
    mkdirSync(join(dir, 'dist'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'index.js'), 'export const answer = 42;\n');
    writeFileSync(join(dir, 'dist', 'index.d.ts'), 'export declare const answer: number;\n');
  }
  return { dir, text };
}

/** Resolves once `check()` holds; fails after `deadlineMs`. */
async function eventually(check: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20)); // polling interval, bounded by the deadline
  }
}

describe('pack lifecycle (tools/pack)', function () {
  this.timeout(60_000);
  let root = '';

  beforeEach(function () {
    root = mkdtempSync(join(tmpdir(), 'svc-pack-'));
  });

  afterEach(function () {
    rmSync(root, { recursive: true, force: true });
  });

  it('tells npm from pnpm by npm_execpath (npm sets its own even when pnpm started it)', function () {
    expect(packageManagerOf(NPM_ENV)).to.equal('npm');
    expect(packageManagerOf(PNPM_ENV)).to.equal('pnpm');
    expect(packageManagerOf({ npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js', npm_config_user_agent: 'pnpm/12.21.0' })).to.equal('npm');
  });

  it('under npm: writes the publish manifest and keeps the original for postpack, which puts it back', function () {
    const { dir, text } = makePackage(root, { built: true });
    expect(prepack(dir, { env: NPM_ENV, build: false, guard: noGuard, log: noGuard })).to.equal('rewritten');
    const packed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(packed['exports']).to.deep.equal({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
    expect(packed['dependencies']).to.deep.equal({ '@fixture/b': '^2.3.4' });
    expect(packed['scripts']).to.deep.equal({});
    expect(readFileSync(join(dir, BACKUP_FILE), 'utf8')).to.equal(text);
    expect(postpack(dir)).to.equal(true);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).to.equal(text);
    expect(existsSync(join(dir, BACKUP_FILE))).to.equal(false);
  });

  it('under pnpm: builds and checks, and leaves package.json to pnpm', function () {
    const { dir, text } = makePackage(root, { built: true });
    expect(prepack(dir, { env: PNPM_ENV, build: false, guard: noGuard, log: noGuard })).to.equal('left to pnpm');
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).to.equal(text);
    expect(existsSync(join(dir, BACKUP_FILE))).to.equal(false);
    expect(postpack(dir)).to.equal(false);
  });

  it('changes nothing when it refuses: export targets missing, workspace package not installed, npm publish', function () {
    const unbuilt = makePackage(join(root, 'unbuilt'));
    expect(() => prepack(unbuilt.dir, { env: NPM_ENV, build: false, guard: noGuard })).to.throw(PackError, /missing files: \.\/dist\/index\.d\.ts, \.\/dist\/index\.js/u);
    const uninstalled = makePackage(join(root, 'uninstalled'), { built: true, withDependency: false });
    expect(() => prepack(uninstalled.dir, { env: NPM_ENV, build: false, guard: noGuard })).to.throw(PackError, /@fixture\/b is not installed/u);
    const published = makePackage(join(root, 'published'), { built: true });
    expect(() => prepack(published.dir, { env: { ...NPM_ENV, npm_command: 'publish' }, build: false, guard: noGuard })).to.throw(PackError, /npm publish the tarball/u);
    for (const { dir, text } of [unbuilt, uninstalled, published]) {
      expect(readFileSync(join(dir, 'package.json'), 'utf8')).to.equal(text);
      expect(existsSync(join(dir, BACKUP_FILE))).to.equal(false);
    }
  });

  it('puts back the original a pack that died left behind, before packing again', function () {
    const { dir, text } = makePackage(root, { built: true });
    writeFileSync(join(dir, BACKUP_FILE), text);
    writeFileSync(join(dir, 'package.json'), '{"name": "@fixture/a", "version": "1.0.0", "left": "by a dead pack"}\n');
    const notes: string[] = [];
    prepack(dir, { env: NPM_ENV, build: false, guard: noGuard, log: (line) => notes.push(line) });
    expect(notes.join('\n')).to.match(/earlier pack that did not finish/u);
    expect(readFileSync(join(dir, BACKUP_FILE), 'utf8')).to.equal(text);
    postpack(dir);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).to.equal(text);
  });

  it('guard: restores when the packing process exits, and leaves another pack’s backup alone', async function () {
    const { dir, text } = makePackage(root, { built: true });
    let inode = -1;
    prepack(dir, { env: NPM_ENV, build: false, guard: (_dir, backupInode) => (inode = backupInode), log: noGuard });
    const packer = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise((resolve) => packer.once('exit', resolve));
    const watching = guard(dir, packer.pid ?? -1, inode, { intervalMs: 10 });
    expect(restore(dir, inode + 1), 'a different inode is not restored').to.equal(false);
    packer.stdin.end();
    await exited;
    expect(await watching).to.equal(true);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).to.equal(text);
    expect(existsSync(join(dir, BACKUP_FILE))).to.equal(false);
  });

  it('guard: stops as soon as postpack has restored', async function () {
    const { dir } = makePackage(root, { built: true });
    let inode = -1;
    prepack(dir, { env: NPM_ENV, build: false, guard: (_dir, backupInode) => (inode = backupInode), log: noGuard });
    postpack(dir);
    expect(await guard(dir, process.pid, inode, { intervalMs: 10 })).to.equal(false);
  });

  it('npm pack: builds, ships real versions and exports without source, and restores package.json byte for byte', async function () {
    const { dir, text } = makePackage(root);
    const out = join(root, 'out');
    mkdirSync(out);
    await run('npm', ['pack', '--pack-destination', out], { cwd: dir });
    const tarball = join(out, 'fixture-a-1.0.0.tgz');
    const { stdout } = await run('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: root });
    const packed = JSON.parse(stdout) as Record<string, unknown>;
    expect(packed['dependencies']).to.deep.equal({ '@fixture/b': '^2.3.4' });
    expect(packed['exports']).to.deep.equal({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
    expect(packed).to.not.have.property('publishConfig');
    const files = (await run('tar', ['-tzf', tarball], { cwd: root })).stdout.split('\n').filter(Boolean).sort();
    expect(files).to.deep.equal(['package/dist/index.d.ts', 'package/dist/index.js', 'package/package.json']);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).to.equal(text);
    expect(existsSync(join(dir, BACKUP_FILE))).to.equal(false);
  });

  it('npm pack that fails after prepack (no such destination): the guard restores package.json', async function () {
    const { dir, text } = makePackage(root);
    const before = statSync(join(dir, 'package.json')).ino;
    const result = await run('npm', ['pack', '--pack-destination', join(root, 'missing', 'dir')], { cwd: dir, env: cleanEnv(), allowFailure: true });
    expect(result.code, 'npm pack fails').to.not.equal(0);
    expect(result.stderr).to.match(/ENOENT/u);
    await eventually(() => !existsSync(join(dir, BACKUP_FILE)) && readFileSync(join(dir, 'package.json'), 'utf8') === text, 'package.json restored');
    expect(statSync(join(dir, 'package.json')).ino, 'the original file itself is back').to.equal(before);
  });

  it('npm publish from the package directory is refused before anything is written', async function () {
    const { dir, text } = makePackage(root);
    const result = await run('npm', ['publish', '--dry-run'], { cwd: dir, allowFailure: true });
    expect(result.code).to.not.equal(0);
    expect(result.stdout + result.stderr).to.match(/npm publish from a package directory/u);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).to.equal(text);
    expect(existsSync(join(dir, BACKUP_FILE))).to.equal(false);
  });
});
