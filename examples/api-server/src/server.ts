import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleClientErrors } from '@svc/adapter-http';
import type { Logger } from '@svc/core';
import type { Container } from 'inversify';
import { DemoRunProcessor, LogNotifier } from '@svc/adapter-queue/memory';
import { buildApps, buildContainer, pickAdapters } from './container.js';
import type { ServerSettings } from './settings.js';

/** A running API server: both listeners, and how to stop it. */
export interface RunningServer {
  /** Port of the main listener (useful with port 0). */
  readonly port: number;
  /** Port of the egress listener. */
  readonly egressPort: number;
  readonly container: Container;
  /**
   * Stops accepting, lets in-flight requests finish (up to `shutdownGraceMs`), closes
   * idle keep-alive sockets, then releases every resource of the container.
   */
  stop(): Promise<void>;
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    // close() stops accepting and resolves once every connection has ended; idle
    // keep-alive sockets would hold it open, so they are closed now, busy ones after
    // their response, and anything left after the grace period is cut.
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Starts the API server: picks the adapters, builds the container, starts the worker
 * (unless disabled), both Koa apps and both listeners.
 * @throws when a port cannot be bound (the error of `listen`).
 */
export async function startServer(settings: ServerSettings, logger: Logger): Promise<RunningServer> {
  const adapters = await pickAdapters(settings, logger);
  const container = buildContainer(settings, logger, adapters);
  if (settings.worker.enabled) {
    // The demo processor stands in for the agent runtime an embedder supplies.
    await adapters.runs.startWorker(new DemoRunProcessor(), {
      notifier: new LogNotifier(logger),
      logger,
      concurrency: settings.worker.concurrency,
    });
  }
  let draining = false;
  const apps = buildApps(container, () => draining);
  const main = createServer({ keepAliveTimeout: 5_000 }, apps.main.callback());
  const egress = createServer({ keepAliveTimeout: 5_000 }, apps.egress.callback());
  // Once draining, a response in flight closes its keep-alive socket when it is done,
  // instead of idling until the keep-alive timeout holds the exit.
  for (const server of [main, egress]) {
    handleClientErrors(server, logger);
    server.on('request', (_req, res) => {
      if (draining) res.setHeader('Connection', 'close');
      res.once('finish', () => {
        if (draining) server.closeIdleConnections();
      });
    });
  }
  const port = await listen(main, settings.listen.host, settings.listen.port);
  const egressPort = await listen(egress, settings.egressListen.host, settings.egressListen.port);
  let stopping: Promise<void> | undefined;
  return {
    port,
    egressPort,
    container,
    stop() {
      stopping ??= (async () => {
        draining = true;
        await Promise.all([closeGracefully(main, settings.shutdownGraceMs), closeGracefully(egress, settings.shutdownGraceMs)]);
        await container.unbindAllAsync();
      })();
      return stopping;
    },
  };
}
