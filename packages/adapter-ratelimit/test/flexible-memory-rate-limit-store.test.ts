import { expect } from 'chai';
import { rateLimitStoreContract } from '@svc/core/testing';
import { FlexibleMemoryRateLimitStore } from '@svc/adapter-ratelimit';

rateLimitStoreContract('FlexibleMemoryRateLimitStore', () =>
  Promise.resolve({ store: new FlexibleMemoryRateLimitStore(), close: () => Promise.resolve() }),
);

describe('FlexibleMemoryRateLimitStore', function () {
  const credential = { key: 'credential:acct:key_1', limit: 600, windowSeconds: 60 };
  const agent = { key: 'agent:acct:agent_demo', limit: 30, windowSeconds: 60 };

  it('charges exactly 30 of 100 concurrent run starts, and the credential exactly 30 times', async function () {
    const store = new FlexibleMemoryRateLimitStore();
    const charges = await Promise.all(Array.from({ length: 100 }, () => store.chargeAll([credential, agent])));
    expect(charges.filter((c) => c.charged)).to.have.length(30);
    expect(charges.filter((c) => !c.charged).every((c) => c.windows[1]?.count === 30)).to.equal(true);
    const next = await store.chargeAll([credential]);
    expect(next.windows[0]?.count, 'credential charged 30 + this request').to.equal(31);
  });

  it('divides every limit by limitDivisor, rounding up, at least 1', async function () {
    const store = new FlexibleMemoryRateLimitStore({ limitDivisor: 4 });
    const charges = await Promise.all(Array.from({ length: 20 }, () => store.chargeAll([agent])));
    expect(charges.filter((c) => c.charged)).to.have.length(8);
    const one = { key: 'agent:acct:tiny', limit: 1, windowSeconds: 60 };
    expect((await store.chargeAll([one])).charged).to.equal(true);
    expect((await store.chargeAll([one])).charged).to.equal(false);
    expect(() => new FlexibleMemoryRateLimitStore({ limitDivisor: 0 })).to.throw(RangeError);
  });
});
