import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import {
  catalogContract,
  fileStoreContract,
  InMemoryRunStore,
  rateLimitStoreContract,
  recordWriterContract,
  resolveTestRunner,
  runQueueContract,
  runLifecycleContract,
  runStoreContract,
  type TestRunner,
} from '@svc/core/testing';

// The contract suites take the runner's functions (TestRunner), so they run under
// node:test as well as mocha (docs/decisions.md "Testing kit").

const CORE_DIR = fileURLToPath(new URL('../../', import.meta.url));
const NODE_TEST_FILE = fileURLToPath(new URL('../node-test/contracts.node.ts', import.meta.url));

/** What a {@link recordingRunner} saw registered. */
interface Registered {
  readonly suites: string[];
  readonly tests: string[];
  hooks: number;
}

/** A runner that runs nothing: it records the titles of what a suite registers. */
function recordingRunner(): { runner: TestRunner; seen: Registered } {
  const seen: Registered = { suites: [], tests: [], hooks: 0 };
  const runner: TestRunner = {
    describe: (name, body) => {
      seen.suites.push(name);
      body();
    },
    it: (name) => seen.tests.push(name),
    beforeEach: () => (seen.hooks += 1),
    afterEach: () => (seen.hooks += 1),
  };
  return { runner, seen };
}

/** Every test the node:test file registers through the suites (it registers one more itself). */
function testsOfTheNodeFile(): string[] {
  const r = recordingRunner();
  const never = (): Promise<never> => Promise.reject(new Error('a recording runner runs no hook'));
  recordWriterContract('counted', never, r.runner);
  rateLimitStoreContract('counted', never, r.runner);
  runQueueContract('counted', never, r.runner);
  runStoreContract('counted', never, r.runner);
  runLifecycleContract('counted', never, r.runner);
  catalogContract('counted', never, r.runner);
  fileStoreContract('counted', never, r.runner);
  return r.seen.tests;
}

interface NodeTestRun {
  readonly exitCode: number;
  readonly output: string;
  /** The `# name N` summary lines of the TAP reporter. */
  readonly summary: Readonly<Record<string, number>>;
}

/** Runs the node:test file in a child process with the TAP reporter. */
function runNodeTest(env: NodeJS.ProcessEnv = {}): Promise<NodeTestRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', '--test', '--test-reporter=tap', NODE_TEST_FILE],
      { cwd: CORE_DIR, env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(error);
          return;
        }
        const summary: Record<string, number> = {};
        for (const m of stdout.matchAll(/^# (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/gmu)) summary[m[1] as string] = Number(m[2]);
        resolve({ exitCode: error === null ? 0 : Number(error.code), output: `${stdout}\n${stderr}`, summary });
      },
    );
  });
}

describe('contract suites and the test runner', function () {
  describe('resolveTestRunner', function () {
    it("accepts mocha's globals and returns a given runner as it is", function () {
      // Type-checked by tsc -p tsconfig.test.json: mocha's functions fit without a cast.
      const mocha: TestRunner = { describe, it, beforeEach, afterEach };
      expect(resolveTestRunner(mocha, 'x', {})).to.equal(mocha);
    });

    it("falls back to mocha's globals when no runner is given", function () {
      expect(resolveTestRunner(undefined, 'x')).to.deep.equal({ describe, it, beforeEach, afterEach });
    });

    it('throws, naming the suite and what to pass, when there is neither a runner nor all four globals', function () {
      const fn = (): void => undefined;
      for (const scope of [{}, { describe: fn, it: fn, beforeEach: fn }, { describe: fn, it: 'no', beforeEach: fn, afterEach: fn }]) {
        expect(() => resolveTestRunner(undefined, 'runStoreContract', scope)).to.throw(
          Error,
          /^runStoreContract: no test runner was given .* Pass \{ describe, it, beforeEach, afterEach \} from your runner .*'node:test'/u,
        );
      }
    });
  });

  describe('a suite given a runner', function () {
    it('registers through that runner alone: one describe, its tests, one beforeEach and one afterEach', function () {
      const r = recordingRunner();
      runStoreContract('recorded', () => Promise.resolve({ store: new InMemoryRunStore(), close: () => Promise.resolve() }), r.runner);
      expect(r.seen).to.deep.include({ suites: ['RunStore contract: recorded'], hooks: 2 });
      expect(r.seen.tests).to.have.length(16);
      expect(r.seen.tests).to.include('answers undefined for an unknown id');
    });
  });

  describe('under node:test', function () {
    this.timeout(60_000);
    /** The two node:test runs, as is and with a fake broken, both started at once in `before`. */
    let passing: NodeTestRun;
    let broken: NodeTestRun;

    before(async function () {
      [passing, broken] = await Promise.all([runNodeTest(), runNodeTest({ SVC_BREAK_RUN_STORE: '1' })]);
    });

    it('passes every contract test of the in-memory fakes, and reports as many tests as the suites register', function () {
      const expected = testsOfTheNodeFile();
      expect(expected.length).to.be.greaterThan(20);
      const run = passing;
      expect(run.exitCode, run.output).to.equal(0);
      // One more: the node:test file's own check that a suite without a runner throws.
      expect(run.summary, run.output).to.include({ tests: expected.length + 1, pass: expected.length + 1, fail: 0, cancelled: 0, skipped: 0, todo: 0 });
      expect(run.summary['suites']).to.equal(8);
      for (const title of expected) expect(run.output).to.match(new RegExp(`^\\s*ok \\d+ - ${escapeRegExp(title)}$`, 'mu'));
    });

    it('fails, with a non-zero exit, when a fake breaks the contract (the tests really assert under node:test)', function () {
      const run = broken;
      expect(run.exitCode, run.output).to.equal(1);
      expect(run.summary['fail'], run.output).to.be.greaterThan(0);
      expect(run.summary['tests']).to.equal(testsOfTheNodeFile().length + 1);
      expect(run.output).to.match(/^\s*not ok \d+ - applies exactly the moves core canTransition allows, from every status to every status$/mu);
    });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}
