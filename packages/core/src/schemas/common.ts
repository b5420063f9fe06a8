/**
 * Building blocks of the request body schemas (JSON Schema 2020-12, as used by
 * OpenAPI 3.1). Source: docs/CONTRACT.md "Row writes" and "Runs".
 */

/**
 * One identifier part: 1..128 characters, no control characters, no dot.
 * Source: docs/CONTRACT.md "Row writes".
 */
export const IDENTIFIER_PATTERN = '^[^.\\p{Cc}]{1,128}$';

/** `schema.table`, each part an identifier. Source: docs/CONTRACT.md "Row writes". */
export const ENTITY_PATTERN = '^[^.\\p{Cc}]{1,128}\\.[^.\\p{Cc}]{1,128}$';

/** A media type `type/subtype` (RFC 6838 restricted names, optional parameters). */
export const MEDIA_TYPE_PATTERN =
  "^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\\s*;\\s*[A-Za-z0-9!#$&^_.+-]+=(\"[^\"]*\"|[A-Za-z0-9!#$&^_.+-]+))*$";

/** Schema of `entity`. */
export const entitySchema = {
  type: 'string',
  pattern: ENTITY_PATTERN,
  description:
    'Table written `schema.table`: exactly two parts, each 1..128 characters, no control characters and no dot inside a part. `]` and spaces are allowed; the server quotes identifiers and never splices them into SQL.',
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
