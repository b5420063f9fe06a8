/**
 * A consumer of the published packages, made for real: the publishable packages are packed
 * (`npm pack` or `pnpm pack`, each run in its own directory, as a maintainer would), the
 * tarballs installed with plain npm into a scratch project outside the workspace (made from
 * tools/consumer/fixture/), which is type-checked, compiled and tested with `node:test`.
 * Used by tools/consumer/test/consumer.test.ts.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Manifest } from '../../pack/src/publish-manifest.js';
import { run } from './run.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The consumer project every scratch project is copied from. */
export const FIXTURE = join(ROOT, 'tools', 'consumer', 'fixture');

/** The packages that are published, as directories relative to the root. */
export const PUBLISHABLE: readonly string[] = [
  'packages/core',
  'packages/adapter-email',
  'packages/adapter-http',
  'packages/adapter-mcp',
  'packages/adapter-postgres',
  'packages/adapter-queue',
  'packages/adapter-ratelimit',
  'packages/adapter-sqlserver',
  'packages/adapter-storage',
  'packages/adapter-webhooks',
  'packages/client',
  'packages/cli',
  'examples/api-server',
];

/** Reads a JSON file. */
export function readJson(path: string): Manifest {
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
}

/** The workspace package directories (the globs of pnpm-workspace.yaml: `dir/*` or `dir`). */
export function workspaceDirs(): string[] {
  const globs = readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')
    .split('\n')
    .map((line) => /^\s+-\s+['"]?([^'"\s]+)['"]?\s*$/u.exec(line)?.[1])
    .filter((glob): glob is string => glob !== undefined);
  return globs.flatMap((glob) =>
    glob.endsWith('/*')
      ? readdirSync(join(ROOT, glob.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, glob.slice(0, -2), entry.name, 'package.json')))
          .map((entry) => `${glob.slice(0, -2)}/${entry.name}`)
      : [glob],
  );
}

/** One packed package. */
export interface Packed {
  /** Directory relative to the root. */
  readonly dir: string;
  readonly name: string;
  readonly version: string;
  /** Absolute path of the tarball. */
  readonly tarball: string;
}

/** The file name both npm and pnpm give a tarball: `@svc/core` 0.1.0 → `svc-core-0.1.0.tgz`. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/u, '').replace(/\//gu, '-')}-${version}.tgz`;
}

/** Packs each publishable package with `tool` (run in the package directory) into `destination`. */
export async function packAll(tool: 'npm' | 'pnpm', destination: string): Promise<Packed[]> {
  mkdirSync(destination, { recursive: true });
  const packed: Packed[] = [];
  for (const dir of PUBLISHABLE) {
    const manifest = readJson(join(ROOT, dir, 'package.json'));
    const name = String(manifest['name']);
    const version = String(manifest['version']);
    await run(tool, ['pack', '--pack-destination', destination], { cwd: join(ROOT, dir) });
    const tarball = join(destination, tarballName(name, version));
    if (!existsSync(tarball)) throw new Error(`${tool} pack in ${dir} made no ${relative(ROOT, tarball)}`);
    packed.push({ dir, name, version, tarball });
  }
  return packed;
}

/** The files of a tarball, without the leading `package/`, sorted. */
export async function tarballFiles(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball], { cwd: ROOT });
  return stdout
    .split('\n')
    .filter((line) => line.length > 0 && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//u, ''))
    .sort();
}

/** A text file inside a tarball (`path` without the leading `package/`). */
export async function tarballText(tarball: string, path: string): Promise<string> {
  const { stdout } = await run('tar', ['-xzOf', tarball, `package/${path}`], { cwd: ROOT });
  return stdout;
}

/** The package.json inside a tarball. */
export async function tarballManifest(tarball: string): Promise<Manifest> {
  return JSON.parse(await tarballText(tarball, 'package.json')) as Manifest;
}

/** The first ```ts block of a README: its minimal example. */
export function readmeExample(readme: string): string | undefined {
  return /^```ts\n([\s\S]*?)^```$/mu.exec(readme)?.[1];
}

/** The public entry points of a packed package: `@svc/core`, `@svc/core/testing`, ... */
export function entryPoints(name: string, manifest: Manifest): string[] {
  const exportsValue = manifest['exports'];
  if (typeof exportsValue !== 'object' || exportsValue === null) return [name];
  return Object.keys(exportsValue)
    .filter((key) => key.startsWith('.') && !key.includes('*'))
    .map((key) => (key === '.' ? name : `${name}/${key.slice(2)}`));
}

/**
 * The oldest TypeScript a packed package declares it supports: `peerDependencies.typescript`
 * of the form `>=X.Y` → `X.Y`; undefined when it declares none.
 */
export function typescriptFloor(manifest: Manifest): string | undefined {
  const peers = manifest['peerDependencies'] as Record<string, string> | undefined;
  return /^>=\s*(\d+\.\d+)(?:\.\d+)?$/u.exec(peers?.['typescript'] ?? '')?.[1];
}

/** Compares `X.Y` versions. */
export function compareMinor(a: string, b: string): number {
  const [aMajor = 0, aMinor = 0] = a.split('.').map(Number);
  const [bMajor = 0, bMinor = 0] = b.split('.').map(Number);
  return aMajor - bMajor || aMinor - bMinor;
}

/** The npm alias a scratch project installs TypeScript `X.Y` under (the current one is plain `typescript`). */
export const typescriptAlias = (floor: string): string => `typescript-${floor}`;

/** What a scratch project installs besides the tarballs. */
export interface ScratchOptions {
  /** `dependencies`: package name → tarball path. */
  readonly tarballs: ReadonlyMap<string, string>;
  /** `typescript` version (the current one), or none. */
  readonly typescript?: string;
  /** Older TypeScript minors to install side by side as `typescript-X.Y` (npm aliases). */
  readonly olderTypescripts?: readonly string[];
  /** `@types/node` version. */
  readonly typesNode?: string;
}

/** Copies the fixture to `dir` and writes its package.json with the given dependencies. */
export function createScratch(dir: string, options: ScratchOptions): void {
  cpSync(FIXTURE, dir, { recursive: true, filter: (source) => !/[\\/](node_modules|dist)$/u.test(source) });
  const manifest = readJson(join(FIXTURE, 'package.json'));
  manifest['dependencies'] = Object.fromEntries([...options.tarballs].map(([name, tarball]) => [name, `file:${tarball}`]));
  const dev: Record<string, string> = {};
  if (options.typescript !== undefined) dev['typescript'] = options.typescript;
  for (const floor of options.olderTypescripts ?? []) dev[typescriptAlias(floor)] = `npm:typescript@~${floor}.0`;
  if (options.typesNode !== undefined) dev['@types/node'] = options.typesNode;
  manifest['devDependencies'] = dev;
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * `npm install` in a scratch project: plain npm, no audit or funding requests, and packages
 * npm already has in its cache are not fetched again (`--prefer-offline`).
 */
export async function npmInstall(dir: string): Promise<void> {
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: dir });
}

/**
 * Writes `<dir>/entry-points/<file>.ts`, which imports the types of every entry point given,
 * so that a type-check reads every declaration file those entry points reach.
 */
export function writeEntryPoints(dir: string, file: string, specifiers: readonly string[]): string {
  mkdirSync(join(dir, 'entry-points'), { recursive: true });
  const lines = specifiers.map((specifier, i) => `import type * as e${i} from '${specifier}';`);
  lines.push(`export type EntryPoints = [${specifiers.map((_, i) => `typeof e${i}`).join(', ')}];`, '');
  writeFileSync(join(dir, 'entry-points', `${file}.ts`), lines.join('\n'));
  return `entry-points/${file}.ts`;
}

/** Writes the README example of package `name` to `<dir>/readme-examples/`; returns its path there. */
export function writeReadmeExample(dir: string, name: string, example: string): string {
  mkdirSync(join(dir, 'readme-examples'), { recursive: true });
  const file = `readme-examples/${name.replace(/^@/u, '').replace(/\//gu, '-')}.ts`;
  writeFileSync(join(dir, file), example);
  return file;
}

/**
 * Writes `<dir>/<name>.json`, the fixture's tsconfig.json with `include` replaced and no
 * output, and returns its file name.
 */
export function writeCheckConfig(dir: string, name: string, include: readonly string[]): string {
  const file = `${name}.json`;
  writeFileSync(join(dir, file), `${JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true }, include }, null, 2)}\n`);
  return file;
}

/** Runs `tsc -p <config>` of the TypeScript installed as `typescriptPackage` in `dir`. */
export async function tsc(dir: string, typescriptPackage: string, config: string, extra: readonly string[] = []): Promise<string> {
  const bin = join(dir, 'node_modules', typescriptPackage, 'bin', 'tsc');
  await run(process.execPath, [bin, '-p', config, ...extra], { cwd: dir });
  const { stdout } = await run(process.execPath, [bin, '--version'], { cwd: dir });
  return stdout.trim();
}

/** The compiled test files of a scratch project (`dist/test/**` + `.test.js`), relative to it. */
export function compiledTests(dir: string): string[] {
  const root = join(dir, 'dist', 'test');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.js'))
    .map((file) => join('dist', 'test', file))
    .sort();
}
