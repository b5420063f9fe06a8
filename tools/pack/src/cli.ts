/**
 * Entry point of the pack lifecycle scripts, run from a package directory:
 *
 * ```sh
 * node --import tsx ../../tools/pack/src/cli.ts prepack    # package.json "prepack"
 * node --import tsx ../../tools/pack/src/cli.ts postpack   # package.json "postpack"
 * ```
 *
 * (`guard <dir> <pid> <inode>` is started by `prepack` itself.) See `lifecycle.ts`.
 */
import { guard, postpack, prepack } from './lifecycle.js';

async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  const dir = process.cwd();
  switch (command) {
    case 'prepack': {
      const outcome = prepack(dir, { env: process.env });
      process.stderr.write(outcome === 'rewritten' ? 'package.json is the publish manifest until postpack\n' : 'pnpm applies publishConfig and workspace: versions itself\n');
      return 0;
    }
    case 'postpack':
      postpack(dir);
      return 0;
    case 'guard': {
      const [guardDir, pid, inode] = rest;
      if (guardDir === undefined || pid === undefined || inode === undefined) break;
      await guard(guardDir, Number(pid), Number(inode));
      return 0;
    }
    default:
      break;
  }
  process.stderr.write('usage: cli.ts prepack | postpack\n');
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`);
    process.exitCode = 1;
  },
);
