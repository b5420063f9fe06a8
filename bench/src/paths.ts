import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

/**
 * True when the bench runs from its TypeScript sources (`node --import tsx`, mocha):
 * children are then started from source too, with the same loader flags.
 */
export const FROM_SOURCE = here.endsWith('.ts');

/** Root of the repository (this file is `bench/src/paths.ts` or `bench/dist/paths.js`). */
export const REPO_ROOT = resolve(dirname(here), '..', '..');

/** Node flags that run workspace packages from their TypeScript sources. */
export const SOURCE_FLAGS: readonly string[] = ['--conditions=source', '--import', 'tsx'];

/** Where a child process's code comes from. */
export type CodeOrigin = 'source' | 'dist';

/** The origin of this process's own code. */
export const OWN_ORIGIN: CodeOrigin = FROM_SOURCE ? 'source' : 'dist';

/** A Node command line: flags, then the script. */
export interface NodeCommand {
  readonly execArgv: readonly string[];
  readonly script: string;
}

/**
 * The command line of one of the bench's child scripts (`bench/src/children/NAME.ts`),
 * from the same origin as this process.
 */
export function benchChild(name: string): NodeCommand {
  return FROM_SOURCE
    ? { execArgv: SOURCE_FLAGS, script: join(REPO_ROOT, 'bench', 'src', 'children', `${name}.ts`) }
    : { execArgv: [], script: join(REPO_ROOT, 'bench', 'dist', 'children', `${name}.js`) };
}

/**
 * The command line of the API server's process entry point (`examples/api-server`'s
 * `main`), from `origin`: `dist` is what `pnpm start` runs; `source` goes through tsx,
 * whose transpiling adds to the start time and the memory of the process.
 */
export function apiServerMain(origin: CodeOrigin): NodeCommand {
  return origin === 'source'
    ? { execArgv: SOURCE_FLAGS, script: join(REPO_ROOT, 'examples', 'api-server', 'src', 'main.ts') }
    : { execArgv: [], script: join(REPO_ROOT, 'examples', 'api-server', 'dist', 'main.js') };
}
