import { err, ok, type Result } from './result.js';

// RFC 8259 §6: the JSON number grammar (no leading `+`, no leading zeros, no bare `.`).
const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/u;

/**
 * A JSON number kept as the text it was written with, for numbers a JS `number` cannot
 * hold exactly (`9007199254740993`, `12345678901234567890.123456789`, `1e400`). A body
 * parser that keeps number text makes one of these instead of rounding through a binary
 * float; {@link parseJsonNumber} decides which numbers need it.
 *
 * It holds any JSON number; whether it can be written is decided by
 * {@link exactDecimalOf} (docs/CONTRACT.md "Exact values"), whose refusal the use cases answer
 * with `invalid_value`.
 */
export class ExactNumber {
  /** The number as written, JSON number grammar (RFC 8259 §6), e.g. `-1.50e+3`. */
  readonly text: string;

  /**
   * @param text - a JSON number.
   * @throws RangeError when `text` is not a JSON number (RFC 8259 §6).
   */
  constructor(text: string) {
    if (!JSON_NUMBER.test(text)) throw new RangeError('not a JSON number');
    this.text = text;
  }

  /** The text as written. */
  toString(): string {
    return this.text;
  }

  /**
   * The text as written, as a JSON string: `JSON.stringify` on Node 20 cannot emit raw
   * number text, and a string keeps every digit where a number would round.
   */
  toJSON(): string {
    return this.text;
  }
}

/**
 * A number in the form SQL Server can take without losing a digit: an integer within
 * `bigint`, or a value of `decimal(38, scale)`. Source: docs/CONTRACT.md "Exact values".
 */
export interface ExactDecimal {
  /**
   * Plain decimal text, no exponent, no superfluous zeros, `-` only when below zero:
   * `9007199254740993`, `-12.5`, `0.001`, `0`. SQL Server converts it to `bigint` or
   * `decimal` exactly (T-SQL CAST and CONVERT, "character to decimal").
   */
  readonly text: string;
  /** Digits after the decimal point in {@link text}: 0..38 (0 for an integer). */
  readonly scale: number;
  /** True for an integer within `bigint`, −9223372036854775808..9223372036854775807. */
  readonly isBigint: boolean;
}

/** Largest precision of SQL Server `decimal` (T-SQL "decimal and numeric"). */
export const MAX_DECIMAL_PRECISION = 38;

const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;

/** Why a number is refused; the caller adds the field (`/values/qty`). */
export const INEXACT_NUMBER_MESSAGE =
  'cannot be written exactly: a number must be an integer within bigint (-9223372036854775808..9223372036854775807) or a decimal of at most 38 digits, at most 38 of them after the decimal point';

/**
 * The exact decimal form of a number (docs/CONTRACT.md "Exact values"): an integer within
 * `bigint`, or a decimal of at most 38 digits in all (counting zeros between the point
 * and the first significant digit, as `decimal(38, s)` does) with at most 38 after the
 * point. A JS `number` is taken as its shortest round-trip text (`String(n)`: `0.1` is
 * 0.1, not the binary float nearest to it); `NaN` and the infinities are refused.
 *
 * @returns the exact form, or `Err` with a message naming the rule (never the number:
 *   its text may be a megabyte long).
 */
export function exactDecimalOf(value: number | ExactNumber): Result<ExactDecimal, string> {
  // A safe integer (|n| < 2^53, within bigint) is its own shortest text, with no exponent
  // below 1e21 and `-0` written `0`: the path below would come to the same form through a
  // regular expression and a BigInt (~1 µs of a row write's validation and binding).
  if (typeof value === 'number' && Number.isSafeInteger(value)) return ok({ text: value === 0 ? '0' : String(value), scale: 0, isBigint: true });
  if (typeof value === 'number' && !Number.isFinite(value)) return err('must be a finite number');
  const m = JSON_NUMBER.exec(typeof value === 'number' ? jsonTextOf(value) : value.text);
  if (m === null) return err('must be a finite number');
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = m;
  // value = digits × 10^shift, digits without leading or trailing zeros.
  let digits = (whole + fraction).replace(/^0+/u, '');
  if (digits === '') return ok({ text: '0', scale: 0, isBigint: true });
  // Counted by hand: `/0+$/` backtracks from every run of zeros and is quadratic on text
  // such as `0.1000…0001` (measured: 80k digits took 2.2 s), which any body could send.
  let trailing = 0;
  while (digits.charCodeAt(digits.length - 1 - trailing) === 0x30) trailing++;
  digits = digits.slice(0, digits.length - trailing);
  // Number() of a long exponent is ±Infinity, which the range checks below refuse.
  const shift = Number(exponent) - fraction.length + trailing;
  const negative = sign === '-';
  if (shift >= 0) {
    if (digits.length + shift > MAX_DECIMAL_PRECISION) return err(INEXACT_NUMBER_MESSAGE);
    const text = `${negative ? '-' : ''}${digits}${'0'.repeat(shift)}`;
    const n = BigInt(text);
    return ok({ text, scale: 0, isBigint: n >= BIGINT_MIN && n <= BIGINT_MAX });
  }
  const scale = -shift;
  if (scale > MAX_DECIMAL_PRECISION || digits.length > MAX_DECIMAL_PRECISION) return err(INEXACT_NUMBER_MESSAGE);
  const padded = digits.padStart(scale + 1, '0');
  const text = `${negative ? '-' : ''}${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
  return ok({ text, scale, isBigint: false });
}

/** `String(n)` in JSON number grammar (`1e+21` is valid JSON; `-0` becomes `0`). */
function jsonTextOf(n: number): string {
  return Object.is(n, -0) ? '0' : String(n);
}

/**
 * What a lossless JSON parser should make of a number's text: a JS `number` when it
 * denotes exactly the value written (`42`, `0.1`, `1.50`, `1e2`), else an
 * {@link ExactNumber} holding the text (`9007199254740993`, `1e400`), so that no digit
 * is lost before {@link exactDecimalOf} decides.
 *
 * @param text - a JSON number (RFC 8259 §6).
 * @throws RangeError when `text` is not a JSON number.
 */
export function parseJsonNumber(text: string): number | ExactNumber {
  const exact = new ExactNumber(text);
  const n = Number(text);
  if (!Number.isFinite(n)) return exact;
  const written = exactDecimalOf(exact);
  const held = exactDecimalOf(n);
  // Two numbers are the same value when their exact forms are; a number outside the
  // exact range keeps its text so the refusal can never be blamed on rounding.
  return written.ok && held.ok && written.value.text === held.value.text ? n : exact;
}

/**
 * True when two column values are equal as SQL Server would compare them after exact
 * binding: numbers (JS or {@link ExactNumber}) by decimal value, everything else with
 * `===`. Used by in-memory writers so that `9007199254740993` never matches
 * `9007199254740992`.
 */
export function sameColumnValue(a: unknown, b: unknown): boolean {
  const isNumeric = (v: unknown): v is number | ExactNumber => typeof v === 'number' || v instanceof ExactNumber;
  if (isNumeric(a) && isNumeric(b)) {
    const x = exactDecimalOf(a);
    const y = exactDecimalOf(b);
    if (x.ok && y.ok) return x.value.text === y.value.text;
    return typeof a === 'number' && typeof b === 'number' ? a === b : a.toString() === b.toString();
  }
  return a === b;
}
