import { expect } from 'chai';
import { cursorOf, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, parsePageQuery } from '@svc/core';

describe('parsePageQuery and cursorOf (docs/CONTRACT.md "Discovery")', function () {
  it('defaults to 20 items from the start, and reads limit 1..100 as digits or a number', function () {
    expect(parsePageQuery({})).to.deep.equal({ ok: true, value: { limit: DEFAULT_PAGE_LIMIT } });
    expect(parsePageQuery({ limit: '1' })).to.deep.equal({ ok: true, value: { limit: 1 } });
    expect(parsePageQuery({ limit: '100' })).to.deep.equal({ ok: true, value: { limit: MAX_PAGE_LIMIT } });
    expect(parsePageQuery({ limit: 7 })).to.deep.equal({ ok: true, value: { limit: 7 } });
  });

  for (const limit of ['0', '101', '', ' 5', '5.0', '1e1', '-1', '0x10', 'ten', 0, 2.5, 101]) {
    it(`refuses limit ${JSON.stringify(limit)}, naming the parameter`, function () {
      const result = parsePageQuery({ limit });
      expect(result.ok).to.equal(false);
      if (result.ok) return;
      expect(result.error.code).to.equal('validation_failed');
      expect(result.error.detail).to.match(/^query parameter limit: /u);
      expect(result.error.errors).to.deep.equal([{ path: '/limit', message: 'must be a whole number from 1 to 100' }]);
    });
  }

  it('gives back the position a cursor was minted from, and the cursor is URL-safe', function () {
    const cursor = cursorOf('2026-11-24T07:45:00.000Z|0b8f…/run');
    expect(cursor).to.match(/^[A-Za-z0-9_-]+$/u);
    expect(parsePageQuery({ cursor, limit: '3' })).to.deep.equal({ ok: true, value: { limit: 3, after: '2026-11-24T07:45:00.000Z|0b8f…/run' } });
  });

  const forged = Buffer.from(JSON.stringify({ v: 2, after: 'x' })).toString('base64url');
  const notString = Buffer.from(JSON.stringify({ v: 1, after: 5 })).toString('base64url');
  for (const cursor of ['', 'not a cursor', 'e30', forged, notString, 'a'.repeat(600), '%%%']) {
    it(`refuses cursor ${JSON.stringify(cursor.slice(0, 20))}, naming the parameter`, function () {
      const result = parsePageQuery({ cursor });
      expect(result.ok).to.equal(false);
      if (!result.ok) expect(result.error.errors?.[0]?.path).to.equal('/cursor');
    });
  }
});
