// mocha's Spec reporter, plus the closing line CI reads: "N passed, N failed, N skipped".
// Mocha itself sets the exit code from the failures, so a failing run still exits non-zero.
// A test failed by a root afterEach hook after it passed (the leak scan,
// tools/test-support/leak-scan-hooks.ts) is counted once, as failed.
// Before that line it prints the slowest test files (wall time from the first to the last
// event of the file's top-level suites, hooks included) and the slowest tests (mocha's own
// duration, hooks excluded), so the 10-minute budget of the suite can be watched per file.
// SLOWEST=<n> changes how many of each are listed (15 by default, 0 for none).
'use strict';
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_RUN_BEGIN, EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_BEGIN, EVENT_TEST_END } =
  Mocha.Runner.constants;

/** Seconds with one decimal, right-aligned. */
const seconds = (ms) => (ms / 1000).toFixed(1).padStart(7);

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const passed = new WeakSet();
    let failedAfterPassing = 0;
    const listed = Number.parseInt(process.env.SLOWEST ?? '15', 10);
    /** Wall milliseconds per test file. */
    const files = new Map();
    const tests = [];
    const started = new Map();
    let runStart = Date.now();
    const fileOf = (runnable) => path.relative(process.cwd(), runnable.file ?? '(no file)');
    const add = (file, ms) => files.set(file, (files.get(file) ?? 0) + ms);
    runner.once(EVENT_RUN_BEGIN, () => {
      runStart = Date.now();
    });
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.parent?.root) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const at = started.get(suite);
      if (at !== undefined) add(fileOf(suite), Date.now() - at);
    });
    runner.on(EVENT_TEST_BEGIN, (test) => {
      if (test.parent?.root) started.set(test, Date.now());
    });
    runner.on(EVENT_TEST_END, (test) => {
      const at = started.get(test);
      if (at !== undefined) add(fileOf(test), Date.now() - at);
      if (typeof test.duration === 'number') tests.push({ title: `${fileOf(test)}: ${test.fullTitle()}`, ms: test.duration });
    });
    runner.on(EVENT_TEST_PASS, (test) => passed.add(test));
    runner.on(EVENT_TEST_FAIL, (test) => {
      if (passed.has(test)) failedAfterPassing += 1;
    });
    runner.once(EVENT_RUN_END, () => {
      if (listed > 0) {
        const out = process.stdout;
        const total = Date.now() - runStart;
        out.write(`\n  Slowest ${listed} test files (seconds, hooks included; run ${seconds(total).trim()} s):\n`);
        for (const [file, ms] of [...files].sort((a, b) => b[1] - a[1]).slice(0, listed)) out.write(`  ${seconds(ms)}  ${file}\n`);
        out.write(`\n  Slowest ${listed} tests (seconds, hooks excluded):\n`);
        for (const { title, ms } of tests.sort((a, b) => b.ms - a.ms).slice(0, listed)) out.write(`  ${seconds(ms)}  ${title}\n`);
      }
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
      process.stdout.write(`\n${s.passes - failedAfterPassing} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}
module.exports = SpecWithSummary;
