import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type InputType, type ZlibOptions, type BrotliOptions } from 'node:zlib';
import { parse, type ValueNode } from '@humanwhocodes/momoa';
import { escapePointerToken, parseJsonNumber, wireBody, type WireBody } from '@svc/core';
import contentType from 'content-type';
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { HttpProblem } from '../problem.js';

/** Content codings a request body may be sent with (RFC 9110 §8.4.1), by their name. */
const DECODERS: Readonly<Record<string, (buffer: InputType, options: ZlibOptions & BrotliOptions) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  // RFC 9110 §8.4.1.3: recipients should treat x-gzip as gzip.
  'x-gzip': promisify(gunzip),
  // RFC 9110 §8.4.1.2: "deflate" is the zlib format (RFC 1950), not raw deflate.
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/** The `Accept-Encoding` a 415 for a content coding carries (RFC 9110 §15.5.16). */
export const ACCEPTED_CONTENT_CODINGS = 'gzip, deflate, br';

// Every 415 of a body says which codings it may use, so one documented answer covers the
// media type, the charset and the coding (RFC 9110 §15.5.16).
const ACCEPT_ENCODING = { 'Accept-Encoding': ACCEPTED_CONTENT_CODINGS } as const;

/**
 * The JSON body of a request, with its size limit: 415 `unsupported_media_type` for
 * another media type than `application/json` (or `+json`), a charset other than UTF-8 or
 * an unsupported `Content-Encoding`; 413 over `limitBytes`, counted after decoding; 400
 * `invalid_json` for a body that cannot be decoded or parsed, or that repeats a member
 * name (see {@link readJsonBody}). An absent body is `undefined`: the use case's
 * validation names it. The value is core's `WireBody`: the use case validates it.
 * Source: docs/CONTRACT.md "Request bodies and headers".
 *
 * Rejects (never throws) with HttpProblem `unsupported_media_type`, `payload_too_large` or `invalid_json`.
 */
export function jsonBody(ctx: Context, limitBytes: number): Promise<WireBody> {
  // Promise chains, not async frames, here and in readJsonBody: a body costs 4 promises
  // fewer, and a thrown HttpProblem still arrives as a rejection.
  try {
    const hasBody = (ctx.request.length ?? 0) > 0 || ctx.request.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return Promise.resolve(wireBody(undefined));
    checkJsonMediaType(ctx.request.headers['content-type']);
    // `wireBody` only brands the parsed value; a cast of the promise spares the request
    // the promise a `.then(wireBody)` would make.
    return readJsonBody(ctx.req, limitBytes) as Promise<WireBody>;
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * 415 unless `header` names `application/json` or `application/*+json` (RFC 6839 §3.1) with
 * no charset or UTF-8. One parse of the header by the `content-type` package (Koa's
 * `ctx.request.is` and `ctx.request.charset` parsed it twice, through type-is: 2–3 µs of a
 * run start's CPU in the bench profile). An absent or malformed header is not JSON.
 *
 * @throws HttpProblem `unsupported_media_type`.
 */
function checkJsonMediaType(header: string | undefined): void {
  let media: contentType.ParsedMediaType;
  try {
    media = contentType.parse(header ?? '');
  } catch {
    throw new HttpProblem('unsupported_media_type', 'The request body must be JSON, sent with Content-Type: application/json.', ACCEPT_ENCODING);
  }
  const type = media.type;
  if (type !== 'application/json' && !(type.startsWith('application/') && type.endsWith('+json'))) {
    throw new HttpProblem('unsupported_media_type', 'The request body must be JSON, sent with Content-Type: application/json.', ACCEPT_ENCODING);
  }
  const charset = media.parameters['charset']?.toLowerCase();
  if (charset !== undefined && charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpProblem('unsupported_media_type', 'The request body charset is not supported; send UTF-8.', ACCEPT_ENCODING);
  }
}

/**
 * Bytes a coded body may exceed the limit by: deflate's worst case adds 5 bytes per
 * 64 KiB stored block, gzip 18 bytes of frame, brotli a few bytes per uncompressed
 * meta-block, so a coded body whose decoded form fits the limit is never more than this
 * much larger than the limit.
 */
export const CODED_SLACK_BYTES = 16 * 1024;

// Deeper than any body of this API (a run body is 4 levels); the limit keeps the
// conversion below from recursing as deep as a 1 MiB `[[[[...` would take it.
const MAX_DEPTH = 64;

// One decoder for every request: `decode` without `stream` keeps no state between calls.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

// RFC 9110 §5.6.2 token, short enough to name in a detail.
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]{1,40}$/u;

/**
 * Reads a JSON request body exactly: decodes its `Content-Encoding`, holds the decoded
 * size to `limitBytes`, checks UTF-8, and parses it with a maintained parser that keeps
 * every member and every number's text. Source: docs/CONTRACT.md "Request bodies and
 * headers", "Row writes" and "Exact values".
 *
 * - `Content-Encoding`: `gzip` (and `x-gzip`), `deflate` (zlib format) and `br` are
 *   decoded, `identity` is none; any other coding, or two stacked codings, throw 415
 *   `unsupported_media_type` naming it. The coded bytes are read first (at most
 *   `limitBytes` + 16 KiB), then decoded by node:zlib with `maxOutputLength`, which
 *   stops inflating at the limit: a zip bomb costs at most `limitBytes` of output.
 * - Over the limit (declared `Content-Length`, bytes read, or decoded size): 413
 *   `payload_too_large`.
 * - A corrupt or truncated coded body, bytes that are not UTF-8, text that is not JSON
 *   (ECMA-404), a member name given twice in one object, or nesting deeper than 64:
 *   400 `invalid_json`, naming the line and column or the member's JSON Pointer.
 * - Objects have no prototype and members are defined, never assigned, so a member
 *   named `__proto__`, `constructor` or `toString` is a member like any other.
 * - Numbers: a JS `number` when it holds the value written, else the core's
 *   `ExactNumber` with the text as written (`parseJsonNumber`).
 *
 * Why @humanwhocodes/momoa and not lossless-json: lossless-json 4.3.3 keeps number text
 * but silently merges a member given twice with an equal value (`parse.js`: the
 * duplicate hook runs only when `!isDeepEqual(value, object[key])`), while docs/CONTRACT.md
 * refuses every repeated member name. momoa's syntax tree keeps every member and each
 * number's position, so the text is sliced from the body; it lets a raw control
 * character through inside a string (measured: `"x\u0001"` parses), which is checked here.
 *
 * @returns the parsed body, or `undefined` for an empty one; rejects (never throws) with
 *   HttpProblem `unsupported_media_type`, `payload_too_large` or `invalid_json`.
 */
export function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  let coding: string | undefined;
  try {
    coding = contentCodingOf(req.headers['content-encoding']);
  } catch (error) {
    return Promise.reject(error);
  }
  const failed = rawBodyFailure(limitBytes, coding);
  let raw: Promise<Buffer>;
  try {
    raw = readRaw(req, limitBytes, coding);
  } catch (error) {
    return Promise.reject(error).then(undefined, failed);
  }
  // One `then` for the bytes and their failure: a body costs two promises fewer than
  // mapping the failure and parsing in two steps.
  if (coding === undefined) return raw.then(jsonOf, failed);
  const decoded = coding;
  return raw.then((bytes) => decode(bytes, decoded, limitBytes), failed).then(jsonOf);
}

/** The JSON value of a decoded body: `undefined` for an empty one. @throws HttpProblem */
function jsonOf(bytes: Buffer): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new HttpProblem('invalid_json', 'The request body is not valid UTF-8.');
  }
  if (text.trim() === '') return undefined;
  return parseJson(text);
}

/** The one coding to decode (lower case), `undefined` for none; 415 for anything else. */
function contentCodingOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length > 1) {
    throw new HttpProblem(
      'unsupported_media_type',
      `Content-Encoding ${codings.every((c) => TOKEN.test(c)) ? codings.join(', ') : 'with several codings'} is not supported: send at most one of ${ACCEPTED_CONTENT_CODINGS}.`,
      { 'Accept-Encoding': ACCEPTED_CONTENT_CODINGS },
    );
  }
  const [coding] = codings;
  if (coding === undefined) return undefined;
  if (!Object.hasOwn(DECODERS, coding)) {
    const named = TOKEN.test(coding) ? `Content-Encoding ${coding}` : 'This Content-Encoding';
    throw new HttpProblem('unsupported_media_type', `${named} is not supported: send the body as identity, ${ACCEPTED_CONTENT_CODINGS}.`, {
      'Accept-Encoding': ACCEPTED_CONTENT_CODINGS,
    });
  }
  return coding;
}

function tooLarge(limitBytes: number, what: string): HttpProblem {
  return new HttpProblem('payload_too_large', `The request body is larger than ${limitBytes} bytes${what}.`);
}

/** What a failure of raw-body's read becomes: 413, or 400 `invalid_json` for a body cut short or longer than declared; anything else passes on. */
function rawBodyFailure(limitBytes: number, coding: string | undefined): (error: unknown) => never {
  return (error: unknown): never => {
    const type = (error as { type?: unknown }).type;
    if (type === 'entity.too.large') throw tooLarge(limitBytes, coding === undefined ? '' : ' (coded)');
    if (type === 'request.size.invalid') throw new HttpProblem('invalid_json', 'The request body is shorter or longer than its Content-Length.');
    if (type === 'request.aborted') throw new HttpProblem('invalid_json', 'The request body ended before it was complete.');
    throw error;
  };
}

/** The body's bytes as sent (coded or not), read by raw-body up to the limit. @throws what raw-body throws synchronously */
function readRaw(req: IncomingMessage, limitBytes: number, coding: string | undefined): Promise<Buffer> {
  const declared = req.headers['content-length'];
  // Content-Length counts coded bytes: raw-body checks it against the limit before
  // reading only when it is the decoded size too (no coding).
  // Two literals, not a conditional spread (docs/ARCHITECTURE.md "Style to follow").
  const options = coding !== undefined ? { limit: limitBytes + CODED_SLACK_BYTES } : declared !== undefined ? { limit: limitBytes, length: declared } : { limit: limitBytes };
  return getRawBody(req, options);
}

async function decode(raw: Buffer, coding: string, limitBytes: number): Promise<Buffer> {
  const decoder = DECODERS[coding] as (buffer: InputType, options: ZlibOptions & BrotliOptions) => Promise<Buffer>;
  try {
    return await decoder(raw, { maxOutputLength: limitBytes });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limitBytes, ' once decoded');
    throw new HttpProblem('invalid_json', `The request body could not be decoded as ${coding}: it is corrupt or truncated.`);
  }
}

function parseJson(text: string): unknown {
  return parsePlain(text) ?? parseCompact(text) ?? parseExact(text);
}

/**
 * The fastest path of {@link readJsonBody}, for an object body without escapes or a
 * `__proto__` whose numbers, if any, are integers of at most 15 digits (a run start, a
 * file's preparation, a row of short integers and strings: most bodies of this API),
 * compact or not. `JSON.parse`'s value is the exact path's (same members, same strings, no number
 * whose text must be kept) unless `JSON.parse` dropped a member given twice: so the members are
 * counted twice, as the `:` outside strings of the text (with no escape in the text, a
 * string ends at the next `"`) and as the members of the value, and any difference leaves
 * it to the paths after. A short integer is the same JS number on every path (see
 * {@link shortIntegerEnd}). Anything else it does not take (another number, a `\`, `__proto__`,
 * nesting of {@link MAX_DEPTH} or more, a text `JSON.parse` refuses) goes on to
 * {@link parseCompact}, then the exact path, unchanged. Objects keep `JSON.parse`'s
 * prototype, as on {@link parseCompact}'s path (no `__proto__` member can change it).
 *
 * Why a hand-written scan: it replaces {@link parseCompact}'s `JSON.stringify` round trip,
 * measured on the bench's 190-byte run-start body in one process (Node 20, 10⁶ calls):
 * `JSON.parse` alone 404 ns, with the round trip 986–1163 ns, with this count 632–642 ns;
 * in the server 276k → 268k instructions a run start (callgrind, bench/BENCHMARKS.md).
 *
 * @returns the body, or `undefined` when a later path must decide.
 */
function parsePlain(text: string): unknown {
  if (text.includes('\\') || text.includes('__proto__')) return undefined;
  let colons = 0;
  const length = text.length;
  for (let i = 0; i < length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // No escape anywhere: the string ends at the next quote.
      const end = text.indexOf('"', i + 1);
      if (end < 0) return undefined;
      i = end + 1;
      continue;
    }
    if (c === 0x3a) colons += 1;
    else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
      // A digit or a minus outside a string starts a number: a short integer is taken here,
      // anything else is left to parseCompact, which keeps its text.
      const end = shortIntegerEnd(text, i);
      if (end < 0) return undefined;
      i = end;
      continue;
    }
    i += 1;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === 'object' && memberCount(value, 0) === colons ? value : undefined;
}

/**
 * Where the number starting at `start` ends, when it is a short integer: `-?(0|[1-9][0-9]{0,14})`
 * followed by no digit, `.`, `e` or `E` (JSON forbids a leading zero, so `01` is no number:
 * JSON.parse refuses it, or `-` alone). Such a number has at most 15 digits, so `JSON.parse`
 * gives exactly its value, the JS number `parseJsonNumber` gives for its text (`-0` included:
 * `-0`). -1 for anything else.
 */
function shortIntegerEnd(text: string, start: number): number {
  let i = text.charCodeAt(start) === 0x2d ? start + 1 : start;
  const first = text.charCodeAt(i);
  if (first === 0x30) {
    i += 1;
  } else if (first >= 0x31 && first <= 0x39) {
    const limit = i + 15;
    i += 1;
    while (i < limit && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i += 1;
  } else {
    return -1;
  }
  const next = text.charCodeAt(i);
  return (next >= 0x30 && next <= 0x39) || next === 0x2e || next === 0x65 || next === 0x45 ? -1 : i;
}

/** Members of the objects in `value` (arrays counted through); -1 at {@link MAX_DEPTH} containers deep. */
function memberCount(value: object, depth: number): number {
  if (depth >= MAX_DEPTH) return -1;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) {
      if (item === null || typeof item !== 'object') continue;
      const inner = memberCount(item, depth + 1);
      if (inner < 0) return -1;
      count += inner;
    }
    return count;
  }
  const record = value as Record<string, unknown>;
  const names = Object.keys(record);
  count = names.length;
  for (const name of names) {
    const item = record[name];
    if (item === null || typeof item !== 'object') continue;
    const inner = memberCount(item, depth + 1);
    if (inner < 0) return -1;
    count += inner;
  }
  return count;
}

/**
 * The fast path of {@link readJsonBody}, for the body most clients send: the compact
 * text `JSON.stringify` writes. When `JSON.stringify(JSON.parse(text))` gives `text` back
 * byte for byte, the text has no whitespace, no member given twice (the parse would have
 * dropped one and the text would come back shorter) and every number written as
 * JavaScript writes it (`String(n)`), so the value is the one the exact path builds:
 * numbers go through the same `parseJsonNumber` of the same text, objects get no
 * prototype and members are defined. Anything else (`undefined` here) takes the exact
 * path, which also explains every error. Why: momoa's syntax tree cost 16–25 µs a
 * run-start body (the largest cost of the adapter in the bench profile) against about
 * 2 µs for this path, measured in one process on the same 200-byte body.
 *
 * @returns the body, or `undefined` when the exact path must decide.
 */
function parseCompact(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    if (JSON.stringify(value) !== text) return undefined;
    // JSON.stringify writes every `__proto__` name literally, so this finds each one. Without
    // one, JSON.parse's objects are kept: they cannot carry a prototype change, and V8 keeps
    // them in fast mode (validating a run-start body took 1.2 µs on them against 2.9 µs on
    // prototype-less objects, which V8 holds as dictionaries).
    return text.includes('"__proto__"') ? normalised(value, 0) : numbersExact(value, 0);
  } catch {
    // Invalid JSON, or nesting deep enough to exhaust stringify: the exact path answers.
    return undefined;
  }
}

/** Thrown by {@link normalised} past {@link MAX_DEPTH}: the exact path words the 400. */
const TOO_DEEP = new Error('nested too deep');

/** `value` as the exact path builds it (see {@link parseCompact}). @throws TOO_DEEP */
function normalised(value: unknown, depth: number): unknown {
  if (typeof value === 'number') return parseJsonNumber(String(value));
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) throw TOO_DEEP;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = normalised(value[i], depth + 1);
    return value;
  }
  const source = value as Record<string, unknown>;
  const object = Object.create(null) as Record<string, unknown>;
  for (const name of Object.keys(source)) {
    // defineProperty: never an inherited setter, whatever the name (`__proto__` included).
    Object.defineProperty(object, name, { value: normalised(source[name], depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/**
 * `value` with every number replaced in place by what `parseJsonNumber` makes of its text,
 * as the exact path does; objects keep their (`Object.prototype`) prototype. Only for
 * values without a `__proto__` member (see {@link parseCompact}). @throws TOO_DEEP
 */
function numbersExact(value: unknown, depth: number): unknown {
  if (typeof value === 'number') return parseJsonNumber(String(value));
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) throw TOO_DEEP;
  const container = value as Record<string, unknown>;
  for (const name of Object.keys(container)) {
    const item = container[name];
    if (item !== null && typeof item === 'object') numbersExact(item, depth + 1);
    else if (typeof item === 'number') container[name] = parseJsonNumber(String(item));
  }
  return value;
}

function parseExact(text: string): unknown {
  let body: ValueNode;
  try {
    body = parse(text, { mode: 'json' }).body;
  } catch (error) {
    if (error instanceof RangeError) throw new HttpProblem('invalid_json', `The request body is nested more than ${MAX_DEPTH} levels deep.`);
    const e = error as { line?: unknown; column?: unknown };
    const at = typeof e.line === 'number' && typeof e.column === 'number' ? ` (at line ${e.line}, column ${e.column})` : '';
    throw new HttpProblem('invalid_json', `The request body is not valid JSON${at}.`);
  }
  return valueOf(body, text, '', 0);
}

function valueOf(node: ValueNode, text: string, pointer: string, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new HttpProblem('invalid_json', `The request body is nested more than ${MAX_DEPTH} levels deep.`);
  switch (node.type) {
    case 'String':
      checkString(node, text);
      return node.value;
    case 'Number':
      return parseJsonNumber(text.slice(node.loc.start.offset, node.loc.end.offset));
    case 'Boolean':
      return node.value;
    case 'Null':
      return null;
    case 'Array':
      return node.elements.map((element, i) => valueOf(element.value, text, `${pointer}/${i}`, depth + 1));
    case 'Object': {
      const object = Object.create(null) as Record<string, unknown>;
      for (const member of node.members) {
        if (member.name.type !== 'String') throw new HttpProblem('invalid_json', 'The request body is not valid JSON.');
        checkString(member.name, text);
        const name = member.name.value;
        const at = `${pointer}/${escapePointerToken(name)}`;
        if (Object.hasOwn(object, name)) {
          const { line, column } = member.loc.start;
          throw new HttpProblem('invalid_json', `The member ${at} is given twice (again at line ${line}, column ${column}); a member name may appear once.`);
        }
        // defineProperty: never an inherited setter, whatever the name.
        Object.defineProperty(object, name, { value: valueOf(member.value, text, at, depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return object;
    }
    default:
      // NaN, Infinity and identifiers exist only in momoa's JSON5 mode.
      throw new HttpProblem('invalid_json', 'The request body is not valid JSON.');
  }
}

// RFC 8259 §7: control characters must be escaped inside strings.
function checkString(node: { loc: { start: { offset: number; line: number; column: number }; end: { offset: number } } }, text: string): void {
  if (/[\u0000-\u001f]/u.test(text.slice(node.loc.start.offset, node.loc.end.offset))) {
    throw new HttpProblem('invalid_json', `The request body is not valid JSON (an unescaped control character in the string at line ${node.loc.start.line}, column ${node.loc.start.column}).`);
  }
}
