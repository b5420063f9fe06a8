import assert from 'node:assert/strict';
import type { RateLimitStore } from '../ports/rate-limit-store.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What the {@link rateLimitStoreContract} needs: a fresh store with its own key space. */
export interface RateLimitStoreHarness {
  readonly store: RateLimitStore;
  /** Frees the store's keys and clients. */
  close(): Promise<void>;
}

/**
 * The behaviour every {@link RateLimitStore} shares (see the port's contract): fixed
 * windows, all-or-none charges across rules, counts after a charge and as found on a
 * refusal, exact counts under concurrency, windows that reset.
 * Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a fresh harness for each test (closed after it).
 * @param runner - the runner to register with: `{ describe, it, beforeEach, afterEach }`
 *   from `node:test`, mocha or another BDD runner ({@link TestRunner}); default mocha's
 *   globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function rateLimitStoreContract(name: string, makeHarness: () => Promise<RateLimitStoreHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'rateLimitStoreContract');
  describe(`RateLimitStore contract: ${name}`, function () {
    let h: RateLimitStoreHarness;
    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    it('charges exactly `limit` requests per window, then refuses with the count as found', async function () {
      const rule = { key: 'agent:contract-a', limit: 3, windowSeconds: 60 };
      const counts: number[] = [];
      for (let i = 0; i < 3; i++) {
        const c = await h.store.chargeAll([rule]);
        assert.equal(c.charged, true);
        counts.push(c.windows[0]?.count ?? -1);
      }
      assert.deepEqual(counts, [1, 2, 3]);
      const refused = await h.store.chargeAll([rule]);
      assert.equal(refused.charged, false);
      assert.equal(refused.windows[0]?.count, 3);
      const msLeft = refused.windows[0]?.msLeft ?? 0;
      assert.ok(msLeft > 0 && msLeft <= 60_000, `msLeft ${msLeft}`);
    });

    it('charges no rule when one rule is full (all or none), answering every window in order', async function () {
      const wide = { key: 'credential:contract-b', limit: 5, windowSeconds: 60 };
      const narrow = { key: 'agent:contract-b', limit: 1, windowSeconds: 60 };
      const first = await h.store.chargeAll([wide, narrow]);
      assert.equal(first.charged, true);
      assert.deepEqual(first.windows.map((w) => w.count), [1, 1]);
      const refused = await h.store.chargeAll([wide, narrow]);
      assert.equal(refused.charged, false);
      assert.deepEqual(refused.windows.map((w) => w.count), [1, 1]);
      const after = await h.store.chargeAll([wide]);
      assert.equal(after.windows[0]?.count, 2, 'the refused request must not have charged the wide rule');
    });

    it('answers a window that is not open as a new one of `windowSeconds`', async function () {
      const c = await h.store.chargeAll([{ key: 'credential:contract-c', limit: 10, windowSeconds: 30 }]);
      const msLeft = c.windows[0]?.msLeft ?? 0;
      assert.ok(msLeft > 29_000 && msLeft <= 30_000, `msLeft ${msLeft}`);
    });

    it('charges exactly `limit` of 100 concurrent requests, on every rule', async function () {
      const wide = { key: 'credential:contract-d', limit: 1000, windowSeconds: 60 };
      const rule = { key: 'agent:contract-d', limit: 30, windowSeconds: 60 };
      const charges = await Promise.all(Array.from({ length: 100 }, () => h.store.chargeAll([wide, rule])));
      assert.equal(charges.filter((c) => c.charged).length, 30);
      const after = await h.store.chargeAll([wide]);
      assert.equal(after.windows[0]?.count, 31, 'the wide rule must be charged exactly by the 30 that passed');
    });

    it('opens a new window once the old one has passed', async function () {
      const rule = { key: 'agent:contract-e', limit: 1, windowSeconds: 1 };
      assert.equal((await h.store.chargeAll([rule])).charged, true);
      assert.equal((await h.store.chargeAll([rule])).charged, false);
      const deadline = Date.now() + 5_000;
      let charged = false;
      while (!charged && Date.now() < deadline) {
        charged = (await h.store.chargeAll([rule])).charged;
        if (!charged) await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(charged, true, 'a new window never opened within 5 s');
    });
  });
}
