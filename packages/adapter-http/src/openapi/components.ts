/**
 * The shared parts of the OpenAPI 3.1 document: reusable responses, headers and
 * parameters, and the helpers route modules write their operation objects with.
 * Limits come from the settings the server enforces, never from literals here.
 */
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, SUPPORTED_SCOPES } from '@svc/core';
import type { STATUS_BY_CODE } from '../problem.js';
import { formatBytes, type EnforcedLimits } from '../settings.js';
import type { ProblemExampleName } from './examples.js';

/** A JSON value: the OpenAPI document is plain data. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** A JSON object. */
export type JsonObject = { readonly [key: string]: Json };

/**
 * Turns a core JSON Schema into an OpenAPI component: drops `$id` (components are named
 * by their key) and points bare `$ref`s at `#/components/schemas/`.
 */
export function component(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(component);
  if (schema === null || typeof schema !== 'object') return schema as Json;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) out[key] = `#/components/schemas/${value}`;
    else out[key] = component(value);
  }
  return out;
}

/** `$ref` to a schema component. */
export const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
/** `$ref` to a header component. */
export const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });
/** `$ref` to a response component. */
export const responseRef = (name: string): Json => ({ $ref: `#/components/responses/${name}` });

/** An inline header object. */
export const header = (description: string, type: 'integer' | 'string' = 'integer'): Json => ({ description, schema: { type } });

const RATE_LIMIT = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/** `X-Request-Id` and the rate-limit headers (and `Retry-After` when refused). */
function rateLimited(withRetry: boolean): JsonObject {
  const out: { [key: string]: Json } = { 'X-Request-Id': headerRef('X-Request-Id') };
  for (const h of RATE_LIMIT) out[h] = headerRef(h);
  if (withRetry) out['Retry-After'] = headerRef('Retry-After');
  return out;
}

/** The headers of every authenticated success: `X-Request-Id` and the rate-limit headers. */
export const authenticatedHeaders: JsonObject = rateLimited(false);

/**
 * The headers of a list page: those of every authenticated success, and `Link: <url>;
 * rel="next"` (RFC 8288) while a next page follows (absent on the last page, hence
 * `required: false`). Source: docs/CONTRACT.md "Discovery".
 */
export const listPageHeaders: JsonObject = {
  ...authenticatedHeaders,
  Link: {
    description: '`<url>; rel="next"` (RFC 8288): the next page, this request (its other query parameters kept) with `cursor` set to the next page\'s cursor (`next_cursor` where the body has it), on the configured base URL. Absent on the last page. A deprecated operation also sends `<url>; rel="deprecation"`.',
    required: false,
    schema: { type: 'string' },
  },
};

/** The `limit` and `cursor` query parameters of a list operation. Source: docs/CONTRACT.md "Discovery". */
export const pagingParameters: readonly Json[] = [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `Items per page, 1..${MAX_PAGE_LIMIT}; default ${DEFAULT_PAGE_LIMIT}. Anything else (or the parameter sent twice): 400 \`validation_failed\` naming \`/limit\`.`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'Opaque cursor of the page to read, as this service gave it (the `Link: rel="next"` URL holds it); absent: the first page. A cursor of another list, account or filters, or one this service did not sign: 400 `invalid_cursor` naming `/cursor`.',
    schema: { type: 'string' },
  },
];

/** The security of operations that take only API keys. */
export const apiKeyOnly: Json = [{ ApiKey: [] }, { BearerApiKey: [] }];

/** The security of run operations: API keys, or an OAuth access token with `scope`. */
export const apiKeyOrToken = (scope: string): Json => [{ ApiKey: [] }, { BearerApiKey: [] }, { AccessToken: [scope] }];

/** The `Content-Encoding` request header parameter, with the enforced body limit. */
export function contentEncodingParameter(limits: EnforcedLimits): Json {
  return {
    name: 'Content-Encoding',
    in: 'header',
    required: false,
    description: `Coding of the request body (RFC 9110 §8.4): \`gzip\` (or \`x-gzip\`), \`deflate\` (zlib format) or \`br\`, any case; \`identity\` or absent: none. The ${formatBytes(limits.bodyLimitBytes)} limit applies to the decoded body (413). Any other coding, or more than one: 415.`,
    schema: { type: 'string', examples: ['gzip', 'br'] },
  };
}

/**
 * The success response of an operation: `description`, headers, a JSON body of schema
 * `schema`, and `example`, a real answer of the operation (ids and times differ on yours).
 */
export function jsonResponse(description: string, schema: string, example: Json, headers: JsonObject = authenticatedHeaders): Json {
  return { description, headers, content: { 'application/json': { schema: schemaRef(schema), examples: { [schema]: { summary: description, value: example } } } } };
}

/** A JSON request body of schema `schema` with named examples (`name` → value). */
export function jsonRequestBody(schema: string, examples: { readonly [name: string]: Json }): Json {
  return {
    required: true,
    content: { 'application/json': { schema: schemaRef(schema), examples: Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }])) } },
  };
}

/**
 * The rate-limit headers of an error answer: sent when the request was charged (its
 * credential was accepted), absent when it was refused before (a 401, a request Node's
 * HTTP parser refused), hence `required: false` (docs/CONTRACT.md "Rate limits").
 */
function chargedHeaders(): JsonObject {
  const out: { [key: string]: Json } = { 'X-Request-Id': headerRef('X-Request-Id') };
  for (const h of RATE_LIMIT) out[h] = { description: `\`${h}\` of the charge, when the request was charged (see components.headers).`, required: false, schema: { type: h === 'x-ratelimit-reset' ? 'string' : 'integer' } };
  return out;
}

/**
 * The problem details response of one status: the `Problem` schema with `code` narrowed
 * to `codes` (what this status can carry on this operation), and the named examples of
 * `components.examples` (`examples.ts`: real answers; default: one per code).
 */
export function problemResponse(description: string, codes: readonly ProblemCode[], options: { readonly examples?: readonly ProblemExampleName[]; readonly headers?: JsonObject } = {}): Json {
  const examples = options.examples ?? (codes as readonly ProblemExampleName[]);
  return {
    description,
    headers: options.headers ?? chargedHeaders(),
    content: {
      'application/problem+json': {
        schema: { allOf: [schemaRef('Problem'), { type: 'object', properties: { code: { enum: [...codes] } } }] },
        examples: Object.fromEntries(examples.map((name) => [name, { $ref: `#/components/examples/${name}` }])),
      },
    },
  };
}

/** A `code` of a problem details answer (the keys of `STATUS_BY_CODE`). */
export type ProblemCode = keyof typeof STATUS_BY_CODE;

/**
 * Codes Node's HTTP parser answers with 400 on any path, before any operation is chosen
 * (`client-errors.ts`): every operation can answer them.
 */
export const PARSER_400_CODES = ['bad_request', 'invalid_header'] as const satisfies readonly ProblemCode[];

/** The reusable headers (`components.headers`); the deprecation headers when an operation is deprecated. */
export function headerComponents(withDeprecation: boolean): JsonObject {
  return {
    'RateLimit-Limit': header('Requests allowed in the current window (of the tightest applicable limit).'),
    'RateLimit-Remaining': header('Requests remaining in the current window.'),
    'RateLimit-Reset': header('Seconds until the window resets (a delta).'),
    'Retry-After': header('Seconds to wait before retrying.'),
    'x-ratelimit-limit': header('Legacy alias of RateLimit-Limit.'),
    'x-ratelimit-remaining': header('Legacy alias of RateLimit-Remaining.'),
    'x-ratelimit-reset': header('Unix timestamp in seconds at which the window resets.', 'string'),
    'X-Request-Id': header('Request id: a valid incoming one is echoed, else one is made.', 'string'),
    Location: header('The run status URL.', 'string'),
    'Idempotent-Replayed': {
      description: '`true` on an answer replayed for a repeated `Idempotency-Key` (the first answer: status, `Location`, body byte for byte); absent otherwise.',
      required: false,
      schema: { type: 'string', enum: ['true'] },
    },
    'Accept-Encoding': header('On a 415 for a content coding: the codings a request body may use (RFC 9110 §15.5.16).', 'string'),
    // Only listed by deprecated operations: without one they would be unused components.
    ...(withDeprecation
      ? {
          Deprecation: header('RFC 9745: present when the operation is deprecated (`@<unix seconds>`).', 'string'),
          Sunset: header('RFC 8594: when a deprecated operation stops working (HTTP-date).', 'string'),
          Link: header('`<url>; rel="deprecation"` on deprecated operations.', 'string'),
        }
      : {}),
  };
}

const IN_USE =
  '`idempotency_key_in_use`: the first request with this `Idempotency-Key` is still being processed; nothing was done. Retry after `Retry-After` seconds to get its answer.';

/** The headers of an answer that is charged to no window: only `X-Request-Id`. */
export const ONLY_REQUEST_ID: JsonObject = { 'X-Request-Id': headerRef('X-Request-Id') };
const PARSER_400_NOTE =
  ' `bad_request` and `invalid_header` (a malformed header, `Content-Length` or `Transfer-Encoding`) come from the HTTP parser, before any operation is chosen, with `Connection: close`.';

/**
 * The reusable error responses (`components.responses`), stating the enforced limits.
 * One per status and set of codes: a 400 of a list carries other codes than a 400 of a
 * row write. Source: docs/CONTRACT.md "Envelope and errors"; `STATUS_BY_CODE`.
 */
export function responseComponents(limits: EnforcedLimits): JsonObject {
  const body = formatBytes(limits.bodyLimitBytes);
  const agent = `${limits.agent.limit} / ${limits.agent.windowSeconds} s`;
  const wwwAuthenticate = header('`Bearer realm="svc"`, with `error="invalid_token"` for a bad credential (RFC 6750).', 'string');
  return {
    BadRequest: problemResponse(`A request the HTTP parser refuses.${PARSER_400_NOTE}`, PARSER_400_CODES, { headers: ONLY_REQUEST_ID }),
    BadRequestList: problemResponse(
      `\`validation_failed\`: a query parameter is invalid or sent twice; \`invalid_cursor\`: a \`cursor\` this service did not sign for this account, list and filters. \`errors[0].path\` names the parameter (\`/limit\`, \`/cursor\`, …) and \`detail\` starts \`query parameter <name>:\`.${PARSER_400_NOTE}`,
      ['validation_failed', 'invalid_cursor', ...PARSER_400_CODES],
      { examples: ['validation_failed_query', 'invalid_cursor', ...PARSER_400_CODES] },
    ),
    BadRequestRunStart: problemResponse(
      `\`validation_failed\` (with \`errors\`: every failed rule, JSON Pointer paths; an invalid \`Idempotency-Key\` is named \`/Idempotency-Key\`); \`invalid_json\` (not JSON, not UTF-8, a member name given twice — the detail names its JSON Pointer —, or a coded body that is corrupt or truncated).${PARSER_400_NOTE}`,
      ['validation_failed', 'invalid_json', ...PARSER_400_CODES],
      { examples: ['validation_failed_run', 'validation_failed_idempotency_key', 'invalid_json', ...PARSER_400_CODES] },
    ),
    BadRequestRowWrite: problemResponse(
      `Invalid request: \`validation_failed\` (with \`errors\`: also an invalid \`Idempotency-Key\`, named \`/Idempotency-Key\`; more columns than parameters allow, or two column names equal case-insensitively); \`invalid_json\` (not JSON, not UTF-8, a member name given twice — the detail names its JSON Pointer —, or a coded body that is corrupt or truncated); \`invalid_header\` (\`X-Svc-Egress\` neither \`true\` nor \`false\`); \`invalid_value\` with \`errors\` naming each number in \`values\` or \`key_value\` that cannot be written exactly (an integer beyond bigint and 38 digits, more than 38 digits, or more than 38 after the point); or a refusal of the database or connection (\`writes_not_supported\`, \`unknown_entity\`, \`unknown_column\`, \`constraint_violation\`, \`invalid_value\`).${PARSER_400_NOTE}`,
      ['validation_failed', 'invalid_json', 'invalid_header', 'invalid_value', 'writes_not_supported', 'unknown_entity', 'unknown_column', 'constraint_violation', 'bad_request'],
      {
        examples: ['validation_failed', 'validation_failed_idempotency_key', 'invalid_json', 'invalid_header_egress', 'invalid_value', 'writes_not_supported', 'unknown_entity', 'unknown_column', 'constraint_violation', ...PARSER_400_CODES],
      },
    ),
    BadRequestMcp: problemResponse(
      `\`invalid_json\`: the body is not one JSON value (not JSON, not UTF-8, a member name given twice, a coded body that is corrupt).${PARSER_400_NOTE}`,
      ['invalid_json', ...PARSER_400_CODES],
    ),
    Unauthorized: problemResponse('Missing, invalid, expired or unsupported credential; with `WWW-Authenticate`. Never charged: no rate-limit headers.', ['missing_credential', 'invalid_credential', 'expired_credential', 'unsupported_credential'], {
      headers: { ...ONLY_REQUEST_ID, 'WWW-Authenticate': wwwAuthenticate },
    }),
    Forbidden: problemResponse('`insufficient_scope`: a valid OAuth access token without the scope (RFC 6750 §3.1).', ['insufficient_scope'], {
      headers: { ...ONLY_REQUEST_ID, 'WWW-Authenticate': header('`Bearer realm="svc", error="insufficient_scope", scope="..."`.', 'string') },
    }),
    NotFound: problemResponse("`not_found`: unknown, or not visible to the caller's account (never tells which).", ['not_found']),
    Conflict: problemResponse(
      `\`ambiguous_key\`: the key selects more than one row; nothing was changed. ${IN_USE}`,
      ['ambiguous_key', 'idempotency_key_in_use'],
      { headers: { ...chargedHeaders(), 'Retry-After': { description: 'Seconds to wait before retrying; with `idempotency_key_in_use` only.', required: false, schema: { type: 'integer' } } } },
    ),
    ConflictIdempotencyKey: problemResponse(IN_USE, ['idempotency_key_in_use'], { headers: { ...chargedHeaders(), 'Retry-After': headerRef('Retry-After') } }),
    IdempotencyKeyReused: problemResponse(
      '`idempotency_key_reused`: this `Idempotency-Key` was used with another request of this account within 24 h (another method, path or body; member order and whitespace do not count). Nothing was done; send a new key for a new request.',
      ['idempotency_key_reused'],
    ),
    ConflictFile: problemResponse(
      '`file_in_use`: a `queued` or `running` run uses the file (delete); `file_not_pending`: the file is not `pending` any more (an upload to a completed file, or a complete after `expires_at`); `file_not_uploaded`: `complete` before any bytes were uploaded.',
      ['file_in_use', 'file_not_pending', 'file_not_uploaded'],
    ),
    UploadForbidden: problemResponse('`upload_url_invalid`: the upload address is not one this server signed for this file (changed or truncated), or it has expired; prepare the file again. No credential is accepted instead.', ['upload_url_invalid'], { headers: ONLY_REQUEST_ID }),
    UploadTooLarge: problemResponse('`upload_too_large`: the upload has more bytes than `size_bytes` (by its `Content-Length`, or counted as it arrived); nothing past `size_bytes` was written, nothing was kept, and the connection is closed.', ['upload_too_large'], { headers: ONLY_REQUEST_ID }),
    BadRequestUpload: problemResponse(`\`upload_size_mismatch\`: the upload has fewer bytes than \`size_bytes\` (by its \`Content-Length\`, or it ended early); nothing was kept.\${PARSER_400_NOTE}`, ['upload_size_mismatch', ...PARSER_400_CODES], { headers: ONLY_REQUEST_ID }),
    ConflictRunFinal: problemResponse('`run_final`: the run is already `succeeded`, `failed` or `cancelled`; nothing was changed.', ['run_final']),
    PayloadTooLarge: problemResponse(
      `\`payload_too_large\`: the body is over ${body} (${limits.bodyLimitBytes} bytes), counted after decoding its \`Content-Encoding\` (a compressed body that inflates past ${body} is refused without being inflated further); or chunk extensions too large (the HTTP parser, on any path, with \`Connection: close\`).`,
      ['payload_too_large'],
    ),
    PayloadTooLargeParser: problemResponse('`payload_too_large`: chunk extensions of a chunked body too large; answered by the HTTP parser, before any operation is chosen, with `Connection: close`.', ['payload_too_large'], {
      headers: ONLY_REQUEST_ID,
    }),
    UnsupportedMediaType: problemResponse(
      '`unsupported_media_type`: the body must be `application/json` in UTF-8, sent as is or with `Content-Encoding` `gzip`, `deflate` or `br`; any other coding, or two stacked codings, is refused naming it. Every 415 carries `Accept-Encoding: gzip, deflate, br`.',
      ['unsupported_media_type'],
      { headers: { ...chargedHeaders(), 'Accept-Encoding': headerRef('Accept-Encoding') } },
    ),
    TooManyRequests: problemResponse(`\`rate_limited\`: over the credential limit or, on run creation, the per-agent limit (${agent}). Not charged to any window.`, ['rate_limited'], { headers: rateLimited(true) }),
    InternalError: problemResponse('`internal_error`: a bug; logged with the request id, which the detail quotes. Never a stack trace.', ['internal_error']),
    BadGateway: problemResponse("`connection_unavailable`: the customer's database cannot be reached or refused the login.", ['connection_unavailable']),
    ServiceUnavailable: problemResponse(
      '`service_unavailable`: a dependency of this service (Redis: the run queue and the run store; rate limits then fall back to in-memory limits; the catalog database) is lost, failing or paused; answered within the server\'s `dependency_timeout_ms` (default 2 s). Nothing was done: on run start the run was not created (its record and job are written in one transaction, withdrawn when that transaction got no answer), with one exception, a Redis that applied the run and died before answering: that run exists and runs once. Retry after `Retry-After` seconds.',
      ['service_unavailable'],
      { headers: { ...chargedHeaders(), 'Retry-After': headerRef('Retry-After') } },
    ),
    GatewayTimeout: problemResponse(
      "`connection_timeout`: the customer's database did not answer within the server's `request_timeout_ms`; answered then, whether or not the database acknowledged the cancel. The write may or may not have applied; it is never reported as a success and never resent.",
      ['connection_timeout'],
    ),
    RequestTimeout: problemResponse('`request_timeout`: the request was not received completely in time (the HTTP parser, on any path); the connection is closed.', ['request_timeout'], { headers: ONLY_REQUEST_ID }),
    ExpectationFailed: problemResponse('`expectation_failed`: an `Expect` other than `100-continue` (on any path, before any operation runs); the connection is closed unless its body was read.', ['expectation_failed'], {
      headers: ONLY_REQUEST_ID,
    }),
    RequestHeaderFieldsTooLarge: problemResponse('`request_header_fields_too_large`: the header section is over 16 KiB (the HTTP parser, on any path); the connection is closed.', ['request_header_fields_too_large'], {
      headers: ONLY_REQUEST_ID,
    }),
  };
}

/**
 * The error responses every operation can give whatever it does, in status order with
 * `extra` (keyed by status): the HTTP parser's refusals (400, 408, 413 of chunk
 * extensions, 417, 431), answered before any operation is chosen, and 500 (a bug).
 * `extra` replaces a default of the same status (e.g. a row write's own 400 and 413).
 */
export function errorResponses(extra: JsonObject = {}): JsonObject {
  const all: { [status: string]: Json } = {
    '400': responseRef('BadRequest'),
    '408': responseRef('RequestTimeout'),
    '413': responseRef('PayloadTooLargeParser'),
    '417': responseRef('ExpectationFailed'),
    '431': responseRef('RequestHeaderFieldsTooLarge'),
    '500': responseRef('InternalError'),
    ...extra,
  };
  return Object.fromEntries(Object.keys(all).sort().map((status) => [status, all[status] as Json]));
}

/** The security schemes (`components.securitySchemes`). */
export function securitySchemes(): JsonObject {
  return {
    ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key `svc-...`.' },
    BearerApiKey: { type: 'http', scheme: 'bearer', description: 'API key `svc-...` as a bearer token.' },
    AccessToken: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'svcpt_',
      description: `OAuth access token \`svcpt_...\`; accepted on run operations only. Scopes: ${SUPPORTED_SCOPES.join(', ')}.`,
    },
  };
}

/** The `connection_id` path parameter of the row writes. */
export const connectionIdParameter: Json = {
  name: 'connection_id', in: 'path', required: true, description: 'Connection UUID.', schema: { type: 'string', format: 'uuid' },
};

/**
 * `true` or `false` in any case, spelled out letter by letter in character classes so
 * that any JSON Schema validator (none has a case-insensitive flag) accepts exactly what
 * the server accepts. Source: docs/CONTRACT.md "Row writes"; core `parseEgressHeader`.
 */
export const EGRESS_HEADER_PATTERN = '^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$';

/**
 * The `X-Svc-Egress` header (the row writes on the main address, the MCP endpoint): a
 * case-insensitive boolean, described by a pattern rather than an enum of spellings.
 */
export function egressHeaderParameter(description: string, refusal = '400 `invalid_header`'): Json {
  return {
    name: 'X-Svc-Egress',
    in: 'header',
    required: false,
    description: `${description} A case-insensitive boolean: \`true\` or \`false\` in any case (\`TRUE\`, \`False\`, …); absent: \`false\`. Any other value (also the header sent twice): ${refusal}.`,
    schema: { type: 'string', pattern: EGRESS_HEADER_PATTERN, examples: ['true', 'false'] },
  };
}

/**
 * The `Idempotency-Key` request header of the run start and the row writes (IETF httpapi
 * draft "The Idempotency-Key HTTP Header Field"). Source: docs/CONTRACT.md "Runs lifecycle".
 */
export const idempotencyKeyParameter: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: 1..255 printable ASCII characters of your choice (a UUID is a good one), scoped to your account. The same key with the same request (method, path and JSON body; member order and whitespace do not count) within 24 h answers the first answer again (status, `Location`, body byte for byte) with `Idempotent-Replayed: true`, without doing the work again; replays count against the credential\'s rate limit only. With another request: 422 `idempotency_key_reused`; while the first is still in flight: 409 `idempotency_key_in_use` with `Retry-After`. Kept: 2xx and 4xx answers of the operation; not kept (the key stays free): 401, 403, 429 and every 5xx. An empty or invalid key (or the header sent twice): 400 `validation_failed` naming `/Idempotency-Key`.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$', examples: ['3f0c9a4e-7b7d-4c55-9d8e-2f61a2b0c1d4'] },
};

/** The headers of a success that may be replayed: those of every authenticated success and `Idempotent-Replayed`. */
export const replayableHeaders: JsonObject = { ...authenticatedHeaders, 'Idempotent-Replayed': headerRef('Idempotent-Replayed') };

/** The error responses of a row write, with `extra` (e.g. 409). */
export function rowWriteErrors(extra: JsonObject = {}): JsonObject {
  return errorResponses({
    '400': responseRef('BadRequestRowWrite'),
    '401': responseRef('Unauthorized'),
    '404': responseRef('NotFound'),
    '409': responseRef('ConflictIdempotencyKey'),
    '422': responseRef('IdempotencyKeyReused'),
    ...extra,
    '413': responseRef('PayloadTooLarge'),
    '415': responseRef('UnsupportedMediaType'),
    '429': responseRef('TooManyRequests'),
    '502': responseRef('BadGateway'),
    '503': responseRef('ServiceUnavailable'),
    '504': responseRef('GatewayTimeout'),
  });
}
