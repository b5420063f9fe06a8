import assert from 'node:assert/strict';
import type { RateLimiter } from '../ports/rate-limiter.js';

/** What the {@link rateLimiterContract} needs: a fresh limiter with its own key space. */
export interface RateLimiterHarness {
  readonly limiter: RateLimiter;
  /** Frees the limiter's keys and clients. */
  close(): Promise<void>;
}

/**
 * The behaviour every {@link RateLimiter} shares: fixed windows, all-or-none charges
 * across rules, the tightest rule reported, exact counts under concurrency, windows
 * that reset. Registers a mocha `describe` block.
 */
export function rateLimiterContract(name: string, makeHarness: () => Promise<RateLimiterHarness>): void {
  describe(`RateLimiter contract: ${name}`, function () {
    let h: RateLimiterHarness;
    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    it('allows exactly `limit` requests per window, then refuses with remaining 0', async function () {
      const rule = { key: 'agent:contract-a', limit: 3, windowSeconds: 60 };
      const remaining: number[] = [];
      for (let i = 0; i < 3; i++) {
        const d = await h.limiter.consume([rule]);
        assert.equal(d.allowed, true);
        remaining.push(d.remaining);
      }
      assert.deepEqual(remaining, [2, 1, 0]);
      const refused = await h.limiter.consume([rule]);
      assert.equal(refused.allowed, false);
      assert.equal(refused.limit, 3);
      assert.equal(refused.remaining, 0);
      assert.ok(refused.resetSeconds >= 1 && refused.resetSeconds <= 60, `reset ${refused.resetSeconds}`);
      assert.ok(refused.retryAfterSeconds !== undefined && refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60);
      const nowSeconds = Date.now() / 1000;
      assert.ok(refused.resetAt >= Math.floor(nowSeconds) && refused.resetAt <= Math.ceil(nowSeconds) + 61, `resetAt ${refused.resetAt}`);
    });

    it('charges no rule when one rule refuses (all or none)', async function () {
      const wide = { key: 'credential:contract-b', limit: 5, windowSeconds: 60 };
      const narrow = { key: 'agent:contract-b', limit: 1, windowSeconds: 60 };
      assert.equal((await h.limiter.consume([wide, narrow])).allowed, true);
      const refused = await h.limiter.consume([wide, narrow]);
      assert.equal(refused.allowed, false);
      assert.equal(refused.key, narrow.key);
      const after = await h.limiter.consume([wide]);
      assert.equal(after.remaining, 3, 'the refused request must not have charged the wide rule');
    });

    it('reports the rule with the fewest requests remaining', async function () {
      const d = await h.limiter.consume([
        { key: 'credential:contract-c', limit: 10, windowSeconds: 60 },
        { key: 'agent:contract-c', limit: 3, windowSeconds: 60 },
      ]);
      assert.equal(d.key, 'agent:contract-c');
      assert.equal(d.limit, 3);
      assert.equal(d.remaining, 2);
    });

    it('allows exactly `limit` of 100 concurrent requests', async function () {
      const rule = { key: 'agent:contract-d', limit: 30, windowSeconds: 60 };
      const decisions = await Promise.all(Array.from({ length: 100 }, () => h.limiter.consume([rule])));
      assert.equal(decisions.filter((d) => d.allowed).length, 30);
    });

    it('opens a new window once the old one has passed', async function () {
      const rule = { key: 'agent:contract-e', limit: 1, windowSeconds: 1 };
      assert.equal((await h.limiter.consume([rule])).allowed, true);
      assert.equal((await h.limiter.consume([rule])).allowed, false);
      const deadline = Date.now() + 5_000;
      let allowed = false;
      while (!allowed && Date.now() < deadline) {
        allowed = (await h.limiter.consume([rule])).allowed;
        if (!allowed) await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(allowed, true, 'a new window never opened within 5 s');
    });
  });
}
