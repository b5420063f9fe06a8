/**
 * The four functions of a test runner that a contract suite of `@svc/core/testing`
 * registers its tests with. Typed loosely enough that mocha's globals and `node:test`'s
 * exports both fit as they are (and any runner with the same BDD shape: Jest, Vitest):
 *
 * ```ts
 * import { describe, it, beforeEach, afterEach } from 'node:test';
 * runStoreContract('MyRunStore', makeHarness, { describe, it, beforeEach, afterEach });
 * ```
 *
 * A suite calls them as plain functions (never as methods, never relying on `this`), gives
 * `describe` a synchronous body and `it`, `beforeEach` and `afterEach` bodies that take no
 * argument and return a promise: no `done` callback, no mocha `this.timeout()` or
 * `this.skip()`. A suite that needs a time bound polls with its own deadline.
 * Source: docs/decisions.md "Testing kit".
 */
export interface TestRunner {
  /** Registers a group of tests; `body` registers them synchronously. */
  readonly describe: (name: string, body: () => void) => unknown;
  /** Registers one test; it passes when `body`'s promise resolves. */
  readonly it: (name: string, body: () => Promise<void>) => unknown;
  /** Registers a hook run before each test of the enclosing `describe`. */
  readonly beforeEach: (body: () => Promise<void>) => unknown;
  /** Registers a hook run after each test of the enclosing `describe`, also after a failed one. */
  readonly afterEach: (body: () => Promise<void>) => unknown;
}

/**
 * The runner a contract suite registers with: `runner` when given; else mocha's globals
 * `describe`, `it`, `beforeEach` and `afterEach` when all four exist (a suite called from a
 * mocha test file, as before the runner parameter existed).
 *
 * @param runner - the runner the caller passed, if any.
 * @param suite - the suite's name, for the error (e.g. `runStoreContract`).
 * @param scope - where the globals are looked up; `globalThis` unless a test says otherwise.
 * @throws Error when no runner is given and `scope` holds no mocha globals (e.g. under
 *   `node:test`, which has none), saying what to pass.
 */
export function resolveTestRunner(runner: TestRunner | undefined, suite: string, scope: object = globalThis): TestRunner {
  if (runner !== undefined) return runner;
  const globals = scope as Partial<Record<keyof TestRunner, unknown>>;
  const { describe, it, beforeEach, afterEach } = globals;
  if (typeof describe === 'function' && typeof it === 'function' && typeof beforeEach === 'function' && typeof afterEach === 'function') {
    return { describe, it, beforeEach, afterEach } as TestRunner;
  }
  throw new Error(
    `${suite}: no test runner was given and no mocha globals (describe, it, beforeEach, afterEach) exist. ` +
      `Pass { describe, it, beforeEach, afterEach } from your runner as the last argument, ` +
      `e.g. import { describe, it, beforeEach, afterEach } from 'node:test'.`,
  );
}
