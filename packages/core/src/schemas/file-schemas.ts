import { MAX_PAGE_LIMIT } from '../domain/page.js';
import { FILE_STATUSES } from '../domain/stored-file.js';
import { MEDIA_TYPE_PATTERN } from './common.js';

/** Longest `file_name`, in characters. Source: docs/CONTRACT.md "Files". */
export const MAX_FILE_NAME_LENGTH = 255;

/** `file_name`: 1..255 characters, none a path separator (`/`, `\`) or a control character. */
export const FILE_NAME_PATTERN = '^[^/\\\\\\u0000-\\u001f\\u007f]+$';

/**
 * Body of `POST /api/v1/files` (prepare a file). `size_bytes`' upper bound is the
 * server's `files.max_bytes`, checked by core `PrepareFile` (so it is not in the schema).
 * Source: docs/CONTRACT.md "Files".
 */
export const prepareFileBodySchema = {
  $id: 'PrepareFileRequest',
  title: 'PrepareFileRequest',
  type: 'object',
  additionalProperties: false,
  required: ['file_name', 'content_type', 'size_bytes'],
  properties: {
    file_name: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_FILE_NAME_LENGTH,
      pattern: FILE_NAME_PATTERN,
      description: `The file's name, 1..${MAX_FILE_NAME_LENGTH} characters without a path separator (\`/\`, \`\\\`) or control character; a run request names it again as \`file_name\`.`,
      examples: ['invoice-2026-11.pdf'],
    },
    content_type: {
      type: 'string',
      minLength: 3,
      maxLength: 255,
      pattern: MEDIA_TYPE_PATTERN,
      description: 'Media type `type/subtype` (RFC 6838). Checked against the bytes on `complete`: a type they contradict rejects the file.',
      examples: ['application/pdf'],
    },
    size_bytes: { type: 'integer', minimum: 1, description: 'Exact size of the file in bytes, 1..`files.max_bytes` (default 104857600, 100 MiB).', examples: [48213] },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the bytes, 64 lowercase hex digits; when given, `complete` rejects other bytes.' },
  },
} as const;

const timestamp = { type: 'string', format: 'date-time' } as const;

/** A file as every file operation answers it (core `FileView`). Source: docs/CONTRACT.md "Files". */
export const fileViewSchema = {
  $id: 'File',
  type: 'object',
  required: ['file_key', 'file_name', 'content_type', 'size_bytes', 'sha256', 'status', 'reason', 'created_at', 'expires_at'],
  properties: {
    file_key: { type: 'string', description: 'The key a run request names in `files[].file_key` or `background_files[].file_key`. Opaque.', examples: ['file_3f2a9c0d5e6b47a18c9d0e1f2a3b4c5d'] },
    file_name: { type: 'string', description: 'As prepared.' },
    content_type: { type: 'string', description: 'As prepared (lower case, without parameters).' },
    size_bytes: { type: 'integer', minimum: 1, description: 'As prepared; a `ready` file has exactly this many bytes.' },
    sha256: { type: ['string', 'null'], description: 'The SHA-256 of the bytes once `ready` (hex); before, the declared one, or null.' },
    status: { type: 'string', enum: [...FILE_STATUSES], description: '`pending` until `complete`; then `ready` or `rejected`; `expired` once past `expires_at`.' },
    reason: { type: ['string', 'null'], description: 'Why the file is `rejected` or `expired`; null otherwise.' },
    created_at: timestamp,
    expires_at: { ...timestamp, description: 'A `pending` file expires at the end of its upload address; a `ready` one `files.retention_days` (default 7) after it was last used by a run start, unless a live run still uses it.' },
    upload_url: { type: 'string', format: 'uri', description: 'Only in the answer to `POST /api/v1/files`: where to `PUT` the bytes (carries its own signature; send no credential).' },
    upload_method: { type: 'string', enum: ['PUT'], description: 'Only with `upload_url`.' },
    upload_headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Only with `upload_url`: headers to send with the bytes, exactly as given.' },
  },
} as const;

/** `{data: File}`. */
export const fileResponseSchema = {
  $id: 'FileResponse',
  type: 'object',
  required: ['data'],
  properties: { data: { $ref: 'File' } },
} as const;

/** `GET /api/v1/files`: a page of the caller's files. */
export const fileListSchema = {
  $id: 'FileList',
  type: 'object',
  required: ['data', 'next_cursor'],
  properties: {
    data: { type: 'array', maxItems: MAX_PAGE_LIMIT, items: { $ref: 'File' }, description: 'At most `limit` files, newest first (`created_at` descending, then `file_key`).' },
    next_cursor: { type: ['string', 'null'], description: 'The `cursor` of the next page (also in `Link: <...>; rel="next"`), or null on the last page. Opaque.' },
  },
} as const;
