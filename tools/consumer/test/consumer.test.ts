import { expect } from 'chai';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKUP_FILE } from '../../pack/src/lifecycle.js';
import { conditionsOf, DEVELOPMENT_CONDITION, publishProblems, targetsOf, type Manifest } from '../../pack/src/publish-manifest.js';
import {
  compareMinor,
  compiledTests,
  createScratch,
  entryPoints,
  npmInstall,
  packAll,
  PUBLISHABLE,
  readJson,
  readmeExample,
  ROOT,
  tarballFiles,
  tarballName,
  tarballManifest,
  tarballText,
  tsc,
  typescriptAlias,
  typescriptFloor,
  workspaceDirs,
  writeCheckConfig,
  writeEntryPoints,
  writeReadmeExample,
  type Packed,
} from '../src/consumer.js';
import { cleanEnv, run } from '../src/run.js';

// Packaging can't rot: every publishable package is packed as a maintainer would (npm pack
// and pnpm pack in its directory), installed with plain npm into a project outside the
// workspace (tools/consumer/fixture/), type-checked under strict settings with the oldest
// TypeScript each package declares (peerDependencies.typescript) and the current one, and
// the project's own node:test tests run against the installed dist/.

const rootManifest = readJson(join(ROOT, 'package.json'));
const CURRENT_TS = String((rootManifest['devDependencies'] as Record<string, string>)['typescript']);
const TYPES_NODE = String(readJson(join(ROOT, 'node_modules', '@types', 'node', 'package.json'))['version']);
const NODE_ENGINE = (rootManifest['engines'] as Record<string, string>)['node'];
const repoManifests = new Map(PUBLISHABLE.map((dir) => [dir, readJson(join(ROOT, dir, 'package.json'))]));
/** Oldest TypeScript of each package (as the repository declares it), e.g. core → 5.3. */
const floors = new Map(PUBLISHABLE.map((dir) => [dir, typescriptFloor(repoManifests.get(dir) ?? {}) ?? '']));
const distinctFloors = [...new Set(floors.values())].filter((floor) => floor !== '').sort(compareMinor);
/** The oldest TypeScript every package supports: the consumer itself is type-checked with it. */
const familyFloor = distinctFloors.at(-1) ?? CURRENT_TS;
const lowerFloors = distinctFloors.slice(0, -1);

/**
 * What {@link packAll} does (each publishable package packed with `tool` in its directory,
 * into `destination`, in PUBLISHABLE order), `width` packages at a time: a pack touches only
 * its own directory (npm's prepack rewrites that package.json, its postpack restores it).
 * Every package is built first (`tsc -b`, a no-op after `pnpm test`'s own build), so that
 * the build each prepack runs (`tsc -b` of its package and of those it references) has
 * nothing to write: two packs never write the same dist/ at once.
 */
async function packAllAtOnce(tool: 'npm' | 'pnpm', destination: string, width: number): Promise<Packed[]> {
  await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', ...PUBLISHABLE], { cwd: ROOT });
  mkdirSync(destination, { recursive: true });
  const packed: Packed[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < PUBLISHABLE.length; i = next++) {
      const dir = PUBLISHABLE[i]!;
      const manifest = readJson(join(ROOT, dir, 'package.json'));
      const [name, version] = [String(manifest['name']), String(manifest['version'])];
      await run(tool, ['pack', '--pack-destination', destination], { cwd: join(ROOT, dir) });
      const tarball = join(destination, tarballName(name, version));
      if (!existsSync(tarball)) throw new Error(`${tool} pack in ${dir} made no ${tarball}`);
      packed[i] = { dir, name, version, tarball };
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return packed;
}

/** `# pass N` / `# fail N` of node --test's TAP output. */
function tapCounts(stdout: string): { pass: number; fail: number } {
  const count = (name: string): number => Number(new RegExp(`^# ${name} (\\d+)$`, 'mu').exec(stdout)?.[1] ?? Number.NaN);
  return { pass: count('pass'), fail: count('fail') };
}

describe('a consumer of the packed packages (packed in the workspace, installed with plain npm outside it)', function () {
  // Packing twelve times, two npm installs (the registry or npm's cache), four type-checks.
  this.timeout(15 * 60_000);

  let work = '';
  let scratch = '';
  let npmPacked: Packed[] = [];
  let pnpmPacked: Packed[] = [];
  const repoTexts = new Map<string, string>();
  const timings: string[] = [];
  /** The scratch project of the pnpm tarballs, and its install started in `before` (what it failed with, if it did). */
  let pnpmConsumer = '';
  let pnpmInstalled: Promise<unknown> = Promise.resolve(undefined);

  async function timed<T>(step: string, body: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const value = await body();
    timings.push(`${step} ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return value;
  }

  /** The type-checks started at the end of `before`, by TypeScript version: `tsc --version`'s answer, or what it failed with. */
  const typeChecks = new Map<string, Promise<string | Error>>();
  function startTypeCheck(version: string, typescriptPackage: string, config: string): void {
    typeChecks.set(
      version,
      timed(`tsc ${version}`, () => tsc(scratch, typescriptPackage, config)).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
    );
  }
  /** What the type-check with TypeScript `version` answered; throws what it failed with. */
  async function typeCheck(version: string): Promise<string> {
    const outcome = await typeChecks.get(version);
    if (outcome === undefined) throw new Error(`no type-check with TypeScript ${version} was started`);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  const packedManifest = new Map<string, Manifest>();
  /** README example of each package, as written into the scratch project. */
  const readmeFiles = new Map<string, string>();

  before(async function () {
    work = mkdtempSync(join(tmpdir(), 'svc-consumer-'));
    for (const dir of PUBLISHABLE) repoTexts.set(dir, readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
    // Two at a time: 13 packs one after the other took 25-29 s of this hook.
    npmPacked = await timed(`npm pack ×${PUBLISHABLE.length} (two at a time)`, () => packAllAtOnce('npm', join(work, 'npm'), 2));
    // The pnpm packs run alongside the npm install of the npm tarballs below (never alongside
    // the npm packs: npm's prepack rewrites the package.json a pnpm pack of the same package
    // reads), and so does the install of the pnpm tarballs (for the last test) once they are
    // packed: npm waits on the disk and the network most of the time, and this hook's other
    // steps are mostly one CPU's work; started here they save their whole wall time (pnpm
    // pack 9 s, that install 14-25 s). A pack's failure is this hook's (awaited at its end);
    // the install's is that test's, not this hook's: it is settled here and thrown there.
    pnpmConsumer = join(work, 'consumer-of-pnpm-tarballs');
    const pnpmPacking = timed(`pnpm pack ×${PUBLISHABLE.length} (alongside)`, () => packAll('pnpm', join(work, 'pnpm')));
    pnpmInstalled = pnpmPacking.then(
      (packed) => {
        createScratch(pnpmConsumer, { tarballs: new Map(packed.map((p) => [p.name, p.tarball])), typesNode: TYPES_NODE });
        return timed('npm install (pnpm tarballs, alongside)', () => npmInstall(pnpmConsumer)).then(
          () => undefined,
          (error: unknown) => error,
        );
      },
      (error: unknown) => error,
    );
    for (const packed of npmPacked) packedManifest.set(packed.dir, await tarballManifest(packed.tarball));

    scratch = join(work, 'consumer');
    createScratch(scratch, {
      tarballs: new Map(npmPacked.map((p) => [p.name, p.tarball])),
      typescript: CURRENT_TS,
      olderTypescripts: distinctFloors.filter((floor) => !CURRENT_TS.startsWith(`${floor}.`)),
      typesNode: TYPES_NODE,
    });
    for (const { dir, name, tarball } of npmPacked) {
      const example = readmeExample(await tarballText(tarball, 'README.md'));
      if (example !== undefined) readmeFiles.set(dir, writeReadmeExample(scratch, name, example));
    }
    await timed('npm install', () => npmInstall(scratch));
    // Compiled once (with the current TypeScript) for the node:test runs below.
    await timed('tsc (emit)', () => tsc(scratch, 'typescript', 'tsconfig.json'));
    // The type-checks of the tests below, one tsc each, all at once (no output, each with a
    // configuration and entry-point file of its own): each test awaits its own.
    const current = writeEntryPoints(scratch, 'all', entryPointsUpTo(CURRENT_TS));
    startTypeCheck(CURRENT_TS, 'typescript', writeCheckConfig(scratch, 'tsconfig.check-current', ['src', 'test', current, ...readmeExamplesUpTo(CURRENT_TS)]));
    const family = writeEntryPoints(scratch, `all-${familyFloor}`, entryPointsUpTo(familyFloor));
    startTypeCheck(familyFloor, CURRENT_TS.startsWith(`${familyFloor}.`) ? 'typescript' : typescriptAlias(familyFloor), writeCheckConfig(scratch, `tsconfig.check-${familyFloor}`, ['src', 'test', family, ...readmeExamplesUpTo(familyFloor)]));
    for (const floor of lowerFloors) {
      const file = writeEntryPoints(scratch, `ts${floor}`, entryPointsUpTo(floor));
      startTypeCheck(floor, typescriptAlias(floor), writeCheckConfig(scratch, `tsconfig.check-${floor}`, [file, ...readmeExamplesUpTo(floor)]));
    }
    const packFailed = await pnpmPacking.then(
      (packed) => {
        pnpmPacked = packed;
        return undefined;
      },
      (error: unknown) => error,
    );
    if (packFailed !== undefined) throw packFailed;
  });

  after(async function () {
    await Promise.all([pnpmInstalled, ...typeChecks.values()]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
    if (timings.length > 0) process.stdout.write(`      consumer test steps: ${timings.join(', ')}\n`);
  });

  it('publishes every workspace package that is not private, and nothing else', function () {
    const published = workspaceDirs().filter((dir) => readJson(join(ROOT, dir, 'package.json'))['private'] !== true);
    expect(published.sort()).to.deep.equal([...PUBLISHABLE].sort());
  });

  it('declares the oldest TypeScript of every package as an optional peer dependency (>=X.Y)', function () {
    for (const dir of PUBLISHABLE) expect(floors.get(dir), dir).to.match(/^\d+\.\d+$/u);
  });

  it('leaves the package.json of every package as it was, and no backup behind', function () {
    for (const dir of PUBLISHABLE) {
      expect(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'), dir).to.equal(repoTexts.get(dir));
      expect(existsSync(join(ROOT, dir, BACKUP_FILE)), `${dir}/${BACKUP_FILE}`).to.equal(false);
      // The repository keeps the development condition; only the tarball loses it.
      expect(conditionsOf(repoManifests.get(dir)?.['exports']).has(DEVELOPMENT_CONDITION), dir).to.equal(true);
    }
  });

  it('ships real versions, exports without the source condition, engines and the TypeScript floor', function () {
    const versions = new Map(npmPacked.map((p) => [p.name, p.version]));
    for (const { dir } of npmPacked) {
      const manifest = packedManifest.get(dir) ?? {};
      expect(publishProblems(manifest), dir).to.deep.equal([]);
      expect([...conditionsOf(manifest['exports'])].sort(), dir).to.deep.equal(['default', 'types']);
      expect(manifest['engines'], dir).to.deep.equal({ node: NODE_ENGINE });
      expect(typescriptFloor(manifest), dir).to.equal(floors.get(dir));
      expect(manifest['peerDependenciesMeta'], dir).to.deep.equal({ typescript: { optional: true } });
      expect(manifest['scripts'] ?? {}, dir).to.deep.equal({});
      for (const [name, spec] of Object.entries((manifest['dependencies'] ?? {}) as Record<string, string>)) {
        if (versions.has(name)) expect(spec, `${dir}: ${name}`).to.equal(versions.get(name));
      }
    }
  });

  it('ships dist (JavaScript, declarations, maps), src, README.md and LICENSE, and nothing else', async function () {
    for (const { dir, tarball } of npmPacked) {
      const files = await tarballFiles(tarball);
      const manifest = packedManifest.get(dir) ?? {};
      expect(files, dir).to.include.members(['package.json', 'README.md', 'LICENSE']);
      expect(files, dir).to.include.members(targetsOf(manifest['exports']).map((target) => target.replace(/^\.\//u, '')));
      const listed = ['package.json', 'README.md', 'LICENSE', ...((manifest['files'] ?? []) as string[])];
      const others = files.filter((file) => !listed.includes(file));
      expect(others.filter((file) => !/^dist\/.+\.(js|d\.ts|js\.map|d\.ts\.map)$/u.test(file) && !/^src\/.+\.ts$/u.test(file)), dir).to.deep.equal([]);
      expect(files.filter((file) => file.startsWith('dist/') && file.endsWith('.js')).length, dir).to.be.greaterThan(0);
    }
  });

  it('gets the same manifest and the same files from pnpm pack as from npm pack', async function () {
    for (const [i, byNpm] of npmPacked.entries()) {
      const byPnpm = pnpmPacked[i];
      expect(byPnpm?.name).to.equal(byNpm.name);
      if (byPnpm === undefined) continue;
      expect(await tarballManifest(byPnpm.tarball), byNpm.dir).to.deep.equal(packedManifest.get(byNpm.dir));
      expect(await tarballFiles(byPnpm.tarball), byNpm.dir).to.deep.equal(await tarballFiles(byNpm.tarball));
    }
  });

  /** The packages whose floor is at most `floor`. */
  const packedUpTo = (floor: string): Packed[] => npmPacked.filter(({ dir }) => compareMinor(floors.get(dir) ?? '', floor) <= 0);
  /** Every entry point of the packages whose floor is at most `floor`. */
  const entryPointsUpTo = (floor: string): string[] => packedUpTo(floor).flatMap(({ dir, name }) => entryPoints(name, packedManifest.get(dir) ?? {}));
  /** The README examples of those packages (files of the scratch project). */
  const readmeExamplesUpTo = (floor: string): string[] => packedUpTo(floor).flatMap(({ dir }) => readmeFiles.get(dir) ?? []);

  it('ships a README whose first TypeScript block is an example (type-checked below)', function () {
    expect([...readmeFiles.keys()]).to.deep.equal(npmPacked.map(({ dir }) => dir));
  });

  it(`type-checks the consumer, every entry point and every README example with TypeScript ${CURRENT_TS}`, async function () {
    expect(await typeCheck(CURRENT_TS)).to.equal(`Version ${CURRENT_TS}`);
  });

  it(`type-checks the consumer, every entry point and every README example with TypeScript ${familyFloor}, the oldest every package supports`, async function () {
    expect(await typeCheck(familyFloor)).to.match(new RegExp(`^Version ${familyFloor.replace('.', '\\.')}\\.\\d+$`, 'u'));
  });

  for (const floor of lowerFloors) {
    const packages = PUBLISHABLE.filter((dir) => compareMinor(floors.get(dir) ?? '', floor) <= 0);
    it(`type-checks every entry point and README example of ${packages.join(', ')} with TypeScript ${floor}`, async function () {
      expect(await typeCheck(floor)).to.match(new RegExp(`^Version ${floor.replace('.', '\\.')}\\.\\d+$`, 'u'));
    });
  }

  it('passes the compiled consumer node:test tests against the installed dist/', async function () {
    const tests = compiledTests(scratch);
    expect(tests).to.not.deep.equal([]);
    const { stdout } = await timed('node --test', () => run(process.execPath, ['--test', '--test-reporter=tap', ...tests], { cwd: scratch }));
    const counts = tapCounts(stdout);
    expect(counts.fail, stdout).to.equal(0);
    expect(counts.pass, stdout).to.be.greaterThan(0);
  });

  it('resolves every entry point to dist/ and passes its tests again under --conditions=source', async function () {
    const specifiers = entryPointsUpTo(CURRENT_TS);
    const script = `const out = {}; for (const s of ${JSON.stringify(specifiers)}) { await import(s); out[s] = import.meta.resolve(s); } console.log(JSON.stringify(out));`;
    for (const conditions of [[], ['--conditions=source']]) {
      const { stdout } = await run(process.execPath, [...conditions, '--input-type=module', '-e', script], { cwd: scratch });
      const resolved = JSON.parse(stdout) as Record<string, string>;
      expect(Object.keys(resolved).sort()).to.deep.equal([...specifiers].sort());
      for (const [specifier, url] of Object.entries(resolved)) expect(url, `${conditions.join(' ')} ${specifier}`).to.match(/\/node_modules\/@svc\/[^/]+\/dist\/.+\.js$/u);
    }
    const { stdout } = await run(process.execPath, ['--conditions=source', '--test', '--test-reporter=tap', ...compiledTests(scratch)], { cwd: scratch });
    const counts = tapCounts(stdout);
    expect(counts.fail, stdout).to.equal(0);
    expect(counts.pass, stdout).to.be.greaterThan(0);
  });

  it('installs the pnpm pack tarballs with plain npm, and the compiled consumer passes against them', async function () {
    const tests = compiledTests(scratch);
    expect(tests).to.not.deep.equal([]);
    const other = pnpmConsumer;
    const failed = await pnpmInstalled;
    if (failed !== undefined) throw failed;
    cpSync(join(scratch, 'dist'), join(other, 'dist'), { recursive: true });
    const { stdout } = await run(process.execPath, ['--test', '--test-reporter=tap', ...tests], { cwd: other, env: cleanEnv() });
    const counts = tapCounts(stdout);
    expect(counts.fail, stdout).to.equal(0);
    expect(counts.pass, stdout).to.be.greaterThan(0);
  });
});
