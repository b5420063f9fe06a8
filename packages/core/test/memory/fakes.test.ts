import { expect } from 'chai';
import { rateLimited, RequestQuota, sha256Hex } from '@svc/core';
import {
  aPrincipal,
  aRun,
  aStoredCredential,
  decide,
  InMemoryCredentialStore,
  InMemoryRateLimiter,
  InMemoryRunQueue,
  InMemoryRunStore,
  ManualClock,
  RandomIdGenerator,
  SequentialIdGenerator,
  UnlimitedRateLimiter,
} from '@svc/core/testing';

describe('in-memory adapters beyond their contracts', function () {
  describe('InMemoryRunQueue', function () {
    it('hands out pending runs first in, first out', async function () {
      const queue = new InMemoryRunQueue(new InMemoryRunStore());
      for (const runId of ['r1', 'r2', 'r3']) await queue.enqueue(aRun({ runId }));
      expect(queue.size).to.equal(3);
      expect([queue.take(), queue.take(), queue.take(), queue.take()]).to.deep.equal(['r1', 'r2', 'r3', undefined]);
    });

    it('wakes a waiting worker when a run is enqueued', async function () {
      const queue = new InMemoryRunQueue(new InMemoryRunStore());
      let woken = false;
      const waiting = queue.whenPending().then(() => {
        woken = true;
      });
      await Promise.resolve();
      expect(woken).to.equal(false);
      await queue.enqueue(aRun());
      await waiting;
      expect(woken).to.equal(true);
      expect(queue.take()).to.equal(aRun().runId);
    });
  });

  describe('InMemoryRunStore bounds', function () {
    const at = (clock: ManualClock) => clock.now();

    it('keeps a finished run for the retention, then answers undefined', async function () {
      const clock = new ManualClock();
      const store = new InMemoryRunStore({ retentionSeconds: 60, clock });
      await store.save(aRun({ runId: 'done', status: 'succeeded', updatedAt: at(clock) }));
      await store.save(aRun({ runId: 'waiting', status: 'queued', updatedAt: at(clock) }));
      clock.advanceSeconds(59);
      expect((await store.get('done'))?.status).to.equal('succeeded');
      clock.advanceSeconds(1);
      expect(await store.get('done')).to.equal(undefined);
      clock.advanceSeconds(365 * 24 * 3600);
      expect((await store.get('waiting'))?.status, 'a run that is not final is never dropped').to.equal('queued');
      expect(store.size).to.equal(1);
    });

    it('past the cap drops the runs that finished first, never one that is not final', async function () {
      const clock = new ManualClock();
      const store = new InMemoryRunStore({ maxFinishedRuns: 3, clock });
      for (let i = 0; i < 5; i++) await store.save(aRun({ runId: `q${i}`, status: 'queued', updatedAt: at(clock) }));
      // q4 finishes first, q0 last: the order of finishing decides, not the order of creation.
      for (const i of [4, 3, 2, 1, 0]) await store.save(aRun({ runId: `q${i}`, status: 'failed', updatedAt: at(clock) }));
      expect(store.all().map((r) => r.runId).sort()).to.deep.equal(['q0', 'q1', 'q2']);
      for (let i = 0; i < 1000; i++) await store.save(aRun({ runId: `live${i}`, status: 'running', updatedAt: at(clock) }));
      expect(store.size).to.equal(1003);
    });

    it('stays within its cap under 100,000 finished runs', async function () {
      const store = new InMemoryRunStore({ maxFinishedRuns: 1000 });
      for (let i = 0; i < 100_000; i++) await store.save(aRun({ runId: `r${i}`, status: 'succeeded', updatedAt: new Date() }));
      expect(store.size).to.equal(1000);
      expect(await store.get('r99999')).to.not.equal(undefined);
      expect(await store.get('r98999')).to.equal(undefined);
    });

    it('lets the queue accept an id again only once the store dropped its run', async function () {
      const store = new InMemoryRunStore({ maxFinishedRuns: 0 });
      const queue = new InMemoryRunQueue(store);
      await queue.enqueue(aRun({ runId: 'r1' }));
      await queue.enqueue(aRun({ runId: 'r1' }));
      expect(queue.take()).to.equal('r1');
      await queue.enqueue(aRun({ runId: 'r1' }));
      expect(queue.size, 'the store still holds the queued run').to.equal(0);
      await store.save(aRun({ runId: 'r1', status: 'succeeded' }));
      expect(store.has('r1')).to.equal(false);
    });
  });

  describe('InMemoryCredentialStore', function () {
    it('finds a credential by its digest in either case, and forgets it once revoked', async function () {
      const store = new InMemoryCredentialStore([aStoredCredential('svc-key', { credentialId: 'key_x' })]);
      expect((await store.findByDigest(sha256Hex('svc-key').toUpperCase()))?.credentialId).to.equal('key_x');
      store.revoke('key_x');
      expect(await store.findByDigest(sha256Hex('svc-key'))).to.equal(undefined);
    });
  });

  describe('InMemoryRateLimiter', function () {
    it('rounds the reset up to whole seconds, never 0 while the window is open', async function () {
      const clock = new ManualClock();
      const limiter = new InMemoryRateLimiter(clock);
      const rule = { key: 'k', limit: 1, windowSeconds: 60 };
      await limiter.consume([rule]);
      clock.advanceSeconds(59.5);
      const refused = await limiter.consume([rule]);
      expect(refused).to.include({ allowed: false, resetSeconds: 1, retryAfterSeconds: 1 });
      expect(refused.resetAt).to.equal(new Date('2026-01-01T00:01:00Z').getTime() / 1000);
    });

    it('keeps counting correctly across sweeps of expired windows', async function () {
      const clock = new ManualClock();
      const limiter = new InMemoryRateLimiter(clock, 2);
      const rule = { key: 'k', limit: 3, windowSeconds: 10 };
      const remaining: number[] = [];
      for (let i = 0; i < 4; i++) remaining.push((await limiter.consume([rule])).remaining);
      clock.advanceSeconds(10);
      for (let i = 0; i < 2; i++) remaining.push((await limiter.consume([rule, { key: `other${i}`, limit: 9, windowSeconds: 1 }])).remaining);
      expect(remaining).to.deep.equal([2, 1, 0, 0, 2, 1]);
    });
  });

  describe('decide', function () {
    it('reports no Retry-After on an allowed decision', function () {
      const d = decide({ key: 'k', limit: 5, windowSeconds: 60 }, { count: 1, endsAt: 60_000 }, 0, true);
      expect(d).to.deep.equal({ allowed: true, limit: 5, remaining: 4, resetSeconds: 60, resetAt: 60, key: 'k' });
    });
  });

  describe('UnlimitedRateLimiter', function () {
    it('allows every request and reports the first rule', async function () {
      const limiter = new UnlimitedRateLimiter();
      const rule = { key: 'credential:k', limit: 1, windowSeconds: 60 };
      for (let i = 0; i < 3; i++) expect(await limiter.consume([rule])).to.include({ allowed: true, remaining: 1, key: 'credential:k' });
    });
  });

  describe('RequestQuota', function () {
    it('keys the windows by credential id and agent id, with the configured limits', function () {
      const quota = new RequestQuota(new UnlimitedRateLimiter(), {
        credential: { limit: 100, windowSeconds: 10 },
        agent: { limit: 5, windowSeconds: 20 },
      });
      expect(quota.credentialRule(aPrincipal({ credentialId: 'c1' }))).to.deep.equal({ key: 'credential:c1', limit: 100, windowSeconds: 10 });
      expect(quota.agentRule('a1')).to.deep.equal({ key: 'agent:a1', limit: 5, windowSeconds: 20 });
    });

    it('explains a refusal: which window, and when to retry', function () {
      const refusal = decide({ key: 'agent:a1', limit: 30, windowSeconds: 60 }, { count: 30, endsAt: 42_000 }, 0, false);
      expect(rateLimited(refusal)).to.deep.equal({
        code: 'rate_limited',
        detail: 'Rate limit exceeded for this agent: 30 requests per window; retry in 42 seconds.',
      });
    });
  });

  describe('identifier generators', function () {
    it('SequentialIdGenerator makes predictable UUID-shaped ids', function () {
      const ids = new SequentialIdGenerator();
      expect([ids.newId(), ids.newId()]).to.deep.equal(['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']);
    });

    it('RandomIdGenerator makes distinct UUID v4 ids', function () {
      const ids = new RandomIdGenerator();
      const made = Array.from({ length: 100 }, () => ids.newId());
      expect(new Set(made).size).to.equal(100);
      for (const id of made) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });
  });

  describe('ManualClock', function () {
    it('stands still until advanced, by fractions of a second too', function () {
      const clock = new ManualClock(new Date('2030-05-06T07:08:09Z'));
      expect(clock.now().toISOString()).to.equal('2030-05-06T07:08:09.000Z');
      clock.advanceSeconds(1.25);
      expect(clock.now().toISOString()).to.equal('2030-05-06T07:08:10.250Z');
    });
  });
});
