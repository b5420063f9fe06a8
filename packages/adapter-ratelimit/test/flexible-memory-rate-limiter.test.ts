import { expect } from 'chai';
import { rateLimiterContract } from '@svc/core/testing';
import { FlexibleMemoryRateLimiter } from '@svc/adapter-ratelimit';

rateLimiterContract('FlexibleMemoryRateLimiter', () =>
  Promise.resolve({ limiter: new FlexibleMemoryRateLimiter(), close: () => Promise.resolve() }),
);

describe('FlexibleMemoryRateLimiter', function () {
  const credential = { key: 'credential:key_1', limit: 600, windowSeconds: 60 };
  const agent = { key: 'agent:agent_demo', limit: 30, windowSeconds: 60 };

  it('allows exactly 30 of 100 concurrent run starts and charges the credential exactly 30 times', async function () {
    const limiter = new FlexibleMemoryRateLimiter();
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume([credential, agent])));
    expect(decisions.filter((d) => d.allowed)).to.have.length(30);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.key === agent.key && d.retryAfterSeconds !== undefined)).to.equal(true);
    const next = await limiter.consume([credential]);
    expect(next.remaining, 'credential charged 30 + this request').to.equal(600 - 31);
  });

  it('divides every limit by limitDivisor, rounding up, at least 1', async function () {
    const limiter = new FlexibleMemoryRateLimiter({ limitDivisor: 4 });
    const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.consume([agent])));
    expect(decisions.filter((d) => d.allowed)).to.have.length(8);
    expect(decisions[0]?.limit).to.equal(8);
    const one = { key: 'agent:tiny', limit: 1, windowSeconds: 60 };
    expect((await limiter.consume([one])).allowed).to.equal(true);
    expect((await limiter.consume([one])).allowed).to.equal(false);
  });

  it('reports the refusing window that resets last, so Retry-After is long enough', async function () {
    const limiter = new FlexibleMemoryRateLimiter();
    const short = { key: 'credential:short', limit: 1, windowSeconds: 5 };
    const long = { key: 'agent:long', limit: 1, windowSeconds: 50 };
    await limiter.consume([short, long]);
    const refused = await limiter.consume([short, long]);
    expect(refused.allowed).to.equal(false);
    expect(refused.key).to.equal(long.key);
    expect(refused.retryAfterSeconds).to.be.within(49, 50);
  });

  it('rejects calls that break the port preconditions with a RangeError', async function () {
    const limiter = new FlexibleMemoryRateLimiter();
    expect(() => limiter.consume([])).to.throw(RangeError);
    expect(() => limiter.consume([agent, agent])).to.throw(RangeError, /twice/);
    expect(() => new FlexibleMemoryRateLimiter({ limitDivisor: 0 })).to.throw(RangeError);
    // A rejected call leaves the limiter usable.
    expect((await limiter.consume([agent])).allowed).to.equal(true);
  });
});
