import { expect } from 'chai';
import {
  allowsWrites,
  canTransition,
  checkIdentifierPart,
  formatEntityName,
  isColumnValue,
  parseEgressHeader,
  parseEntityName,
  RUN_STATUSES,
  FINAL_RUN_STATUSES,
  reportedDecision,
  rulesFor,
  validationFailed,
} from '@svc/core';
import { aPrincipal } from '@svc/core/testing';
import { errorOf, valueOf } from '../support/results.js';

describe('domain', function () {
  describe('parseEntityName', function () {
    it('splits schema.table and formats it back unchanged', function () {
      for (const text of ['dbo.t', 'dbo.[x]', 'dbo.my table', 'sales.we]ird', 'é.ü']) {
        expect(formatEntityName(valueOf(parseEntityName(text)))).to.equal(text);
      }
      expect(valueOf(parseEntityName('dbo.[x]'))).to.deep.equal({ schema: 'dbo', table: '[x]' });
    });

    it('refuses what is not exactly two valid parts, naming the rule', function () {
      expect(errorOf(parseEntityName('orders'))).to.match(/two parts/);
      expect(errorOf(parseEntityName('a.b.c'))).to.match(/two parts/);
      expect(errorOf(parseEntityName('.t'))).to.equal('schema part must not be empty');
      expect(errorOf(parseEntityName('dbo.'))).to.equal('table part must not be empty');
      expect(errorOf(parseEntityName(`dbo.${'t'.repeat(129)}`))).to.equal('table part must be at most 128 characters');
      expect(errorOf(parseEntityName('dbo.a\u0007b'))).to.equal('table part must not contain control characters');
    });
  });

  describe('checkIdentifierPart', function () {
    it('allows 1..128 characters, ] and spaces', function () {
      for (const part of ['a', 'x'.repeat(128), 'we]ird', 'my table', '[x]']) expect(valueOf(checkIdentifierPart(part))).to.equal(part);
    });

    it('counts UTF-16 code units, as SQL Server sysname does', function () {
      expect(checkIdentifierPart('😀'.repeat(64)).ok).to.equal(true);
      expect(checkIdentifierPart('😀'.repeat(65)).ok).to.equal(false);
    });

    it('refuses empty, too long, dotted and control-character parts', function () {
      for (const part of ['', 'x'.repeat(129), 'a.b', 'a\u0000', '\u001f', '\u007f', '\u0085']) {
        expect(checkIdentifierPart(part).ok, JSON.stringify(part)).to.equal(false);
      }
    });
  });

  describe('isColumnValue', function () {
    it('accepts string, finite number, boolean and null only', function () {
      for (const v of ['', 'x', 0, -1.5, true, false, null]) expect(isColumnValue(v), String(v)).to.equal(true);
      for (const v of [undefined, {}, [], Number.NaN, Number.POSITIVE_INFINITY, 1n]) expect(isColumnValue(v), String(v)).to.equal(false);
    });
  });

  describe('allowsWrites', function () {
    it('allows sqlserver only', function () {
      expect(allowsWrites('sqlserver')).to.equal(true);
      for (const type of ['postgresql', 'mysql', 'SQLSERVER', '']) expect(allowsWrites(type), type).to.equal(false);
    });
  });

  describe('parseEgressHeader', function () {
    it('reads true and false in any case, absent as default', function () {
      expect(valueOf(parseEgressHeader(undefined))).to.equal('default');
      expect(valueOf(parseEgressHeader('true'))).to.equal('egress');
      expect(valueOf(parseEgressHeader(' TRUE '))).to.equal('egress');
      expect(valueOf(parseEgressHeader('False'))).to.equal('default');
    });

    it('refuses anything else with invalid_header', function () {
      for (const header of ['', '1', 'yes', 'on', 'true,true']) {
        expect(errorOf(parseEgressHeader(header)).code, JSON.stringify(header)).to.equal('invalid_header');
      }
    });
  });

  describe('run status transitions', function () {
    it('leaves no final status', function () {
      for (const from of FINAL_RUN_STATUSES) for (const to of RUN_STATUSES) expect(canTransition(from, to), `${from} → ${to}`).to.equal(false);
    });

    it('moves a queued run to running or cancelled, and a running one to an end or back to queued', function () {
      expect(canTransition('queued', 'running')).to.equal(true);
      expect(canTransition('queued', 'cancelled')).to.equal(true);
      expect(canTransition('queued', 'succeeded')).to.equal(false);
      for (const to of ['succeeded', 'failed', 'cancelled', 'queued'] as const) expect(canTransition('running', to), to).to.equal(true);
    });
  });

  describe('reportedDecision', function () {
    const rule = (key: string, limit = 10, windowSeconds = 60) => ({ key, limit, windowSeconds });

    it('allowed: reports the window with the fewest requests remaining', function () {
      const d = reportedDecision([rule('a'), rule('b'), rule('c')], [{ count: 1, msLeft: 60_000 }, { count: 8, msLeft: 60_000 }, { count: 6, msLeft: 60_000 }], true, 0);
      expect(d).to.deep.equal({ allowed: true, limit: 10, remaining: 2, resetSeconds: 60, resetAt: 60, key: 'b' });
    });

    it('refused: reports only a full window, never one that was not full', function () {
      const d = reportedDecision([rule('credential:x'), rule('agent:y', 3)], [{ count: 1, msLeft: 60_000 }, { count: 3, msLeft: 42_000 }], false, 0);
      expect(d).to.include({ allowed: false, key: 'agent:y', remaining: 0, retryAfterSeconds: 42 });
    });

    it('refused by several: reports the one that resets last (Retry-After long enough)', function () {
      const rules = [rule('credential:x', 1, 5), rule('agent:y', 1, 50)];
      const states = [{ count: 1, msLeft: 5_000 }, { count: 1, msLeft: 50_000 }];
      expect(reportedDecision(rules, states, false, 0).key).to.equal('agent:y');
      expect(reportedDecision([...rules].reverse(), [...states].reverse(), false, 0).key).to.equal('agent:y');
    });

    it('rounds the reset up to whole seconds, never 0 while the window is open', function () {
      const d = reportedDecision([rule('k', 1)], [{ count: 1, msLeft: 500 }], false, 59_500);
      expect(d).to.include({ resetSeconds: 1, retryAfterSeconds: 1, resetAt: 60 });
    });

    it('throws when the states do not match the rules (a bug in the caller)', function () {
      expect(() => reportedDecision([], [], true, 0)).to.throw(RangeError);
      expect(() => reportedDecision([rule('a')], [], true, 0)).to.throw(RangeError);
    });
  });

  describe('rulesFor', function () {
    it('keys windows by account and id, so equal ids in two accounts never share a window', function () {
      const settings = { credential: { limit: 100, windowSeconds: 10 }, agent: { limit: 5, windowSeconds: 20 } };
      expect(rulesFor(aPrincipal({ accountId: 'acct_a', credentialId: 'c1' }), settings)).to.deep.equal([{ key: 'credential:acct_a:c1', limit: 100, windowSeconds: 10 }]);
      expect(rulesFor(aPrincipal({ accountId: 'acct_b', credentialId: 'c1' }), settings, 'a1')).to.deep.equal([
        { key: 'credential:acct_b:c1', limit: 100, windowSeconds: 10 },
        { key: 'agent:acct_b:a1', limit: 5, windowSeconds: 20 },
      ]);
    });
  });

  describe('validationFailed', function () {
    it('repeats the first issue in detail and counts the others', function () {
      const error = validationFailed([
        { path: '/values/qty', message: 'must be a number' },
        { path: '/entity', message: 'is required' },
      ]);
      expect(error).to.deep.include({ code: 'validation_failed', detail: '/values/qty: must be a number (and 1 more)' });
      expect(error.errors).to.have.length(2);
    });
  });
});
