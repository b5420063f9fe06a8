import { DependencyUnavailableError } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisRateLimitStore } from '@svc/adapter-ratelimit';
import { startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';

// docs/CONTRACT.md "Dependencies and faults": the limiter decides every request within its
// bound whatever Redis does: from its insurance, or (insurance off) with
// DependencyUnavailableError; and shares limits through Redis again once it is back.
const BOUND_MS = 200;
/** Generous slack over the bound for a loaded 2-core machine; the measured figure is printed. */
const SLACK_MS = 700;
const rule = { key: 'agent:faults', limit: 1000, windowSeconds: 60 };

describe('RedisRateLimitStore when its own redis-server is killed, paused and restarted', function () {
  this.timeout(30_000);
  let server: RedisServer;
  let withInsurance: RedisRateLimitStore;
  let without: RedisRateLimitStore;
  let probe: Redis;
  const slowest: Record<string, number> = {};

  before(async function () {
    server = await startRedisServer();
    withInsurance = await RedisRateLimitStore.connect(server.url, { keyPrefix: 'ins:', commandTimeoutMs: BOUND_MS });
    without = await RedisRateLimitStore.connect(server.url, { keyPrefix: 'strict:', commandTimeoutMs: BOUND_MS, insurance: false });
    probe = new Redis(server.url, { maxRetriesPerRequest: null });
    probe.on('error', () => undefined);
  });

  after(async function () {
    console.log(`      measured (bound ${BOUND_MS} ms): ${JSON.stringify(slowest)}`);
    server?.resume();
    await withInsurance?.close();
    await without?.close();
    probe?.disconnect();
    await server?.stop();
  });

  async function measure(name: string, work: () => Promise<unknown>): Promise<unknown> {
    const started = performance.now();
    const outcome = await work().catch((error: unknown) => error);
    const ms = Math.round(performance.now() - started);
    slowest[name] = Math.max(slowest[name] ?? 0, ms);
    expect(ms, `${name} within the bound + slack`).to.be.at.most(BOUND_MS + SLACK_MS);
    return outcome;
  }

  async function expectFaultHandled(fault: string): Promise<void> {
    const decided = await measure(`${fault}, insurance`, () => withInsurance.chargeAll([rule]));
    expect(decided, 'decided by the insurance').to.include({ charged: true });
    const refused = await measure(`${fault}, no insurance`, () => without.chargeAll([rule]));
    expect(refused).to.be.instanceOf(DependencyUnavailableError);
    expect((refused as DependencyUnavailableError).dependency).to.equal('redis');
  }

  async function expectRedisDecides(): Promise<void> {
    await eventually(async () => (await without.chargeAll([rule]).then(() => true, () => false)), 'the limiter to use Redis again', 5_000, 50);
    const before = Number(await probe.get('ins:agent:faults'));
    await withInsurance.chargeAll([rule]);
    await eventually(async () => Number(await probe.get('ins:agent:faults')) === before + 1, 'the insurance limiter to charge Redis again', 5_000, 50);
  }

  it('killed: decides from the insurance, or rejects with DependencyUnavailableError; restarted: uses Redis again', async function () {
    expect((await withInsurance.chargeAll([rule])).windows[0]?.count).to.equal(1);
    await server.kill();
    await expectFaultHandled('killed');
    await server.restart();
    await expectRedisDecides();
  });

  it('paused (SIGSTOP): the same within the bound; resumed: uses Redis again', async function () {
    server.pause();
    try {
      await expectFaultHandled('paused');
      // Right after a timeout the next requests skip the silent server (printed, not asserted).
      await expectFaultHandled('paused, next request');
    } finally {
      server.resume();
    }
    await expectRedisDecides();
  });
});
