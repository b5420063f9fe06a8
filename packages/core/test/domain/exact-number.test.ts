import { expect } from 'chai';
import { exactDecimalOf, ExactNumber, parseJsonNumber, sameColumnValue } from '@svc/core';

/** The exact form of `text` as a JSON number, or the refusal's message. */
function exactOf(value: string | number): { text: string; scale: number; isBigint: boolean } | string {
  const result = exactDecimalOf(typeof value === 'number' ? value : new ExactNumber(value));
  return result.ok ? result.value : result.error;
}

describe('ExactNumber and exactDecimalOf (docs/CONTRACT.md "Exact values")', function () {
  it('keeps every digit of integers within bigint, whatever a JS number would make of them', function () {
    expect(exactOf('9007199254740993')).to.deep.equal({ text: '9007199254740993', scale: 0, isBigint: true });
    expect(exactOf('9223372036854775807')).to.deep.equal({ text: '9223372036854775807', scale: 0, isBigint: true });
    expect(exactOf('-9223372036854775808')).to.deep.equal({ text: '-9223372036854775808', scale: 0, isBigint: true });
    expect(exactOf('1.5e3')).to.deep.equal({ text: '1500', scale: 0, isBigint: true });
    expect(exactOf('-0')).to.deep.equal({ text: '0', scale: 0, isBigint: true });
    expect(exactOf('0e999999999999999999999')).to.deep.equal({ text: '0', scale: 0, isBigint: true });
  });

  it('writes integers beyond bigint but within 38 digits as decimals of scale 0', function () {
    expect(exactOf('9223372036854775808')).to.deep.equal({ text: '9223372036854775808', scale: 0, isBigint: false });
    expect(exactOf('1e37')).to.deep.equal({ text: `1${'0'.repeat(37)}`, scale: 0, isBigint: false });
  });

  it('keeps every digit of decimals of up to 38 digits, in plain notation', function () {
    expect(exactOf('12345678901234567890.123456789')).to.deep.equal({ text: '12345678901234567890.123456789', scale: 9, isBigint: false });
    expect(exactOf('0.1')).to.deep.equal({ text: '0.1', scale: 1, isBigint: false });
    expect(exactOf('-1.50')).to.deep.equal({ text: '-1.5', scale: 1, isBigint: false });
    expect(exactOf('1E-38')).to.deep.equal({ text: `0.${'0'.repeat(37)}1`, scale: 38, isBigint: false });
    expect(exactOf(`0.${'9'.repeat(38)}`)).to.deep.equal({ text: `0.${'9'.repeat(38)}`, scale: 38, isBigint: false });
  });

  it('refuses numbers no bigint or decimal(38, s) holds exactly', function () {
    for (const text of ['1e38', '1e400', '1e-39', `1.${'0'.repeat(37)}1`, '1e99999999999999999999', '-1e-99999999999999999999']) {
      expect(exactOf(text), text).to.be.a('string').that.includes('cannot be written exactly');
    }
  });

  it('takes a JS number as its shortest round-trip text and refuses NaN and the infinities', function () {
    expect(exactOf(0.1)).to.deep.equal({ text: '0.1', scale: 1, isBigint: false });
    expect(exactOf(1e21)).to.deep.equal({ text: `1${'0'.repeat(21)}`, scale: 0, isBigint: false });
    expect(exactOf(-0)).to.deep.equal({ text: '0', scale: 0, isBigint: true });
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(exactOf(n)).to.equal('must be a finite number');
    expect(exactOf(1e300)).to.include('cannot be written exactly');
    expect(exactOf(Number.MIN_VALUE)).to.include('cannot be written exactly');
  });

  it('gives a safe integer JS number the form its text gets (the fast path agrees with the general one)', function () {
    const safe = [0, -0, 1, -1, 7, 100, -120, 2_147_483_647, 2_147_483_648, -2_147_483_649, 10 ** 15, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    for (const n of safe) expect(exactOf(n), String(n)).to.deep.equal(exactOf(n === 0 ? '0' : String(n)));
    expect(exactOf(-0)).to.deep.equal({ text: '0', scale: 0, isBigint: true });
    expect(exactOf(1200)).to.deep.equal({ text: '1200', scale: 0, isBigint: true });
  });

  it('refuses text that is not a JSON number', function () {
    for (const text of ['', '+1', '01', '.5', '1.', 'NaN', '0x10', '1e', ' 1']) expect(() => new ExactNumber(text), text).to.throw(RangeError);
  });

  it('parseJsonNumber gives a JS number only when it holds the value written', function () {
    expect(parseJsonNumber('42')).to.equal(42);
    expect(parseJsonNumber('0.1')).to.equal(0.1);
    expect(parseJsonNumber('1.50')).to.equal(1.5);
    expect(parseJsonNumber('9007199254740991')).to.equal(9007199254740991);
    for (const text of ['9007199254740993', '12345678901234567890.123456789', '1e400', '0.10000000000000000001']) {
      const parsed = parseJsonNumber(text);
      expect(parsed, text).to.be.instanceOf(ExactNumber);
      expect(String(parsed)).to.equal(text);
    }
  });

  it('sameColumnValue compares numbers by exact value and nothing else loosely', function () {
    expect(sameColumnValue(new ExactNumber('9007199254740993'), 9007199254740992)).to.equal(false);
    expect(sameColumnValue(new ExactNumber('9007199254740993'), new ExactNumber('9.007199254740993e15'))).to.equal(true);
    expect(sameColumnValue(new ExactNumber('1.50'), 1.5)).to.equal(true);
    expect(sameColumnValue('1', 1)).to.equal(false);
    expect(sameColumnValue(null, null)).to.equal(true);
  });

  it('decides a number of half a million digits, such as a 1 MiB body can hold, without hanging', function () {
    // Before: a trailing-zeros regex backtracked quadratically here (minutes, past mocha's timeout).
    const long = `0.1${'0'.repeat(500_000)}1`;
    expect(exactDecimalOf(new ExactNumber(long)).ok).to.equal(false);
    expect(parseJsonNumber(long)).to.be.instanceOf(ExactNumber);
    expect(exactDecimalOf(new ExactNumber(`1${'0'.repeat(500_000)}e-500000`))).to.deep.equal({ ok: true, value: { text: '1', scale: 0, isBigint: true } });
  });
});
