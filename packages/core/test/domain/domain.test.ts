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
  tightestDecision,
  validationFailed,
  type RateLimitDecision,
} from '@svc/core';
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

  describe('tightestDecision', function () {
    const decision = (key: string, allowed: boolean, remaining: number): RateLimitDecision => ({
      allowed,
      limit: 10,
      remaining,
      resetSeconds: 60,
      resetAt: 0,
      key,
    });

    it('picks a refusal over any allowed decision', function () {
      expect(tightestDecision([decision('a', true, 0), decision('b', false, 5)]).key).to.equal('b');
    });

    it('of several refusals, picks the one that resets last (Retry-After long enough)', function () {
      const soon = { ...decision('credential:x', false, 0), resetSeconds: 5 };
      const late = { ...decision('agent:y', false, 0), resetSeconds: 50 };
      expect(tightestDecision([soon, late]).key).to.equal('agent:y');
      expect(tightestDecision([late, soon]).key).to.equal('agent:y');
    });

    it('otherwise picks the fewest remaining', function () {
      expect(tightestDecision([decision('a', true, 9), decision('b', true, 2), decision('c', true, 4)]).key).to.equal('b');
    });

    it('throws for no decision at all (a bug in the caller)', function () {
      expect(() => tightestDecision([])).to.throw(RangeError);
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
