/**
 * An error's code or class name for a log line's `error_type` or a span's `error.type`,
 * e.g. `Error:ECONNREFUSED`: never its message, which may carry SQL text, a host name or
 * data (core `Logger` contract; docs/CONTRACT.md "Envelope and errors").
 */
export function errorTypeOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${error.name}:${code}` : error.name;
  }
  return typeof error;
}
