import type { Logger } from '@svc/core';
import pg from 'pg';
import pRetry from 'p-retry';
import { pgClientConfig } from './connection-options.js';
import { LISTENER_APPLICATION_NAME, type PostgresConnection } from './settings.js';
import { catalogUnavailable, safeCause } from './errors.js';
import { channelOf, quoted } from './schema.js';

/** Settings of a {@link ChangeListener}. */
export interface ChangeListenerSettings {
  readonly connection: PostgresConnection;
  readonly schema: string;
  /** Bound of connect and of each query (LISTEN, heartbeat), in milliseconds. */
  readonly timeoutMs: number;
  /** Interval of the heartbeat query on the LISTEN connection, in milliseconds. */
  readonly heartbeatMs: number;
  /** First and longest wait between two reconnection attempts, in milliseconds. */
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  readonly logger: Logger;
  /** Called for every notification of the catalog's channel, with its payload (a table name). */
  readonly onChange: (table: string) => void;
  /** Called when the connection listens (first time and after each reconnection). */
  readonly onUp: () => void;
  /** Called when the connection is lost (before reconnecting). */
  readonly onDown: () => void;
}

/**
 * One PostgreSQL connection that LISTENs on the catalog's channel. When it is lost — an
 * error, the server closing it, or a heartbeat query unanswered within `timeoutMs` (a
 * silent server keeps the socket open) — it calls `onDown` and reconnects with a bounded
 * exponential backoff (`reconnectMinMs` doubling to `reconnectMaxMs`, randomised ×1..2 so
 * that many instances do not reconnect in step), then `onUp`.
 */
export class ChangeListener {
  private client: pg.Client | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private beating = false;
  private closed = false;
  private reconnecting: Promise<void> | undefined;
  private readonly stop = new AbortController();

  constructor(private readonly settings: ChangeListenerSettings) {}

  /** True while the connection listens. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /**
   * Connects and listens once.
   * @throws DependencyUnavailableError (`catalog`) when that fails.
   */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      throw catalogUnavailable(error);
    }
  }

  private async connect(): Promise<void> {
    const { settings } = this;
    const client = new pg.Client(pgClientConfig(settings.connection, settings.timeoutMs, LISTENER_APPLICATION_NAME));
    const channel = channelOf(settings.schema);
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    client.on('notification', (message) => {
      if (message.channel === channel) settings.onChange(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoted(channel)}`);
    } catch (error) {
      destroy(client);
      throw error;
    }
    if (this.closed) {
      destroy(client);
      return;
    }
    this.client = client;
    this.heartbeat = setInterval(() => this.beat(client), settings.heartbeatMs);
    this.heartbeat.unref();
    settings.onUp();
  }

  /** One heartbeat: a trivial query that must be answered within `timeoutMs` (pg `query_timeout`). */
  private beat(client: pg.Client): void {
    if (this.beating || this.client !== client) return;
    this.beating = true;
    client.query('select 1').then(
      () => (this.beating = false),
      (error: unknown) => {
        this.beating = false;
        this.lost(client, error);
      },
    );
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    clearInterval(this.heartbeat);
    destroy(client);
    this.settings.onDown();
    if (this.closed) return;
    this.settings.logger.warn({ dependency: 'catalog', cause: error === undefined ? 'connection ended' : safeCause(error).message }, 'catalog change listener lost; lookups bypass the cache until it listens again');
    this.reconnecting ??= this.reconnect().finally(() => (this.reconnecting = undefined));
  }

  private async reconnect(): Promise<void> {
    const { settings } = this;
    try {
      await pRetry(() => this.connect(), {
        retries: Number.POSITIVE_INFINITY,
        factor: 2,
        minTimeout: settings.reconnectMinMs,
        maxTimeout: settings.reconnectMaxMs,
        randomize: true,
        signal: this.stop.signal,
        unref: true,
      });
      if (!this.closed) settings.logger.info({ dependency: 'catalog' }, 'catalog change listener listens again; cache cleared');
    } catch {
      // Aborted by close(): nothing to do.
    }
  }

  /** Stops listening and reconnecting; closes the connection without waiting for the server. */
  close(): void {
    this.closed = true;
    this.stop.abort();
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) destroy(client);
  }
}

/**
 * Ends a client without waiting for a server that may never answer: pg's `end()` sends
 * Terminate and waits for the socket to close, which a silent server never does; the
 * socket is destroyed after a short grace instead.
 */
function destroy(client: pg.Client): void {
  client.end().catch(() => undefined);
  const stream = (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream;
  const timer = setTimeout(() => stream?.destroy?.(), 100);
  timer.unref();
}
