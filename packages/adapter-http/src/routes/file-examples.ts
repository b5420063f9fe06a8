import type { Json } from '../openapi/components.js';

/** A `ready` file as the file operations answer it (the examples of the OpenAPI document). */
export const FILE_EXAMPLE: Json = {
  file_key: 'file_3f2a9c0d5e6b47a18c9d0e1f2a3b4c5d',
  file_name: 'invoice-2026-11.pdf',
  content_type: 'application/pdf',
  size_bytes: 48213,
  sha256: '9f2c1b0e5d4a3f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e',
  status: 'ready',
  reason: null,
  created_at: '2026-11-24T09:30:00.000Z',
  expires_at: '2026-12-01T09:30:41.000Z',
};

/** The answer to a prepare: `pending`, with its upload address. */
export const PREPARED_FILE_EXAMPLE: Json = {
  ...(FILE_EXAMPLE as Record<string, Json>),
  sha256: null,
  status: 'pending',
  expires_at: '2026-11-24T10:30:00.000Z',
  upload_url: 'https://api.svc.example.test/api/v1/files/file_3f2a9c0d5e6b47a18c9d0e1f2a3b4c5d/upload?expires=1795516200&signature=q2C7s0pYcJ1rW9m3t5v8x0z2B4D6F8H0J2L4N6P8R0T',
  upload_method: 'PUT',
  upload_headers: { 'Content-Type': 'application/pdf' },
};

/** The `file_key` path parameter. */
export const FILE_KEY_PARAMETER: Json = { name: 'file_key', in: 'path', required: true, description: 'The file key `POST /api/v1/files` answered.', schema: { type: 'string' } };
