import { expect } from 'chai';
import { LookupCache } from '../src/lookup-cache.js';

/** A promise and its resolver, to finish a load when the test says so. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('LookupCache', function () {
  it('serves nothing while suspended (as it starts, before the LISTEN connection listens)', async function () {
    const cache = new LookupCache({ maxEntries: 10, ttlMs: 60_000 });
    let loads = 0;
    const load = (): Promise<number> => Promise.resolve((loads += 1));
    expect(await cache.get('k', load)).to.equal(1);
    expect(await cache.get('k', load)).to.equal(2);
    cache.resume();
    expect(await cache.get('k', load)).to.equal(3);
    expect(await cache.get('k', load)).to.equal(3);
    expect(cache.counts()).to.deep.equal({ hits: 1, loads: 3 });
    cache.suspend();
    expect(await cache.get('k', load)).to.equal(4);
  });

  it('keeps misses (undefined) like hits, and forgets everything on invalidate', async function () {
    const cache = new LookupCache({ maxEntries: 10, ttlMs: 60_000 });
    cache.resume();
    const row: { answer?: string } = {};
    const load = (): Promise<string | undefined> => Promise.resolve(row.answer);
    expect(await cache.get('k', load)).to.equal(undefined);
    row.answer = 'now there';
    expect(await cache.get('k', load), 'the miss is cached').to.equal(undefined);
    cache.invalidate();
    expect(await cache.get('k', load)).to.equal('now there');
  });

  it('does not keep the answer of a load that started before a change and ended after it', async function () {
    const cache = new LookupCache({ maxEntries: 10, ttlMs: 60_000 });
    cache.resume();
    const slow = deferred<string>();
    const pending = cache.get('k', () => slow.promise);
    cache.invalidate(); // a change committed (and was notified) while the load ran
    slow.resolve('old');
    expect(await pending).to.equal('old');
    expect(await cache.get('k', () => Promise.resolve('new'))).to.equal('new');
    // Nor one that ran across a loss and recovery of the LISTEN connection.
    const across = deferred<string>();
    const running = cache.get('j', () => across.promise);
    cache.suspend();
    cache.resume();
    across.resolve('old');
    await running;
    expect(await cache.get('j', () => Promise.resolve('new'))).to.equal('new');
  });

  it('holds at most maxEntries (a flood of unknown digests cannot grow it without end)', async function () {
    const cache = new LookupCache({ maxEntries: 3, ttlMs: 60_000 });
    cache.resume();
    for (let i = 0; i < 10; i++) await cache.get(`k${i}`, () => Promise.resolve(i));
    expect(await cache.get('k9', () => Promise.resolve(-1)), 'the newest is kept').to.equal(9);
    expect(await cache.get('k0', () => Promise.resolve(-1)), 'the oldest was evicted').to.equal(-1);
    expect(cache.counts()).to.deep.equal({ hits: 1, loads: 11 });
  });
});
