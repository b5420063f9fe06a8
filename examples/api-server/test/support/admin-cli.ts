import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { leakScan } from '../../../../tools/test-support/leak-scan.js';
import { REPO_ROOT } from './server-process.js';

/** The built admin CLI, run as a user runs it: `node examples/api-server/dist/admin/main.js` (`pnpm test` builds first). */
export const ADMIN_CLI = 'examples/api-server/dist/admin/main.js';

/** How a command ended, and what it wrote. */
export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command args` from the repository root to its end (killed past `deadlineMs`).
 * @param env - added to this process's environment; a `null` value removes the variable.
 */
export function run(command: string, args: readonly string[], env: Readonly<Record<string, string | null>> = {}, deadlineMs = 60_000): Promise<Ran> {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  const child = spawn(command, args, { cwd: REPO_ROOT, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `svc-server args` (the built CLI; `SVC_CONFIG` unset unless `env` sets it). */
export function admin(args: readonly string[], env: Readonly<Record<string, string | null>> = {}): Promise<Ran> {
  if (!existsSync(join(REPO_ROOT, ADMIN_CLI))) throw new Error(`${ADMIN_CLI} is missing: build first (pnpm exec tsc -b)`);
  return run(process.execPath, [ADMIN_CLI, ...args], { SVC_CONFIG: null, ...env });
}

/**
 * The secret a `create` or `rotate` printed (its last line), checked to appear once, and
 * registered with the leak scan: no server may show it again.
 */
export function secretOf(out: Ran, prefix: 'svc-' | 'svcpt_'): string {
  const secret = out.stdout.trimEnd().split('\n').at(-1) ?? '';
  if (!new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`, 'u').test(secret)) throw new Error(`no ${prefix} secret on the last line of: ${out.stdout}\n${out.stderr}`);
  if (out.stdout.split(secret).length !== 2 || out.stderr.includes(secret)) throw new Error('the secret is printed more than once');
  leakScan.registerCredential(secret, prefix === 'svc-' ? 'API key secret minted by svc-server' : 'OAuth token secret minted by svc-server');
  return secret;
}

/**
 * The command lines of every `sh` block of the README section headed `heading` (up to the
 * next heading of level 1 to 3), `\`-continued lines joined: what a reader pastes, line by line.
 * @throws when README.md has no such section.
 */
export function readmeCommands(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README.md has no section "${heading}"`);
  const rest = readme.slice(start + heading.length + 2);
  const end = rest.search(/\n#{1,3} /u);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/gu)].flatMap((m) => m[1]!.replace(/\\\n\s*/gu, ' ').split('\n').filter((l) => l.trim() !== ''));
}
