import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminApp } from '@svc/adapter-http';
import type { Logger } from '@svc/core';
import type { ListenSettings } from '../settings.js';
import type { PrometheusTelemetry } from './metrics.js';

/** A running admin listener. */
export interface AdminListener {
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** Stops listening and drops its connections (a scrape is short; nothing to drain). */
  close(): Promise<void>;
}

/** What the admin listener serves besides metrics. */
export interface AdminSources {
  /** The public `/readyz` checks. */
  readonly readiness: Readonly<Record<string, () => Promise<boolean>>>;
  /** True while the server drains: `/readyz` answers 503 `draining`. */
  readonly isDraining: () => boolean;
  readonly logger: Logger;
}

/**
 * Starts the admin listener on `listen` (docs/CONTRACT.md "Admin listener"; default
 * `127.0.0.1:9464`, a separate listener, never the public address): `GET /metrics` (the
 * Prometheus exposition of `telemetry`), `/livez`, `/readyz` (adapter-http
 * `createAdminApp`).
 * @throws when the port cannot be bound (the error of `listen`).
 */
export async function startAdminListener(listen: ListenSettings, telemetry: PrometheusTelemetry, sources: AdminSources): Promise<AdminListener> {
  const app = createAdminApp({ metrics: () => telemetry.metrics(), readiness: sources.readiness, isDraining: sources.isDraining, logger: sources.logger });
  const server: Server = createServer({ keepAliveTimeout: 5_000 }, app.callback());
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
