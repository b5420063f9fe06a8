/**
 * Structured logging, shaped like pino's `(fields, message)` so a pino logger fits as is.
 *
 * Contract: `fields` never carry secrets, SQL text, host names, user names, passwords or
 * row values (docs/CONTRACT.md "Envelope and errors"); implementations must not throw.
 */
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /**
   * False when lines at `level` are dropped (pino's `isLevelEnabled`), so that a caller can
   * skip gathering their fields; absent: every level is taken to be written.
   */
  isLevelEnabled?(level: 'info' | 'warn' | 'error'): boolean;
}

/** A logger that drops everything (the default where none is given). */
export const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  isLevelEnabled: () => false,
};
