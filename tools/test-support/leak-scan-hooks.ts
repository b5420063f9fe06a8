// Mocha root hook plugin of the leak scan (tools/test-support/leak-scan.ts), loaded for the
// whole mocha run by `.mocharc.json` ("require"): it wraps the global fetch so that every
// response the end-to-end tests read is scanned, fails the test during which a hit was
// recorded, and prints the figures at the end. Outside the end-to-end suite it does
// nothing but look at two fields per test.
import { capturingFetch, LeakError, leakScan, type LeakScan } from './leak-scan.js';

/** The tests whose responses are scanned even with no server process of theirs running (in-process servers). */
export const LEAK_SCAN_SCOPE = /[\\/]examples[\\/]api-server[\\/]test[\\/]/u;

/** How long `afterEach` waits for the bodies still being read before it looks at the hits. */
const SETTLE_MS = 2_000;

/**
 * The root hooks over `registry`: `beforeEach` notes the test (and whether it is in
 * `scope`); `afterEach` fails that test with a {@link LeakError} (through the hook's
 * `error()`, which fails the test itself and lets the run go on, where a throw would
 * abort every test after it) when hits were recorded; `afterAll` reports hits recorded
 * outside any test and prints {@link LeakScan.summary} when anything was scanned (and,
 * with `LEAK_SCAN_VERBOSE=1`, every value registered, masked).
 */
export function leakScanHooks(registry: LeakScan, scope: RegExp = LEAK_SCAN_SCOPE): Mocha.RootHookObject {
  return {
    beforeEach(this: Mocha.Context) {
      const test = this.currentTest;
      registry.enterTest(test?.fullTitle() ?? 'an unnamed test', scope.test(test?.file ?? ''));
    },
    async afterEach(this: Mocha.Context) {
      if (registry.busy) await registry.settle(SETTLE_MS);
      registry.leaveTest();
      if (registry.hasHits) (this.test as Mocha.Hook).error(new LeakError(registry.takeHits()));
    },
    async afterAll() {
      if (registry.busy) await registry.settle(SETTLE_MS);
      const { responses, logLines, values } = registry.figures();
      if (responses + logLines + values > 0) console.log(`\n  ${registry.summary()}`);
      if (process.env['LEAK_SCAN_VERBOSE'] === '1') for (const line of registry.registered()) console.log(`    ${line}`);
      if (registry.hasHits) throw new LeakError(registry.takeHits());
    },
  };
}

/** Mocha calls this once, before the run: the global fetch is wrapped here and nowhere else. */
export function mochaHooks(): Mocha.RootHookObject {
  globalThis.fetch = capturingFetch(leakScan, globalThis.fetch);
  return leakScanHooks(leakScan);
}
