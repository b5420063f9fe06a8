import { expect } from 'chai';
import { createCore } from '@svc/core';
import {
  aConnection,
  ACCOUNT_B,
  aPrincipal,
  InMemoryConnectionCatalog,
  InMemoryRateLimitStore,
  InMemoryRecordWriter,
  ManualClock,
} from '@svc/core/testing';
import { OrderRecorder, ORDERS_TABLE, type Order } from '@svc/example-testing-with-fakes';

/** A valid order; override any member. */
function anOrder(overrides: Partial<Order> = {}): Order {
  return { id: 1, sku: 'A-1', quantity: 3, paid: false, note: null, ...overrides };
}

/**
 * The recorder wired to the core's fakes. The fakes hold state (rows, received commands,
 * rate-limit windows), so tests assert on what happened, not on which calls were made.
 */
function aRecorderOn(connection = aConnection(), limits = { credential: { limit: 600, windowSeconds: 60 }, agent: { limit: 30, windowSeconds: 60 } }) {
  const clock = new ManualClock();
  const writer = new InMemoryRecordWriter();
  writer.defineTable(ORDERS_TABLE, ['id', 'sku', 'qty', 'paid', 'note']);
  const connections = new InMemoryConnectionCatalog([connection]);
  const core = createCore({ connections, recordWriter: writer, clock, rateLimitStore: new InMemoryRateLimitStore(clock) }, { baseUrl: 'https://api.example.com', rateLimits: limits });
  return { clock, writer, recorder: new OrderRecorder(core.insertRecord, connection.connectionId, core.rateLimits) };
}

describe('OrderRecorder (tested against the core fakes)', function () {
  it('inserting an order writes it to the table', async function () {
    const { recorder, writer } = aRecorderOn();
    const result = await recorder.record(aPrincipal(), anOrder({ id: 42, quantity: 5, note: 'leave at the door' }));
    expect(result.ok).to.equal(true);
    expect(writer.rowsOf(ORDERS_TABLE)).to.deep.equal([{ id: 42, sku: 'A-1', qty: 5, paid: false, note: 'leave at the door' }]);
  });

  it('a postgresql connection is refused before the writer is called', async function () {
    const { recorder, writer } = aRecorderOn(aConnection({ type: 'postgresql' }));
    const result = await recorder.record(aPrincipal(), anOrder());
    expect(result.ok).to.equal(false);
    expect(!result.ok && result.error.code).to.equal('writes_not_supported');
    expect(writer.received).to.deep.equal([]);
  });

  it("another account's connection is not found, and nothing is written", async function () {
    const { recorder, writer } = aRecorderOn(aConnection({ accountId: ACCOUNT_B }));
    const result = await recorder.record(aPrincipal(), anOrder());
    expect(!result.ok && result.error.code).to.equal('not_found');
    expect(writer.rowsOf(ORDERS_TABLE)).to.deep.equal([]);
  });

  it('an order the core finds invalid is refused with the path of the bad value', async function () {
    const { recorder, writer } = aRecorderOn();
    const result = await recorder.record(aPrincipal(), anOrder({ quantity: Number.NaN }));
    // A number that cannot be written exactly (docs/CONTRACT.md "Exact values").
    expect(!result.ok && result.error.code).to.equal('invalid_value');
    expect(!result.ok && result.error.errors?.map((e) => e.path)).to.deep.equal(['/values/qty']);
    expect(writer.received).to.deep.equal([]);
  });

  it('a credential over its limit is refused until the window passes (the clock is a fake too)', async function () {
    const { recorder, writer, clock } = aRecorderOn(aConnection(), {
      credential: { limit: 1, windowSeconds: 60 },
      agent: { limit: 30, windowSeconds: 60 },
    });
    expect((await recorder.record(aPrincipal(), anOrder({ id: 1 }))).ok).to.equal(true);
    const refused = await recorder.record(aPrincipal(), anOrder({ id: 2 }));
    expect(!refused.ok && refused.error.code).to.equal('rate_limited');
    clock.advanceSeconds(60);
    expect((await recorder.record(aPrincipal(), anOrder({ id: 2 }))).ok).to.equal(true);
    expect(writer.rowsOf(ORDERS_TABLE)?.map((row) => row['id'])).to.deep.equal([1, 2]);
  });
});
