import { createCore, ExactNumber, inProcessPrincipal, requestFingerprint, canonicalJson, isReplayableStatus, parseIdempotencyKey } from '@svc/core';
import { InMemoryIdempotencyStore, ManualClock } from '@svc/core/testing';
import { expect } from 'chai';

describe('Idempotency-Key rules (core)', function () {
  it('fingerprints the body the use case receives: member order and number spelling of one value do not count, types and values do', function () {
    const fp = (body: unknown): string => requestFingerprint('POST', '/p', body);
    expect(fp({ a: 1, b: { c: [1, 'x'] } })).to.equal(fp({ b: { c: [1, 'x'] }, a: 1 }));
    expect(fp({ qty: 1 })).to.equal(fp({ qty: new ExactNumber('1.00') }));
    expect(fp({ qty: 1 })).to.not.equal(fp({ qty: '1' }));
    expect(fp({ qty: new ExactNumber('9007199254740993') })).to.not.equal(fp({ qty: 9007199254740992 }));
    expect(fp(undefined)).to.equal(fp(null));
    expect(requestFingerprint('POST', '/a', {})).to.not.equal(requestFingerprint('POST', '/b', {}));
    expect(canonicalJson({ b: [true, null], a: 'é"' })).to.equal('{"a":"é\\"","b":[true,null]}');
  });

  it('takes 1..255 printable ASCII characters once; stores 2xx and 4xx but 401, 403 and 429', function () {
    expect(parseIdempotencyKey('"quoted form" ok~').ok).to.equal(true);
    for (const bad of ['', 'x'.repeat(256), 'tab\there', 'café']) expect(parseIdempotencyKey(bad).ok, JSON.stringify(bad)).to.equal(false);
    expect(parseIdempotencyKey('a', true).ok).to.equal(false);
    expect([200, 201, 202, 400, 404, 409, 422].every(isReplayableStatus)).to.equal(true);
    expect([401, 403, 429, 500, 502, 503, 504, 302].some(isReplayableStatus)).to.equal(false);
  });

  it('claims, replays, refuses a reuse and an in-flight key, and frees the key of an answer it does not keep (createCore, in memory, ManualClock)', async function () {
    const clock = new ManualClock();
    const core = createCore({ clock, idempotency: new InMemoryIdempotencyStore({ clock }) }, { baseUrl: 'https://api.example.test', idempotency: { leaseMs: 1000 } });
    const input = { principal: inProcessPrincipal('acme'), key: 'k1', method: 'POST', path: '/p', body: { a: 1 } };
    const first = await core.claimIdempotencyKey.execute(input);
    if (!first.ok || first.value.kind !== 'claimed') throw new Error('expected a claim');
    const inUse = await core.claimIdempotencyKey.execute(input);
    expect(inUse.ok === false && [inUse.error.code, inUse.error.retryAfterSeconds]).to.deep.equal(['idempotency_key_in_use', 1]);
    const reused = await core.claimIdempotencyKey.execute({ ...input, body: { a: 2 } });
    expect(reused.ok === false && reused.error.code).to.equal('idempotency_key_reused');
    const other = await core.claimIdempotencyKey.execute({ ...input, principal: inProcessPrincipal('other') });
    expect(other.ok && other.value.kind).to.equal('claimed');
    expect(await first.value.claim.finish({ status: 503, headers: {}, body: new Uint8Array() })).to.equal('released');
    const again = await core.claimIdempotencyKey.execute(input);
    if (!again.ok || again.value.kind !== 'claimed') throw new Error('expected a claim after a 503');
    expect(await again.value.claim.finish({ status: 201, headers: { 'Content-Type': 'application/json' }, body: Buffer.from('{}') })).to.equal('stored');
    const replay = await core.claimIdempotencyKey.execute(input);
    expect(replay.ok && replay.value.kind).to.equal('replay');
    clock.advanceMs(24 * 60 * 60 * 1000 + 1);
    const expired = await core.claimIdempotencyKey.execute(input);
    expect(expired.ok && expired.value.kind).to.equal('claimed');
    expect((await core.claimIdempotencyKey.execute({ ...input, key: undefined })).ok).to.equal(true);
  });

  it('the in-memory store holds at most maxEntries keys, the oldest going first', async function () {
    const store = new InMemoryIdempotencyStore({ maxEntries: 3 });
    for (const scope of ['a', 'b', 'c', 'd']) await store.claim(scope, 'fp', 60_000);
    expect(store.size).to.equal(3);
    expect((await store.claim('a', 'fp', 60_000)).outcome).to.equal('claimed');
    expect((await store.claim('d', 'fp', 60_000)).outcome).to.equal('in_flight');
  });
});
