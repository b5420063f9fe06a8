import type { Logger } from '../ports/logger.js';

/** One line a {@link RecordingLogger} received. */
export interface LogLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

/** A {@link Logger} that keeps what it is told (a fake with state, not a mock). */
export class RecordingLogger implements Logger {
  readonly lines: LogLine[] = [];

  info(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'info', fields, message });
  }

  warn(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'warn', fields, message });
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'error', fields, message });
  }

  /** The lines of one level. */
  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((l) => l.level === level);
  }

  /** Every line as JSON text, to assert that a secret appears nowhere. */
  text(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n');
  }
}
