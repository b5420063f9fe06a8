/**
 * Building blocks of the request body schemas (JSON Schema 2020-12, as used by
 * OpenAPI 3.1). Source: docs/CONTRACT.md "Row writes" and "Runs".
 */

/**
 * Refuses, at the start of an identifier part, one longer than 128 UTF-16 code units
 * (SQL Server's `sysname` is `nvarchar(128)`; core `MAX_IDENTIFIER_LENGTH`), which is what
 * `checkIdentifierPart` counts. JSON Schema patterns (unicode regexps) and `maxLength`
 * count code points, and a character outside the BMP is two code units: a part of `n`
 * code points of which `k` are such is `n + k` units, too long when `k >= 129 - n`.
 * Parts of at most 64 code points always fit. For `n` in 65..128 the pattern walks the
 * part one code point at a time and, where the part ends after `n`, looks back for
 * `129 - n` such characters: one pass over the part, whatever its content. Spelled out so
 * that the document's pattern accepts exactly what the server accepts (docs/decisions.md
 * "OpenAPI document").
 */
const UTF16_LIMIT_GUARD = ((): string => {
  // Disjoint classes: `(?:A B*){j}` matches one way only (no backtracking through splits).
  const astral = '[\\u{10000}-\\u{10FFFF}]';
  const other = '[^.\\u{10000}-\\u{10FFFF}]';
  const endsWith = (j: number): string => `(?=\\.|$)(?<=(?:${astral}${other}*){${j}})`;
  let walk = `[^.]${endsWith(1)}`;
  for (let n = 127; n >= 65; n -= 1) walk = `[^.](?:${endsWith(129 - n)}|${walk})`;
  return `(?![^.]{64}${walk})`;
})();

/** One identifier part as JSON Schema counts it: 1..128 code points, no control character, no dot. */
const PART = '[^.\\p{Cc}]{1,128}';

/**
 * One identifier part: 1..128 characters (UTF-16 code units, see {@link UTF16_LIMIT_GUARD}),
 * no control characters, no dot. Source: docs/CONTRACT.md "Row writes".
 */
export const IDENTIFIER_PATTERN = `^${UTF16_LIMIT_GUARD}${PART}$`;

/** `schema.table`, each part an identifier. Source: docs/CONTRACT.md "Row writes". */
export const ENTITY_PATTERN = `^${UTF16_LIMIT_GUARD}${PART}\\.${UTF16_LIMIT_GUARD}${PART}$`;

/** A media type `type/subtype` (RFC 6838 restricted names, optional parameters). */
export const MEDIA_TYPE_PATTERN =
  "^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\\s*;\\s*[A-Za-z0-9!#$&^_.+-]+=(\"[^\"]*\"|[A-Za-z0-9!#$&^_.+-]+))*$";

/** Schema of `entity`. */
export const entitySchema = {
  type: 'string',
  pattern: ENTITY_PATTERN,
  description:
    'Table written `schema.table`: exactly two parts, each 1..128 characters counted in UTF-16 code units (as SQL Server\'s `sysname`: a character outside the Basic Multilingual Plane, such as an emoji, counts two; the pattern spells this out), no control characters and no dot inside a part. Brackets are not quoting: `[dbo].[orders]` names the schema `[dbo]` and the table `[orders]`; `]`, `[` and spaces are allowed; the server quotes identifiers and never splices them into SQL.',
  examples: ['dbo.orders'],
} as const;

/** Schema of one column value. */
export const columnValueSchema = {
  type: ['string', 'number', 'boolean', 'null'],
  description: 'Column value: string, number, boolean or null. Always bound as a parameter.',
} as const;

/**
 * Most parameters one row write binds. SQL Server takes at most 2,100 parameters in one
 * RPC request, and `sp_executesql` (which carries every write) uses two of them for the
 * statement and its declarations: 2,101 or 2,102 are refused with error 8003 (seen by
 * SqlClient and EF Core users: dotnet/efcore#37336). Source: docs/CONTRACT.md "Exact values";
 * T-SQL "Maximum capacity specifications" (parameters per stored procedure).
 */
export const MAX_WRITE_PARAMETERS = 2_098;

/** Schema of `values`. */
export const columnValuesSchema = {
  type: 'object',
  minProperties: 1,
  maxProperties: MAX_WRITE_PARAMETERS,
  propertyNames: { pattern: IDENTIFIER_PATTERN },
  additionalProperties: columnValueSchema,
  description:
    'Column name to value pairs: at least one, at most 2,098 (SQL Server takes 2,100 parameters per request, two of which `sp_executesql` uses); an update at most 2,097, as `key_value` is one more parameter. Column names follow the identifier rules of `entity` parts and must differ case-insensitively. A number is written exactly (an integer within bigint, or a decimal of at most 38 digits) or refused with `invalid_value`.',
  examples: [{ sku: 'A-1', qty: 3, paid: true, note: null }],
} as const;

/** Schema of an uploaded file reference. Source: docs/api-spec.md "Uploaded file reference". */
export const fileReferenceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['file_key', 'file_name', 'content_type'],
  properties: {
    file_key: { type: 'string', minLength: 1, maxLength: 1024, description: 'Storage key of the uploaded file.' },
    file_name: { type: 'string', minLength: 1, maxLength: 1024, description: 'Original file name.' },
    content_type: {
      type: 'string',
      minLength: 3,
      maxLength: 255,
      pattern: MEDIA_TYPE_PATTERN,
      description: 'Media type `type/subtype` (RFC 6838).',
      examples: ['application/pdf'],
    },
  },
} as const;

/** Longest instruction text, in characters (a choice: the spec is silent). */
export const MAX_MESSAGE_LENGTH = 100_000;
