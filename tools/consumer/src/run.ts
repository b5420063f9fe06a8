/**
 * Runs a command to its end and collects its output; a failure names the command, the
 * directory, the exit status and the end of both outputs, so a failing test says which step
 * broke and why.
 */
import { spawn } from 'node:child_process';

/** Output of a command that exited 0. */
export interface RunOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link run}. */
export interface RunOptions {
  readonly cwd: string;
  /** Environment; default {@link cleanEnv}(). */
  readonly env?: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) after this many ms; default 5 minutes. */
  readonly timeoutMs?: number;
  /** Resolve even when the exit code is not 0 (then `code` tells it). */
  readonly allowFailure?: boolean;
}

/** What {@link run} resolves to. */
export interface RunResult extends RunOutput {
  /** Exit code, or null when a signal ended the process. */
  readonly code: number | null;
}

/** A command that did not exit 0. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** Lines shown of each output in a failure. */
const TAIL_LINES = 80;

function tail(text: string): string {
  const lines = text.trimEnd().split('\n');
  return (lines.length > TAIL_LINES ? [`[... ${lines.length - TAIL_LINES} lines before]`, ...lines.slice(-TAIL_LINES)] : lines).join('\n');
}

/**
 * The environment of this process without what a package manager that started it passes
 * down (`npm_*`, `pnpm_*`: under `pnpm test`, npm would otherwise take pnpm's
 * `npm_config_user_agent` as its own) and without `NODE_OPTIONS`.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_)/iu.test(key) || key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Runs `command args` in `options.cwd` (no shell).
 *
 * @throws {@link CommandError} when it exits non-zero (unless `allowFailure`), is killed,
 *   or cannot start.
 */
export function run(command: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const line = [command, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 300_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (error) => reject(new CommandError(`${line} (in ${options.cwd}) did not start: ${error.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0 || (options.allowFailure === true && signal === null)) {
        resolve({ stdout, stderr, code });
        return;
      }
      reject(
        new CommandError(
          `${line}\n  in ${options.cwd}\n  ${signal !== null ? `was killed by ${signal}` : `exited ${String(code)}`}\n` +
            `--- stdout ---\n${tail(stdout)}\n--- stderr ---\n${tail(stderr)}\n---`,
        ),
      );
    });
  });
}
