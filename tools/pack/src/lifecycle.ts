/**
 * `prepack` and `postpack` of every publishable package (run as
 * `node --import tsx ../../tools/pack/src/cli.ts prepack|postpack` from the package directory).
 *
 * - Under pnpm (`pnpm pack`, `pnpm publish`): builds the package and checks its export targets
 *   exist; pnpm itself replaces `workspace:` and applies `publishConfig` to the manifest it
 *   packs, reading package.json again after `prepack`.
 * - Under npm (`npm pack`): the same build and check, then package.json is replaced on disk
 *   by the publish manifest (`publish-manifest.ts`), because npm 11 packs package.json as it
 *   is on disk after `prepack` and rewrites nothing. The original is kept in
 *   {@link BACKUP_FILE} and put back by `postpack`, or, when npm fails between the two (a
 *   tarball it cannot write, an interrupt), by a detached guard process that waits for npm
 *   to exit. A later `prepack` also puts back a backup it finds.
 * - `npm publish` from a package directory is refused: npm re-reads package.json after
 *   `postpack` and sends that (with `workspace:*`) to the registry as the version's metadata.
 *   Publish a packed tarball (`npm publish ./svc-core-0.1.0.tgz`) or use `pnpm publish`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, linkSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishManifest, targetsOf, type Manifest } from './publish-manifest.js';

/** Where the original package.json waits while npm packs (next to it, never packed: not in `files`). */
export const BACKUP_FILE = 'package.json.pack-backup';

/** The package manager running the script, told by `npm_execpath` (npm sets it to its own CLI even under pnpm). */
export type PackageManager = 'npm' | 'pnpm';

/** A pack refused or failed before anything was written; `message` is for the person packing. */
export class PackError extends Error {
  override readonly name = 'PackError';
}

/** Which package manager runs the lifecycle script. */
export function packageManagerOf(env: NodeJS.ProcessEnv): PackageManager {
  return basename(env['npm_execpath'] ?? '').startsWith('pnpm') ? 'pnpm' : 'npm';
}

function readManifest(path: string): Manifest {
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
}

/** Version of the workspace package `name` as installed (linked by pnpm) in `dir`'s node_modules. */
export function workspaceVersionIn(dir: string): (name: string) => string {
  return (name) => {
    const path = join(dir, 'node_modules', name, 'package.json');
    if (!existsSync(path)) throw new PackError(`${name} is not installed in ${dir}: run pnpm install first`);
    const version = readManifest(path)['version'];
    if (typeof version !== 'string') throw new PackError(`${path} has no version`);
    return version;
  };
}

/** `tsc -b` on the package (and what it references), so the tarball never ships a stale or missing dist. */
export function build(dir: string): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-b', dir], { stdio: 'inherit' });
  if (result.status !== 0) throw new PackError(`tsc -b ${dir} failed (exit ${String(result.status ?? result.signal)})`);
}

/** Fails unless every file the packed `exports` point at exists. */
export function checkTargets(dir: string, manifest: Manifest): void {
  const missing = targetsOf(manifest['exports']).filter((target) => !existsSync(resolve(dir, target)));
  if (missing.length > 0) throw new PackError(`exports point at missing files: ${missing.join(', ')}`);
}

/**
 * Puts the original package.json back if a backup is there (atomically: one rename).
 *
 * @param onlyInode - restore only the backup with this inode (the one a given pack made),
 *   so a guard never restores a later pack's backup.
 * @returns whether a backup was restored.
 */
export function restore(dir: string, onlyInode?: number): boolean {
  const backup = join(dir, BACKUP_FILE);
  try {
    if (onlyInode !== undefined && statSync(backup).ino !== onlyInode) return false;
    renameSync(backup, join(dir, 'package.json'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Options of {@link prepack}. */
export interface PrepackOptions {
  /** Environment of the lifecycle script (`npm_execpath`, `npm_command`). */
  readonly env: NodeJS.ProcessEnv;
  /** Build with `tsc -b` first; default true. */
  readonly build?: boolean;
  /**
   * Starts what restores package.json if the packing process dies before `postpack`
   * (given the backup's inode); default {@link spawnGuard}.
   */
  readonly guard?: (dir: string, backupInode: number) => void;
  /** Where notes go; default stderr. */
  readonly log?: (line: string) => void;
}

/** What {@link prepack} did. */
export type PrepackOutcome = 'rewritten' | 'left to pnpm';

/**
 * The `prepack` step: see the module comment.
 *
 * @throws {@link PackError} or `PublishManifestError` with package.json as it was.
 */
export function prepack(dir: string, options: PrepackOptions): PrepackOutcome {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const manager = packageManagerOf(options.env);
  if (manager === 'npm' && options.env['npm_command'] === 'publish') {
    throw new PackError(
      'npm publish from a package directory would send the repository package.json (workspace:* versions) to the registry: ' +
        'run npm pack here and npm publish the tarball, or use pnpm publish',
    );
  }
  if (restore(dir)) log(`${BACKUP_FILE} was left by an earlier pack that did not finish; package.json is restored from it`);
  const manifestPath = join(dir, 'package.json');
  const original = readFileSync(manifestPath, 'utf8');
  const published = publishManifest(JSON.parse(original) as Manifest, workspaceVersionIn(dir));
  if (options.build ?? true) build(dir);
  checkTargets(dir, published);
  if (manager === 'pnpm') return 'left to pnpm';

  const backup = join(dir, BACKUP_FILE);
  // A second name for the original file (same inode, mode and owner), so that restoring it
  // is one rename; a copy where the file system has no hard links.
  try {
    linkSync(manifestPath, backup);
  } catch {
    writeFileSync(backup, original, { flag: 'wx' });
  }
  try {
    (options.guard ?? spawnGuard)(dir, statSync(backup).ino);
    const next = join(dir, 'package.json.pack-next');
    writeFileSync(next, `${JSON.stringify(published, null, 2)}\n`);
    renameSync(next, manifestPath);
  } catch (error) {
    restore(dir);
    throw error;
  }
  return 'rewritten';
}

/** The `postpack` step: puts the original package.json back (nothing to do under pnpm). */
export function postpack(dir: string): boolean {
  return restore(dir);
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'busybox']);

/** Parent pid and command name of `pid`, from /proc or `ps`; undefined when it is gone. */
function processInfo(pid: number): { ppid: number; name: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    return { ppid, name };
  } catch {
    const ps = spawnSync('ps', ['-o', 'ppid=', '-o', 'comm=', '-p', String(pid)], { encoding: 'utf8' });
    const match = /^\s*(\d+)\s+(.+?)\s*$/u.exec(ps.stdout ?? '');
    return match?.[1] !== undefined && match[2] !== undefined ? { ppid: Number(match[1]), name: basename(match[2]) } : undefined;
  }
}

/** The package manager's pid: the nearest ancestor of this process that is not a shell (`sh -c` runs the script). */
export function packingProcessPid(): number {
  let pid = process.ppid;
  for (let depth = 0; depth < 4; depth += 1) {
    const info = processInfo(pid);
    if (info === undefined || !SHELLS.has(info.name)) return pid;
    pid = info.ppid;
  }
  return pid;
}

/** Starts `cli.ts guard` detached: it outlives this script and watches the packing process. */
export function spawnGuard(dir: string, backupInode: number): void {
  const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, cli, 'guard', dir, String(packingProcessPid()), String(backupInode)], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Options of {@link guard}. */
export interface GuardOptions {
  /** How often the packing process is looked at, ms; default 100. */
  readonly intervalMs?: number;
  /** Longest watch, ms; default 1 hour (then the next `prepack` restores). */
  readonly maxMs?: number;
}

/**
 * Waits until process `pid` has exited or the backup is gone (postpack restored it), then
 * restores the backup with inode `backupInode` if it is still there.
 *
 * @returns whether this guard restored package.json.
 */
export function guard(dir: string, pid: number, backupInode: number, options: GuardOptions = {}): Promise<boolean> {
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + (options.maxMs ?? 3_600_000);
  const backup = join(dir, BACKUP_FILE);
  return new Promise((done) => {
    const look = (): void => {
      if (!existsSync(backup)) return done(false);
      if (!isAlive(pid)) return done(restore(dir, backupInode));
      if (Date.now() > deadline) return done(false);
      setTimeout(look, intervalMs);
    };
    look();
  });
}
