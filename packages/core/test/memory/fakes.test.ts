import { expect } from 'chai';
import { createCore, rateLimited, sha256Hex, UNMETERED, type Clock, type RateLimitPolicy, type RateLimitSettings } from '@svc/core';
import {
  aPrincipal,
  aRun,
  aStoredCredential,
  InMemoryCredentialStore,
  InMemoryRateLimitStore,
  InMemoryRunQueue,
  InMemoryRunStore,
  ManualClock,
  RandomIdGenerator,
  SequentialIdGenerator,
} from '@svc/core/testing';

/** The rate-limit policy of a core on an in-memory store with `limits` and `clock`. */
function policyOf(limits?: RateLimitSettings, clock: Clock = new ManualClock()): RateLimitPolicy {
  return createCore({ rateLimitStore: new InMemoryRateLimitStore(clock), clock }, { baseUrl: 'http://127.0.0.1:8080', ...(limits !== undefined ? { rateLimits: limits } : {}) }).rateLimits;
}

describe('in-memory adapters beyond their contracts', function () {
  describe('InMemoryRunQueue', function () {
    it('hands out pending runs first in, first out', async function () {
      const queue = new InMemoryRunQueue(new InMemoryRunStore());
      for (const runId of ['r1', 'r2', 'r3']) await queue.enqueue(aRun({ runId }));
      expect(queue.size).to.equal(3);
      expect([queue.take(), queue.take(), queue.take(), queue.take()]).to.deep.equal(['r1', 'r2', 'r3', undefined]);
    });

    it('stays first in, first out across the compaction of taken ids, with interleaved enqueues', async function () {
      const queue = new InMemoryRunQueue(new InMemoryRunStore());
      const taken: string[] = [];
      for (let i = 0; i < 3000; i++) await queue.enqueue(aRun({ runId: `r${i}` }));
      for (let i = 0; i < 2000; i++) taken.push(queue.take() as string);
      for (let i = 3000; i < 3500; i++) await queue.enqueue(aRun({ runId: `r${i}` }));
      expect(queue.size).to.equal(1500);
      for (let id = queue.take(); id !== undefined; id = queue.take()) taken.push(id);
      expect(taken).to.deep.equal(Array.from({ length: 3500 }, (_, i) => `r${i}`));
      expect(queue.size).to.equal(0);
      await queue.enqueue(aRun({ runId: 'after' }));
      expect([queue.take(), queue.take()]).to.deep.equal(['after', undefined]);
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

  describe('InMemoryRateLimitStore', function () {
    it('answers the milliseconds left of the window on the store\'s clock', async function () {
      const clock = new ManualClock();
      const store = new InMemoryRateLimitStore(clock);
      const rule = { key: 'k', limit: 1, windowSeconds: 60 };
      await store.chargeAll([rule]);
      clock.advanceSeconds(59.5);
      expect(await store.chargeAll([rule])).to.deep.equal({ charged: false, windows: [{ count: 1, msLeft: 500 }] });
    });

    it('keeps counting correctly across sweeps of expired windows', async function () {
      const clock = new ManualClock();
      const store = new InMemoryRateLimitStore(clock, 2);
      const rule = { key: 'k', limit: 3, windowSeconds: 10 };
      const counts: number[] = [];
      for (let i = 0; i < 4; i++) counts.push((await store.chargeAll([rule])).windows[0]?.count ?? -1);
      clock.advanceSeconds(10);
      for (let i = 0; i < 2; i++) counts.push((await store.chargeAll([rule, { key: `other${i}`, limit: 9, windowSeconds: 1 }])).windows[0]?.count ?? -1);
      expect(counts).to.deep.equal([1, 2, 3, 3, 1, 2]);
    });

    it('opens no window for a refused request', async function () {
      const clock = new ManualClock();
      const store = new InMemoryRateLimitStore(clock);
      const full = { key: 'full', limit: 1, windowSeconds: 60 };
      const fresh = { key: 'fresh', limit: 5, windowSeconds: 60 };
      await store.chargeAll([full]);
      expect((await store.chargeAll([fresh, full])).charged).to.equal(false);
      clock.advanceSeconds(30);
      const later = await store.chargeAll([fresh]);
      expect(later.windows[0], 'the window opens at its first charge, not at the refusal').to.deep.equal({ count: 1, msLeft: 60_000 });
    });
  });

  describe('RateLimitPolicy', function () {
    it('charges the credential window, and the agent window when named, with the configured limits', async function () {
      const clock = new ManualClock();
      const policy = policyOf({ credential: { limit: 100, windowSeconds: 10 }, agent: { limit: 5, windowSeconds: 20 } }, clock);
      const principal = aPrincipal({ credentialId: 'c1' });
      expect(await policy.decide(principal)).to.include({ allowed: true, limit: 100, remaining: 99, resetSeconds: 10 });
      expect(await policy.decide(principal, 'a1')).to.include({ allowed: true, limit: 5, remaining: 4, resetSeconds: 20, key: `agent:${principal.accountId}:a1` });
    });

    it('refuses limits that are not whole numbers ≥ 1 or windows that are not > 0 seconds', function () {
      expect(() => policyOf({ credential: { limit: 0, windowSeconds: 60 }, agent: { limit: 1, windowSeconds: 60 } })).to.throw(RangeError, /credential/);
      expect(() => policyOf({ credential: { limit: 1, windowSeconds: 60 }, agent: { limit: 1, windowSeconds: 0 } })).to.throw(RangeError, /agent/);
    });

    it('a meter charges once: a second charge is a bug and throws', async function () {
      const meter = policyOf().meterFor(aPrincipal());
      expect(meter.charged).to.equal(false);
      expect(await meter.charge()).to.equal(undefined);
      expect(meter.charged).to.equal(true);
      expect(meter.decision).to.include({ allowed: true, remaining: 599 });
      await meter.charge().then(
        () => expect.fail('a second charge must throw'),
        (error: unknown) => expect(String(error)).to.match(/charged exactly once/),
      );
    });

    it('UNMETERED never refuses and reports no decision', async function () {
      for (let i = 0; i < 3; i++) expect(await UNMETERED.charge('agent')).to.equal(undefined);
      expect(UNMETERED.decision).to.equal(undefined);
    });

    it('explains a refusal: which window, and when to retry', async function () {
      const clock = new ManualClock();
      const policy = policyOf({ credential: { limit: 600, windowSeconds: 60 }, agent: { limit: 1, windowSeconds: 42 } }, clock);
      await policy.decide(aPrincipal(), 'a1');
      const refusal = await policy.decide(aPrincipal(), 'a1');
      expect(rateLimited(refusal)).to.deep.equal({
        code: 'rate_limited',
        detail: 'Rate limit exceeded for this agent: 1 requests per window; retry in 42 seconds.',
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
