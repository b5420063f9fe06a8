import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { IdempotencyStore, StoredAnswer } from '../ports/idempotency-store.js';
import { eventually } from './eventually.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What the {@link idempotencyStoreContract} needs: a store (its scopes may be shared: each test takes fresh ones). */
export interface IdempotencyStoreHarness {
  readonly store: IdempotencyStore;
  /** Frees keys and clients. */
  close(): Promise<void>;
}

const LONG_MS = 60_000;

/** A scope no other test uses (64 hex characters, like the core's). */
function aScope(): string {
  return `${randomUUID()}${randomUUID()}`.replace(/-/gu, '');
}

/** An answer of a run start, as the HTTP adapter stores it. */
function anAnswer(text = '{"data":{"run_id":"r1"}}'): StoredAnswer {
  return { status: 202, headers: { 'Content-Type': 'application/json; charset=utf-8', Location: 'https://api.example.test/api/v1/runs/r1' }, body: new TextEncoder().encode(text) };
}

/**
 * The behaviour every {@link IdempotencyStore} shares (core `ports/idempotency-store.ts`):
 * one winner among concurrent claims, claims that end with their lease, answers kept byte
 * for byte until their TTL, `complete` and `release` that act only for the claim's token.
 * Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a fresh harness for each test (closed after it).
 * @param runner - the runner to register with ({@link TestRunner}); default mocha's globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function idempotencyStoreContract(name: string, makeHarness: () => Promise<IdempotencyStoreHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'idempotencyStoreContract');
  describe(`IdempotencyStore contract: ${name}`, function () {
    let h: IdempotencyStoreHarness;
    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    it('lets exactly one of 10 concurrent claims of a free key win; the others see it in flight with its fingerprint', async function () {
      const scope = aScope();
      const claims = await Promise.all(Array.from({ length: 10 }, () => h.store.claim(scope, 'fp-1', LONG_MS)));
      assert.equal(claims.filter((c) => c.outcome === 'claimed').length, 1);
      assert.deepEqual(
        claims.filter((c) => c.outcome !== 'claimed'),
        Array.from({ length: 9 }, () => ({ outcome: 'in_flight', fingerprint: 'fp-1' })),
      );
    });

    it('keeps a completed answer byte for byte, and answers it to every later claim', async function () {
      const scope = aScope();
      const claim = await h.store.claim(scope, 'fp-1', LONG_MS);
      assert.ok(claim.outcome === 'claimed');
      const text = '{"data":{"message":"é ✓ \\u0000"}}';
      assert.equal(await h.store.complete(scope, claim.token, anAnswer(text), LONG_MS), true);
      for (const fingerprint of ['fp-1', 'fp-other']) {
        const again = await h.store.claim(scope, fingerprint, LONG_MS);
        assert.ok(again.outcome === 'completed');
        assert.equal(again.fingerprint, 'fp-1');
        assert.equal(again.answer.status, 202);
        assert.deepEqual(again.answer.headers, anAnswer().headers);
        assert.deepEqual(Buffer.from(again.answer.body), Buffer.from(text, 'utf8'));
      }
    });

    it('frees a released key, and ignores a release or completion by a token that does not hold it', async function () {
      const scope = aScope();
      const first = await h.store.claim(scope, 'fp-1', LONG_MS);
      assert.ok(first.outcome === 'claimed');
      await h.store.release(scope, 'not-the-token');
      assert.equal(await h.store.complete(scope, 'not-the-token', anAnswer(), LONG_MS), false);
      assert.deepEqual(await h.store.claim(scope, 'fp-1', LONG_MS), { outcome: 'in_flight', fingerprint: 'fp-1' });
      await h.store.release(scope, first.token);
      const second = await h.store.claim(scope, 'fp-2', LONG_MS);
      assert.equal(second.outcome, 'claimed');
      // The first claim's token no longer holds the key: its late answer is not kept.
      assert.equal(await h.store.complete(scope, first.token, anAnswer(), LONG_MS), false);
      assert.deepEqual(await h.store.claim(scope, 'fp-3', LONG_MS), { outcome: 'in_flight', fingerprint: 'fp-2' });
    });

    it('ends a claim with its lease, and an answer with its TTL (the key is free again)', async function () {
      const scope = aScope();
      assert.equal((await h.store.claim(scope, 'fp-1', 150)).outcome, 'claimed');
      assert.equal((await h.store.claim(scope, 'fp-1', LONG_MS)).outcome, 'in_flight');
      let again: Awaited<ReturnType<IdempotencyStore['claim']>> | undefined;
      await eventually(async () => (again = await h.store.claim(scope, 'fp-1', 150)).outcome === 'claimed', 'the lease to end', 5000);
      assert.ok(again?.outcome === 'claimed');
      assert.equal(await h.store.complete(scope, again.token, anAnswer(), 150), true);
      assert.equal((await h.store.claim(scope, 'fp-1', LONG_MS)).outcome, 'completed');
      await eventually(async () => (await h.store.claim(scope, 'fp-1', LONG_MS)).outcome === 'claimed', 'the answer to expire', 5000);
    });

    it('keeps keys apart: another scope is another key', async function () {
      const [a, b] = [aScope(), aScope()];
      assert.equal((await h.store.claim(a, 'fp-1', LONG_MS)).outcome, 'claimed');
      assert.equal((await h.store.claim(b, 'fp-1', LONG_MS)).outcome, 'claimed');
    });
  });
}
