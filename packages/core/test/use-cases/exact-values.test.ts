import { expect } from 'chai';
import { ExactNumber, MAX_WRITE_PARAMETERS } from '@svc/core';
import { aRecordWrite, aWorld, ORDERS, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

/** `n` columns `c0..c{n-1}` with string values. */
function columns(n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, 'x']));
}

describe('Row writes: exact values and column rules (docs/CONTRACT.md "Exact values")', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  it('passes an ExactNumber to the writer unchanged and keeps it apart from its float neighbour', async function () {
    const qty = new ExactNumber('9007199254740993');
    const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1, qty } }));
    expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
    expect(w.writer.received[0]?.values['qty']).to.equal(qty);
    const update = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'qty', key_value: 9007199254740992, values: { sku: 'x' } }));
    expect(valueOf(update.result)).to.deep.equal({ rows_affected: 0 });
    const exact = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'qty', key_value: new ExactNumber('9007199254740993'), values: { sku: 'y' } }));
    expect(valueOf(exact.result)).to.deep.equal({ rows_affected: 1 });
  });

  it('refuses a number no bigint or decimal(38, s) holds with invalid_value naming the field, before the writer', async function () {
    const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { qty: new ExactNumber('1e400'), id: 1e300, sku: 'a/b' } }));
    const error = errorOf(result);
    expect(error.code).to.equal('invalid_value');
    expect(error.errors?.map((i) => i.path)).to.deep.equal(['/values/qty', '/values/id']);
    expect(error.detail).to.match(/^\/values\/qty: cannot be written exactly/u);
    expect(w.writer.received).to.have.length(0);
  });

  it('refuses a key_value no bigint or decimal(38, s) holds, and NaN from an in-process caller', async function () {
    const key = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: new ExactNumber('1e-39'), values: { sku: 'x' } }));
    expect(errorOf(key.result).errors).to.deep.equal([{ path: '/key_value', message: errorOf(key.result).errors?.[0]?.message }]);
    expect(errorOf(key.result).code).to.equal('invalid_value');
    const nan = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { qty: Number.NaN } }));
    expect(errorOf(nan.result)).to.include({ code: 'invalid_value' });
    expect(errorOf(nan.result).errors).to.deep.equal([{ path: '/values/qty', message: 'must be a finite number' }]);
  });

  it(`accepts ${MAX_WRITE_PARAMETERS} columns in an insert and refuses one more at /values`, async function () {
    w.writer.defineTable('dbo.wide', Object.keys(columns(MAX_WRITE_PARAMETERS + 1)));
    const fits = await w.insertRecord.execute(aRecordWrite({ entity: 'dbo.wide', values: columns(MAX_WRITE_PARAMETERS) }));
    expect(valueOf(fits.result)).to.deep.equal({ rows_affected: 1 });
    for (const n of [MAX_WRITE_PARAMETERS + 1, 2_101]) {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: 'dbo.wide', values: columns(n) }));
      expect(errorOf(result).code).to.equal('validation_failed');
      expect(errorOf(result).errors?.map((i) => i.path)).to.deep.equal(['/values']);
    }
  });

  it('counts key_value as a parameter of an update: one column fewer', async function () {
    w.writer.defineTable('dbo.wide', ['id', ...Object.keys(columns(MAX_WRITE_PARAMETERS))]);
    const fits = await w.updateRecord.execute(aRecordWrite({ entity: 'dbo.wide', key_column: 'id', key_value: 1, values: columns(MAX_WRITE_PARAMETERS - 1) }));
    expect(valueOf(fits.result)).to.deep.equal({ rows_affected: 0 });
    const { result } = await w.updateRecord.execute(aRecordWrite({ entity: 'dbo.wide', key_column: 'id', key_value: 1, values: columns(MAX_WRITE_PARAMETERS) }));
    expect(errorOf(result).errors?.[0]).to.deep.include({ path: '/values' });
    expect(errorOf(result).errors?.[0]?.message).to.include('key_value');
  });

  it('refuses two column names equal case-insensitively with validation_failed naming the second', async function () {
    const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { Qty: 1, sku: 'a', QTY: 2 } }));
    expect(errorOf(result).code).to.equal('validation_failed');
    expect(errorOf(result).errors).to.deep.equal([{ path: '/values/QTY', message: 'names the same column as Qty: column names are compared case-insensitively' }]);
    expect(w.writer.received).to.have.length(0);
  });

  it('writes columns named __proto__, constructor and toString like any other, polluting no prototype', async function () {
    w.writer.defineTable('dbo.odd', ['__proto__', 'constructor', 'toString']);
    const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const name of ['__proto__', 'constructor', 'toString']) {
      Object.defineProperty(values, name, { value: name === '__proto__' ? 'polluted' : 1, enumerable: true });
    }
    const { result } = await w.insertRecord.execute(aRecordWrite({ entity: 'dbo.odd', values }));
    expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
    const row = w.writer.rowsOf('dbo.odd')?.[0] ?? {};
    expect(Object.keys(row)).to.deep.equal(['__proto__', 'constructor', 'toString']);
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).to.equal('polluted');
    const update = await w.updateRecord.execute(aRecordWrite({ entity: 'dbo.odd', key_column: 'toString', key_value: 1, values: JSON.parse('{"__proto__":{"polluted":true}}') as unknown }));
    // An object is no column value: refused, and nothing anywhere gained `polluted`.
    expect(errorOf(update.result).code).to.equal('validation_failed');
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });
});
