/**
 * Largest request body the API accepts, in bytes, counted after decoding its
 * `Content-Encoding`: 1 MiB. Over it: 413 `payload_too_large`. The one literal of this
 * limit: the HTTP adapter, the OpenAPI document and the server settings default to it.
 * Source: docs/CONTRACT.md "Row writes" and "Request bodies and headers".
 */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Longest id of an account, agent or run, in characters: ids are 1..128 characters (the
 * catalog's check constraints, the server settings' schema). A longer id names nothing,
 * so it is never looked up: the lookup answers as for a missing resource. Source:
 * docs/decisions.md "Isolation between accounts" (an unknown id answers like another
 * account's).
 */
export const MAX_RESOURCE_ID_LENGTH = 128;
