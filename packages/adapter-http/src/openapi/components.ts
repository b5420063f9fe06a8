/**
 * The shared parts of the OpenAPI 3.1 document: reusable responses, headers and
 * parameters, and the helpers route modules write their operation objects with.
 * Limits come from the settings the server enforces, never from literals here.
 */
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, SUPPORTED_SCOPES } from '@svc/core';
import { formatBytes, type EnforcedLimits } from '../settings.js';

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

/** The success response of an operation: `description`, headers, a JSON body of schema `schema`. */
export function jsonResponse(description: string, schema: string, headers: JsonObject = authenticatedHeaders): Json {
  return { description, headers, content: { 'application/json': { schema: schemaRef(schema) } } };
}

function problem(description: string, headers: JsonObject = { 'X-Request-Id': headerRef('X-Request-Id') }): Json {
  return { description, headers, content: { 'application/problem+json': { schema: schemaRef('Problem') } } };
}

/** The reusable headers (`components.headers`). */
export function headerComponents(): JsonObject {
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
    'Accept-Encoding': header('On a 415 for a content coding: the codings a request body may use (RFC 9110 §15.5.16).', 'string'),
    Deprecation: header('RFC 9745: present when the operation is deprecated (`@<unix seconds>`).', 'string'),
    Sunset: header('RFC 8594: when a deprecated operation stops working (HTTP-date).', 'string'),
    Link: header('`<url>; rel="deprecation"` on deprecated operations.', 'string'),
  };
}

/** The reusable error responses (`components.responses`), stating the enforced limits. */
export function responseComponents(limits: EnforcedLimits): JsonObject {
  const body = formatBytes(limits.bodyLimitBytes);
  const agent = `${limits.agent.limit} / ${limits.agent.windowSeconds} s`;
  return {
    BadRequest: problem(
      'Invalid request: `validation_failed` (with `errors`: also more columns than parameters allow, or two column names equal case-insensitively); `invalid_json` (not JSON, not UTF-8, a member name given twice — the detail names its JSON Pointer —, or a coded body that is corrupt or truncated); `invalid_header`; `invalid_value` with `errors` naming each number in `values` or `key_value` that cannot be written exactly (an integer beyond bigint and 38 digits, more than 38 digits, or more than 38 after the point); or a row-write refusal (`writes_not_supported`, `unknown_entity`, `unknown_column`, `constraint_violation`, `invalid_value`).',
      rateLimited(false),
    ),
    Unauthorized: problem('Missing, invalid, expired or unsupported credential; with `WWW-Authenticate`.', {
      'X-Request-Id': headerRef('X-Request-Id'),
      'WWW-Authenticate': header('`Bearer realm="svc"`, with `error="invalid_token"` for a bad credential (RFC 6750).', 'string'),
    }),
    Forbidden: problem('`insufficient_scope`: a valid OAuth access token without the scope (RFC 6750 §3.1).', {
      'X-Request-Id': headerRef('X-Request-Id'),
      'WWW-Authenticate': header('`Bearer realm="svc", error="insufficient_scope", scope="..."`.', 'string'),
    }),
    NotFound: problem('`not_found`: unknown, or not visible to the caller\'s account (never tells which).', rateLimited(false)),
    Conflict: problem('`ambiguous_key`: the key selects more than one row; nothing was changed.', rateLimited(false)),
    PayloadTooLarge: problem(
      `\`payload_too_large\`: the body is over ${body} (${limits.bodyLimitBytes} bytes), counted after decoding its \`Content-Encoding\` (a compressed body that inflates past ${body} is refused without being inflated further).`,
      rateLimited(false),
    ),
    UnsupportedMediaType: problem(
      '`unsupported_media_type`: the body must be `application/json` in UTF-8, sent as is or with `Content-Encoding` `gzip`, `deflate` or `br`; any other coding, or two stacked codings, is refused naming it. Every 415 carries `Accept-Encoding: gzip, deflate, br`.',
      { ...rateLimited(false), 'Accept-Encoding': headerRef('Accept-Encoding') },
    ),
    TooManyRequests: problem(`\`rate_limited\`: over the credential limit or, on run creation, the per-agent limit (${agent}).`, rateLimited(true)),
    BadGateway: problem('`connection_unavailable`: the customer\'s database cannot be reached or refused the login.', rateLimited(false)),
    ServiceUnavailable: problem(
      '`service_unavailable`: a dependency of this service (Redis: the run queue and the run store; rate limits then fall back to in-memory limits) is lost, failing or paused; answered within the server\'s `dependency_timeout_ms` (default 2 s). Nothing was done: on run start the run was not created (its record and job are written in one transaction, withdrawn when that transaction got no answer), with one exception, a Redis that applied the run and died before answering: that run exists and runs once. Retry after `Retry-After` seconds.',
      { 'X-Request-Id': headerRef('X-Request-Id'), 'Retry-After': headerRef('Retry-After') },
    ),
    GatewayTimeout: problem(
      '`connection_timeout`: the customer\'s database did not answer within the server\'s `request_timeout_ms`; answered then, whether or not the database acknowledged the cancel. The write may or may not have applied; it is never reported as a success and never resent.',
      rateLimited(false),
    ),
    RequestTimeout: problem('`request_timeout`: the request was not received completely in time; the connection is closed.'),
    ExpectationFailed: problem('`expectation_failed`: an `Expect` other than `100-continue`; the connection is closed.'),
    RequestHeaderFieldsTooLarge: problem('`request_header_fields_too_large`: the header section is over 16 KiB; the connection is closed.'),
  };
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

/** The `X-Svc-Egress` header of the row writes on the main address. */
export const egressHeaderParameter: Json = {
  name: 'X-Svc-Egress',
  in: 'header',
  required: false,
  description: '`true` routes the database traffic through the stable egress IP address that can be allowlisted; `false` or absent: the default route. Any other value: 400 `invalid_header`. Case-insensitive.',
  schema: { type: 'string', enum: ['true', 'false', 'TRUE', 'FALSE', 'True', 'False'] },
};

/** The error responses of a row write, with `extra` (e.g. 409) in status order. */
export function rowWriteErrors(extra: JsonObject = {}): JsonObject {
  return {
    '400': responseRef('BadRequest'),
    '401': responseRef('Unauthorized'),
    '404': responseRef('NotFound'),
    ...extra,
    '413': responseRef('PayloadTooLarge'),
    '415': responseRef('UnsupportedMediaType'),
    '429': responseRef('TooManyRequests'),
    '502': responseRef('BadGateway'),
    '503': responseRef('ServiceUnavailable'),
    '504': responseRef('GatewayTimeout'),
  };
}
