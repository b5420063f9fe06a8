/**
 * How results and failures are printed: `--output table` (default) for people, `--output
 * json` for programs. Results go to stdout; failures and progress to stderr, so that stdout
 * holds only the result.
 */
import { SvcApiError, SvcFileRejectedError, SvcNetworkError } from '@svc/client';

/** `--output` values. */
export const OUTPUT_FORMATS = ['table', 'json'] as const;
/** One of {@link OUTPUT_FORMATS}. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A cell: strings as they are, other values as JSON (`null`, numbers, nested objects). */
function cell(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? '';
}

/** An object as two left-aligned columns, one field a line (nested values as JSON). */
export function keyValueTable(object: Record<string, unknown>): string {
  const entries = Object.entries(object).filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n') + '\n';
}

/** Rows as a table of left-aligned columns (a header line, then one line a row), as `svc-server` prints lists. */
export function table(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const text = rows.map((r) => r.map(cell));
  const widths = header.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  return [header, ...text].map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n';
}

/** A result: JSON (two-space indented) or {@link keyValueTable}. */
export function formatResult(format: OutputFormat, value: Record<string, unknown>): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : keyValueTable(value);
}

/**
 * A failure of the API or of the network, or an upload the API rejected, for stderr. With
 * `json`, a problem's whole body (the API's own JSON), `{"error": kind, "detail": ...}` for a
 * network failure, or `{"error": "file_rejected", "detail": reason, "file": {...}}`;
 * otherwise readable lines: status and code, detail, each validation error, the request id
 * (for a rejected file: the reason, then the file key).
 */
export function formatFailure(format: OutputFormat, error: SvcApiError | SvcNetworkError | SvcFileRejectedError): string {
  if (error instanceof SvcFileRejectedError) {
    return format === 'json'
      ? `${JSON.stringify({ error: 'file_rejected', detail: error.reason, file: error.file }, null, 2)}\n`
      : `svc: file rejected: ${error.file.file_name}: ${error.reason}\n  file key: ${error.file.file_key}\n`;
  }
  if (error instanceof SvcNetworkError) {
    return format === 'json' ? `${JSON.stringify({ error: error.kind, detail: error.message })}\n` : `svc: no answer (${error.kind.replace('_', ' ')}): ${error.message}\n`;
  }
  if (format === 'json') {
    const body = typeof error.body === 'object' && error.body !== null ? error.body : { status: error.status, detail: error.detail };
    return `${JSON.stringify(body, null, 2)}\n`;
  }
  const lines = [`svc: ${error.status}${error.code === undefined ? '' : ` ${error.code}`}: ${error.detail}`];
  for (const e of error.errors) lines.push(`  ${e.path || '(body)'}: ${e.message}`);
  if (error.retryAfterSeconds !== undefined) lines.push(`  retry after: ${error.retryAfterSeconds} s`);
  if (error.requestId !== undefined) lines.push(`  request id: ${error.requestId}`);
  return `${lines.join('\n')}\n`;
}
