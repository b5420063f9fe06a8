import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from '@svc/core';
import { ConfigError, loadSettings, type ServerSettings } from './settings.js';

/**
 * Ms the file must stay quiet after a change event before it is read. Editors save in a
 * few steps within milliseconds (vim: rename the old file away, write a new one; others:
 * write a temporary file, rename it over; Kubernetes: swap the `..data` symlink), and
 * `writeFile` truncates before it writes: one read after the last step sees the whole
 * file, not a half-written one. 200 ms is long enough for those steps and short next to
 * the time a person takes to try the new key.
 */
export const RELOAD_DEBOUNCE_MS = 200;

/** Settings of {@link ConfigReloader}. */
export interface ConfigReloaderOptions {
  /** The configuration file; absent: the development account, nothing to reload. */
  readonly path: string | undefined;
  /** Where reloads are reported; its `debug` (pino's), when it has one, also hears of change events that reload nothing. */
  readonly logger: Logger & { debug?: Logger['info'] };
  /** Applies validated settings to the running server (`RunningServer.reload`). */
  readonly apply: (settings: ServerSettings, reason: string) => Promise<unknown>;
  /** Environment `loadSettings` reads (`REDIS_URL`); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Quiet time after a change event, in ms; default {@link RELOAD_DEBOUNCE_MS}. */
  readonly debounceMs?: number;
}

/** The sentences of a ConfigError, on one line, without the excerpt of the file the YAML parser adds. */
function oneLine(message: string): string {
  // The yaml package appends the offending lines of the file after a blank line; they may
  // hold a host or user name, which never goes into a log line.
  const [head = ''] = message.split('\n\n');
  return head.replace(/\n\s*/gu, ' ').trim();
}

/**
 * Reloads the configuration file of a running API server, on demand (SIGHUP) and when
 * the file changes (docs/decisions.md "Configuration reload"):
 *
 * - {@link watch} watches the file's directory (not the file: an editor that saves by
 *   renaming replaces the inode a file watch would follow); after any event there and
 *   {@link RELOAD_DEBOUNCE_MS} of quiet, the file is read, and reloaded when its bytes
 *   changed since the last load (events about other files, or a save without a change,
 *   reload nothing).
 * - {@link reload} reloads at once, whatever the file's bytes (SIGHUP).
 * - An invalid file (the ConfigError of `loadSettings`: it names the field), an empty one
 *   (most likely a write in progress) or a refused apply keeps the running configuration
 *   and logs one error line; nothing here ever exits the process or rejects.
 * - Reloads run one at a time, in order.
 */
export class ConfigReloader {
  private readonly path: string | undefined;
  private readonly logger: ConfigReloaderOptions['logger'];
  private readonly debounceMs: number;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** SHA-256 of the bytes last loaded (or refused): what a change event compares with. */
  private lastDigest: string | undefined;
  private closed = false;

  constructor(private readonly options: ConfigReloaderOptions) {
    this.path = options.path === undefined ? undefined : resolve(options.path);
    this.logger = options.logger;
    this.debounceMs = options.debounceMs ?? RELOAD_DEBOUNCE_MS;
  }

  /**
   * Reloads now (SIGHUP). Without a configuration file it logs that there is nothing to
   * reload. Resolves once this reload is done (applied or refused); never rejects.
   * @param reason - for the log lines, e.g. `SIGHUP`.
   */
  reload(reason: string): Promise<void> {
    if (this.path === undefined) {
      this.logger.info({ reason }, 'no configuration file (development account): nothing to reload');
      return Promise.resolve();
    }
    return this.enqueue(reason, false);
  }

  /**
   * Starts watching the file's directory (a no-op without a configuration file). Reads
   * the file once first: its bytes are those the server started with, so that only a
   * later change reloads. A watch that fails is logged once; SIGHUP still reloads.
   */
  async watch(): Promise<void> {
    if (this.path === undefined || this.watcher !== undefined || this.closed) return;
    this.lastDigest = await this.digest();
    try {
      // persistent: false — the listeners keep the process alive, not this watch.
      this.watcher = watch(dirname(this.path), { persistent: false }, () => this.changed());
      this.watcher.on('error', (error) => this.watchFailed(error));
    } catch (error) {
      this.watchFailed(error);
    }
  }

  /** Stops watching; later reloads are ignored (the server is stopping). Idempotent. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
  }

  private watchFailed(error: unknown): void {
    this.logger.warn({ error_code: (error as NodeJS.ErrnoException)?.code }, 'watching the configuration file stopped: SIGHUP still reloads it');
    this.watcher?.close();
    this.watcher = undefined;
  }

  private changed(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.enqueue('file change', true), this.debounceMs);
  }

  private enqueue(reason: string, onlyIfChanged: boolean): Promise<void> {
    const done = this.queue.then(() => this.reloadNow(reason, onlyIfChanged));
    this.queue = done;
    return done;
  }

  private async digest(): Promise<string | undefined> {
    try {
      return createHash('sha256').update(await readFile(this.path as string)).digest('hex');
    } catch {
      return undefined; // gone for a moment (a save by rename): loadSettings names the file if it stays so
    }
  }

  private async reloadNow(reason: string, onlyIfChanged: boolean): Promise<void> {
    if (this.closed) {
      this.logger.info({ reason }, 'stopping: configuration not reloaded');
      return;
    }
    const path = this.path as string;
    let text: string | undefined;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      text = undefined;
    }
    const digest = text === undefined ? undefined : createHash('sha256').update(text).digest('hex');
    if (onlyIfChanged && (digest === undefined || digest === this.lastDigest)) {
      this.logger.debug?.({ reason }, digest === undefined ? 'configuration file not readable now: not reloaded' : 'configuration file unchanged: not reloaded');
      return;
    }
    this.lastDigest = digest;
    if (text !== undefined && text.trim() === '') {
      this.logger.error({ reason, config_file: path }, 'configuration not reloaded, the running one is kept: the file is empty');
      return;
    }
    try {
      await this.options.apply(loadSettings(path, this.options.env), reason);
    } catch (error) {
      const why = error instanceof ConfigError ? oneLine(error.message) : `${(error as Error)?.message ?? String(error)}`;
      this.logger.error({ reason, config_file: path }, `configuration not reloaded, the running one is kept: ${why}`);
    }
  }
}
