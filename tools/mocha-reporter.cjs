// mocha's Spec reporter, plus the closing line CI reads: "N passed, N failed, N skipped".
// Mocha itself sets the exit code from the failures, so a failing run still exits non-zero.
// A test failed by a root afterEach hook after it passed (the leak scan,
// tools/test-support/leak-scan-hooks.ts) is counted once, as failed.
'use strict';
const Mocha = require('mocha');

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const passed = new WeakSet();
    let failedAfterPassing = 0;
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, (test) => passed.add(test));
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test) => {
      if (passed.has(test)) failedAfterPassing += 1;
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
      process.stdout.write(`\n${s.passes - failedAfterPassing} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}
module.exports = SpecWithSummary;
