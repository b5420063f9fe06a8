/** The verdict of a throughput target: a req/s ratio is taken as met only when the CPU a request agrees. */
import { expect } from 'chai';
import { throughputMet } from '../src/report.js';

describe('bench report: throughputMet', function () {
  it('meets a goal when both the req/s ratio and the CPU a request meet it', () => {
    // Run start in memory, 2026-11-28: 0.94× by req/s, 125 / 113 µs a request.
    expect(throughputMet(0.94, 125, 113, 0.9)).to.equal(true);
  });

  it('refuses a req/s ratio the CPU a request contradicts (a baseline measured slow)', () => {
    // Index, 2026-11-28: 0.97× bare Koa by req/s, 38 / 26 µs a request.
    expect(throughputMet(0.97, 38, 26, 0.9)).to.equal(false);
  });

  it('refuses a req/s ratio under the goal whatever the CPU says', () => {
    expect(throughputMet(0.86, 100, 120, 0.9)).to.equal(false);
  });

  it('decides by req/s alone when a CPU figure is missing (off Linux)', () => {
    expect(throughputMet(0.95, undefined, 113, 0.9)).to.equal(true);
    expect(throughputMet(0.95, 125, undefined, 0.9)).to.equal(true);
  });
});
