import { createHash } from 'node:crypto';
import { validationFailed, type DomainError } from './errors.js';
import { ExactNumber, exactDecimalOf } from './exact-number.js';
import { err, ok, type Result } from './result.js';

/**
 * The request header that makes a non-idempotent request safe to retry (IETF httpapi
 * draft "The Idempotency-Key HTTP Header Field"). Source: docs/CONTRACT.md "Runs lifecycle".
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The response header a replayed answer carries, `true`. Source: docs/CONTRACT.md "Runs lifecycle". */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** Longest key: 255 characters. Source: docs/CONTRACT.md "Runs lifecycle". */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * How long a completed answer is replayed: 24 hours, in milliseconds, counted from the
 * answer. Source: docs/CONTRACT.md "Runs lifecycle"; docs/decisions.md "Idempotency keys".
 */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Default lease of an in-flight claim: 60 000 ms. A claim whose request never finishes
 * (the process died) frees its key after the lease; a request still running after its
 * lease could be run again by a retry, so the lease must outlast the longest request
 * (the API server derives it from its SQL Server and dependency timeouts).
 * Source: docs/decisions.md "Idempotency keys".
 */
export const DEFAULT_IDEMPOTENCY_LEASE_MS = 60_000;

/** `Retry-After` of `idempotency_key_in_use`, in seconds: the first request is usually done within one. */
export const IDEMPOTENCY_IN_USE_RETRY_AFTER_SECONDS = 1;

// Printable ASCII: space (0x20) to tilde (0x7e); Node trims the header's outer whitespace.
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/u;

/** The message of a refused key (without the field name). */
export const IDEMPOTENCY_KEY_RULE = `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, sent once`;

/**
 * Checks an `Idempotency-Key` header value: 1..255 printable ASCII characters (U+0020 to
 * U+007E), the value as sent (the draft's quoted form `"abc"` is a key like any other: a
 * client sends the same bytes every time). `repeated` (the header line sent more than once)
 * is refused too: which one would count is not clear.
 * Source: docs/CONTRACT.md "Runs lifecycle".
 *
 * @returns the key, or `validation_failed` whose `detail` starts `header Idempotency-Key:` and
 *   whose `errors[0].path` is `/Idempotency-Key` (as a query parameter is named `/limit`).
 */
export function parseIdempotencyKey(value: string, repeated = false): Result<string, DomainError<'validation_failed'>> {
  if (!repeated && value.length >= 1 && value.length <= MAX_IDEMPOTENCY_KEY_LENGTH && PRINTABLE_ASCII.test(value)) return ok(value);
  const refused = validationFailed([{ path: `/${IDEMPOTENCY_KEY_HEADER}`, message: IDEMPOTENCY_KEY_RULE }]);
  return err({ ...refused, detail: `header ${IDEMPOTENCY_KEY_HEADER}: ${IDEMPOTENCY_KEY_RULE}` });
}

/**
 * Canonical text of a parsed JSON body: object members sorted by name (UTF-16 code units,
 * as RFC 8785), no whitespace, strings as `JSON.stringify` writes them, and every number
 * (a JS `number` or the core's `ExactNumber`) as the exact decimal the server writes
 * (`exactDecimalOf`: `1.0`, `1.00` and `1` are one value and are written alike;
 * `9007199254740993` stays itself), or its text as written when it cannot be written
 * (the request is refused the same way each time).
 *
 * Why not a library (`canonicalize`, `safe-stable-stringify`): they write a number through
 * a binary float, and the core's `ExactNumber` as the string its `toJSON` gives, which
 * would make the number `1` and the string `"1"` one body.
 *
 * @throws RangeError on a value JSON cannot hold (a function, `undefined` in an array): a bug
 *   of the caller, whose body came from a JSON parser.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number' || value instanceof ExactNumber) {
    const exact = exactDecimalOf(value);
    return exact.ok ? exact.value.text : String(value);
  }
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const names = Object.keys(object).sort();
    return `{${names.map((name) => `${JSON.stringify(name)}:${canonicalJson(object[name])}`).join(',')}}`;
  }
  throw new RangeError(`not a JSON value: ${typeof value}`);
}

/**
 * The fingerprint of a request: SHA-256 (hex) of its method, its path and the canonical
 * text of its parsed JSON body ({@link canonicalJson}; an absent body is `null`), so that
 * member order and whitespace do not count and every other difference does.
 * Source: docs/CONTRACT.md "Runs lifecycle".
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/**
 * The store key of an idempotency key: SHA-256 (hex) of the account id and the key, so
 * that keys are scoped to the account (account B sending A's key has a key of its own)
 * and the store sees neither (a key may be anything printable, of any client's choosing).
 * Source: docs/CONTRACT.md "Isolation between accounts".
 */
export function idempotencyScope(accountId: string, key: string): string {
  return createHash('sha256').update(`${accountId}\n${key}`).digest('hex');
}

/**
 * Whether an answer is kept for replay: the answers of the operation itself, 2xx and 4xx,
 * except 401, 403 and 429 (the request was refused before the operation, so the key
 * stays free); never a 1xx, 3xx or 5xx (a 502/503/504 may be retried with the same key).
 * Source: docs/CONTRACT.md "Runs lifecycle".
 */
export function isReplayableStatus(status: number): boolean {
  if (status >= 200 && status < 300) return true;
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429;
}
