/**
 * Keeps V8's young generation at its initial size while the API server starts, and lets it
 * grow again once the server listens (docs/decisions.md "The young generation while
 * starting"; bench/BENCHMARKS.md "RSS idle after the files, MCP and webhooks features").
 *
 * Why: compiling the ~830 files a server loads keeps most of what it allocates alive, and
 * V8 answers a scavenge that keeps much alive by doubling the semi-spaces, up to 16 MB each.
 * A server that then idles never collects again, so it kept 32 MB of young generation
 * committed with 0.1 MB in use: 114–116 MB of RSS one second after listening instead of
 * 90–92 MB. V8 reads `--semi-space-growth-factor` each time it grows the new space
 * (`SemiSpaceNewSpace::Grow`), so a factor of 1 while starting holds it at its initial
 * size and V8's default factor after the start gives the served load the young generation
 * it would have had.
 *
 * Importing this module sets the factor (a side effect, first import of `main.ts`, so
 * that it runs before the other modules are evaluated); {@link releaseYoungGeneration}
 * restores it. Nothing happens when the process was started with its own
 * `--semi-space-growth-factor` (`node --semi-space-growth-factor=N dist/main.js`; Node
 * refuses it in `NODE_OPTIONS`): an operator's V8 tuning wins.
 */
import { setFlagsFromString } from 'node:v8';

/** The flag this module sets; the name is the same in the V8 of Node 20, 22 and 24. */
const FLAG = '--semi-space-growth-factor';

/** V8's default growth factor (`node --v8-options`: 2 on Node 20, 22 and 24). */
export const V8_DEFAULT_SEMI_SPACE_GROWTH_FACTOR = 2;

/** Whether the operator tuned the young generation's growth on the command line (Node refuses the flag in `NODE_OPTIONS`). */
const tunedByOperator = process.execArgv.some((argument) => argument.startsWith(FLAG) || argument.startsWith('--semi_space_growth_factor'));

let held = false;
if (!tunedByOperator) {
  setFlagsFromString(`${FLAG}=1`);
  held = true;
}

/**
 * Lets the young generation grow again as V8 grows it by default (factor
 * {@link V8_DEFAULT_SEMI_SPACE_GROWTH_FACTOR}). Call once the server listens; later calls,
 * and calls in a process whose operator set the factor, do nothing. Throws nothing.
 */
export function releaseYoungGeneration(): void {
  if (!held) return;
  held = false;
  setFlagsFromString(`${FLAG}=${V8_DEFAULT_SEMI_SPACE_GROWTH_FACTOR}`);
}
