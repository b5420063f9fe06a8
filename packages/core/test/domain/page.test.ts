import { expect } from 'chai';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, PageCursors, parsePageLimit } from '@svc/core';

const KEY = 'k'.repeat(32);
const AGENTS_OF_ACME = JSON.stringify(['agents', 'acme']);

describe('parsePageLimit and PageCursors (docs/CONTRACT.md "Discovery", "Isolation between accounts")', function () {
  const cursors = new PageCursors(KEY);

  it('defaults to 20 items, and reads limit 1..100 as digits or a number', function () {
    expect(parsePageLimit(undefined)).to.deep.equal({ ok: true, value: DEFAULT_PAGE_LIMIT });
    expect(parsePageLimit('1')).to.deep.equal({ ok: true, value: 1 });
    expect(parsePageLimit('100')).to.deep.equal({ ok: true, value: MAX_PAGE_LIMIT });
    expect(parsePageLimit(7)).to.deep.equal({ ok: true, value: 7 });
    expect(cursors.read({}, AGENTS_OF_ACME)).to.deep.equal({ ok: true, value: { limit: DEFAULT_PAGE_LIMIT } });
  });

  for (const limit of ['0', '101', '', ' 5', '5.0', '1e1', '-1', '0x10', 'ten', 0, 2.5, 101]) {
    it(`refuses limit ${JSON.stringify(limit)}, naming the parameter`, function () {
      const result = cursors.read({ limit }, AGENTS_OF_ACME);
      expect(result.ok).to.equal(false);
      if (result.ok) return;
      expect(result.error.code).to.equal('validation_failed');
      expect(result.error.detail).to.match(/^query parameter limit: /u);
      expect(result.error.errors).to.deep.equal([{ path: '/limit', message: 'must be a whole number from 1 to 100' }]);
    });
  }

  it('gives back the position a cursor was minted from, for the same binding, and the cursor is URL-safe', function () {
    const cursor = cursors.mint('2026-11-24T07:45:00.000Z|0b8f…/run', AGENTS_OF_ACME);
    expect(cursor).to.match(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/u);
    expect(cursors.read({ cursor, limit: '3' }, AGENTS_OF_ACME)).to.deep.equal({ ok: true, value: { limit: 3, after: '2026-11-24T07:45:00.000Z|0b8f…/run' } });
    expect(new PageCursors(KEY).read({ cursor }, AGENTS_OF_ACME).ok, 'another instance with the same key').to.equal(true);
  });

  it('refuses a cursor of another account, another list or other filters, or signed with another key, all alike', function () {
    const cursor = cursors.mint('agent_1', AGENTS_OF_ACME);
    const answers = [
      cursors.read({ cursor }, JSON.stringify(['agents', 'globex'])),
      cursors.read({ cursor }, JSON.stringify(['connections', 'acme'])),
      cursors.read({ cursor: cursors.mint('x', JSON.stringify(['runs', 'acme', 'agent_1', null])) }, JSON.stringify(['runs', 'acme', 'agent_2', null])),
      new PageCursors('o'.repeat(32)).read({ cursor }, AGENTS_OF_ACME),
    ];
    for (const answer of answers) {
      expect(answer).to.deep.equal({
        ok: false,
        error: {
          code: 'invalid_cursor',
          detail: 'query parameter cursor: is not a cursor of this list; start again without it',
          errors: [{ path: '/cursor', message: 'is not a cursor of this list; start again without it' }],
        },
      });
    }
  });

  const payload = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signedWrong = `${payload({ v: 1, after: 'x' })}.${'A'.repeat(43)}`;
  const good = cursors.mint('agent_1', AGENTS_OF_ACME);
  for (const cursor of ['', 'not a cursor', 'e30', payload({ v: 1, after: 'x' }), signedWrong, `${good}A`, good.slice(0, -1), `${'a'.repeat(600)}.${'A'.repeat(43)}`, '%%%']) {
    it(`refuses cursor ${JSON.stringify(cursor.slice(0, 24))} with invalid_cursor naming the parameter`, function () {
      const result = cursors.read({ cursor }, AGENTS_OF_ACME);
      expect(result.ok).to.equal(false);
      if (!result.ok) expect([result.error.code, result.error.errors?.[0]?.path]).to.deep.equal(['invalid_cursor', '/cursor']);
    });
  }

  it('refuses a signing key shorter than 32 bytes', function () {
    expect(() => new PageCursors('short')).to.throw(RangeError);
  });
});
