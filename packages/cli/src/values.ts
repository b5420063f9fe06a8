/**
 * The command line's own notations: `col=value` column values, `KEY:NAME:TYPE` file
 * references. Only their syntax is checked here; what the API accepts (entity names, value
 * types, counts) is decided by the server, so that no rule is written twice
 * (docs/ARCHITECTURE.md "Style to follow").
 */
import type { FileReference } from '@svc/client';

/** A command-line argument that does not follow its notation; the CLI exits 2 (usage). */
export class NotationError extends Error {
  override readonly name = 'NotationError';
}

/** A column value as the API takes it (spec "Record (row)"). */
export type Scalar = string | number | boolean | null;

/** A JSON number (RFC 8259 §6). */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/u;
/**
 * Significant digits an IEEE 754 double carries exactly: any decimal of at most 15 of them
 * comes back unchanged from a double. The client sends JSON made by `JSON.stringify`, so a
 * longer number would reach the database rounded (docs/CONTRACT.md "Exact values" promises
 * digits as written): such a number is refused here and must be sent as a string.
 */
const EXACT_DIGITS = 15;

/**
 * A value as typed: `null`, `true`, `false`, a JSON number, a JSON string in double quotes
 * (`'"007"'` keeps the leading zeros), or else the text itself (`sku=B-7` is the string `B-7`).
 *
 * @param what - names the argument in the error (`qty`, `--key`).
 * @throws {@link NotationError} for a number with more than 15 significant digits, or a
 *   double-quoted value that is not one JSON string.
 */
export function parseScalar(text: string, what: string): Scalar {
  if (text === 'null') return null;
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (JSON_NUMBER.test(text)) {
    const mantissa = text.replace(/[eE].*$/u, '').replace(/[-.]/gu, '').replace(/^0+/u, '').replace(/0+$/u, '');
    if (mantissa.length > EXACT_DIGITS) {
      throw new NotationError(`${what}: ${text} has more than ${EXACT_DIGITS} significant digits and would be rounded; quote it as a string: ${what}='"${text}"'`);
    }
    const number = Number(text);
    // 1e400 would be sent as null, 1e-400 as 0.
    if (!Number.isFinite(number) || (number === 0 && mantissa !== '')) throw new NotationError(`${what}: ${text} is beyond the range of a JSON number this CLI can send; quote it as a string: ${what}='"${text}"'`);
    return number;
  }
  if (text.startsWith('"')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (typeof value !== 'string') throw new NotationError(`${what}: ${text} starts with a double quote but is not one JSON string`);
    return value;
  }
  return text;
}

/**
 * `column=value` pairs as a `values` object (the first `=` splits; the value may hold more).
 *
 * @throws {@link NotationError} for an argument without `=` or with an empty column name, a
 *   column given twice, or a value {@link parseScalar} refuses.
 */
export function parseAssignments(pairs: readonly string[]): Record<string, Scalar> {
  const values: Record<string, Scalar> = {};
  for (const pair of pairs) {
    const [column, value] = splitAssignment(pair, 'column value');
    if (Object.hasOwn(values, column)) throw new NotationError(`column ${column} is given twice`);
    values[column] = parseScalar(value, column);
  }
  return values;
}

/** `COLUMN=VALUE` split at the first `=`. */
export function splitAssignment(pair: string, what: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new NotationError(`${what} ${JSON.stringify(pair)} must be written COLUMN=VALUE`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

/**
 * `KEY:NAME:TYPE` as a file reference: the type is after the last colon, the name after the
 * one before (a file key may itself hold colons; a name or a media type may not).
 *
 * @throws {@link NotationError} when a part is missing or empty.
 */
export function parseFileReference(text: string, option: string): FileReference {
  const last = text.lastIndexOf(':');
  const middle = last > 0 ? text.lastIndexOf(':', last - 1) : -1;
  const key = middle > 0 ? text.slice(0, middle) : '';
  const name = text.slice(middle + 1, last);
  const type = text.slice(last + 1);
  if (middle <= 0 || key === '' || name === '' || type === '') {
    throw new NotationError(`${option} ${JSON.stringify(text)} must be written KEY:NAME:TYPE, e.g. uploads/invoice-17.pdf:invoice-17.pdf:application/pdf`);
  }
  return { file_key: key, file_name: name, content_type: type };
}

/**
 * The `values` object of a `--json` file's text: a JSON object whose values are scalars.
 *
 * @throws {@link NotationError} when it is not, or holds an integer beyond 2^53 (rounded by
 *   `JSON.parse`; quote it as a string in the file).
 */
export function parseValuesJson(text: string, source: string): Record<string, Scalar> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new NotationError(`${source} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new NotationError(`${source} must hold a JSON object of column values, e.g. {"id": 3, "sku": "C-1"}`);
  for (const [column, v] of Object.entries(value)) {
    if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) {
      throw new NotationError(`${source}: ${column} is an integer beyond 2^53 and was rounded when read; write it as a string`);
    }
  }
  // Objects and arrays inside are left for the server to refuse, naming the column.
  return value as Record<string, Scalar>;
}
