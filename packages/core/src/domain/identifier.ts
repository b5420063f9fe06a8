import { err, ok, type Result } from './result.js';

/**
 * Longest identifier part, in UTF-16 code units: SQL Server's `sysname` is
 * `nvarchar(128)`. Source: docs/CONTRACT.md "Row writes" (each part 1..128 characters).
 */
export const MAX_IDENTIFIER_LENGTH = 128;

// C0 controls, DEL and C1 controls: they cannot be typed, they break logs and quoting.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/**
 * Checks one SQL identifier part (a schema, table or column name) against the rules of
 * docs/CONTRACT.md "Row writes": 1..128 characters, no control characters, no dot. `]`,
 * spaces and any other printable character are allowed; the SQL adapter quotes them.
 *
 * @param part - the candidate name.
 * @returns the name, or a message naming the broken rule.
 */
export function checkIdentifierPart(part: string): Result<string, string> {
  if (part.length === 0) return err('must not be empty');
  if (part.length > MAX_IDENTIFIER_LENGTH) return err(`must be at most ${MAX_IDENTIFIER_LENGTH} characters`);
  if (CONTROL.test(part)) return err('must not contain control characters');
  if (part.includes('.')) return err('must not contain a dot');
  return ok(part);
}
