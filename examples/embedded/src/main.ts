/**
 * Runs the embedded demo and prints `{run_start, run}` as JSON on stdout.
 *
 * From the repository root: `node --conditions=source --import tsx examples/embedded/src/main.ts`
 * (or `node examples/embedded/dist/main.js` after `npx tsc -b`).
 */
import { main } from './index.js';

try {
  const output = await main();
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
