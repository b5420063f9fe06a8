/**
 * Largest request body the API accepts, in bytes, counted after decoding its
 * `Content-Encoding`: 1 MiB. Over it: 413 `payload_too_large`. The one literal of this
 * limit: the HTTP adapter, the OpenAPI document and the server settings default to it.
 * Source: docs/CONTRACT.md "Row writes" and "Request bodies and headers".
 */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
