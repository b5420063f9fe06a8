import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleClientErrors } from '@svc/adapter-http';
import type { Logger } from '@svc/core';
import type { Container } from 'inversify';
import { DemoRunProcessor, LogNotifier, type RunWorker } from '@svc/adapter-queue/memory';
import { buildApps, buildContainer, closeAdapters, pickAdapters } from './container.js';
import type { ServerSettings } from './settings.js';
import { HttpDrain, within, type StopReport } from './shutdown.js';

export { drained, abandonedMessage, type StopReport } from './shutdown.js';

/** A running API server: both listeners, and how to stop it. */
export interface RunningServer {
  /** Port of the main listener (useful with port 0). */
  readonly port: number;
  /** Port of the egress listener. */
  readonly egressPort: number;
  readonly container: Container;
  /**
   * Stops (CONTRACT.md "Dependencies and faults"), in three phases of
   * {@link ServerSettings.shutdown}: for `delayMs` it keeps serving while `/readyz`
   * answers 503 `draining` and every answer carries `Connection: close`; then for at most
   * `graceMs` it stops accepting, answers what was received and what arrives on open
   * connections, and lets the worker finish its runs in progress; what is still open then
   * is cut or abandoned; then it closes clients and pools, each within `closeBudgetMs`.
   * Resolves within `delayMs + graceMs + closeBudgetMs` (plus timer slack) whatever state
   * Redis, the SQL Server pools or the worker are in; never rejects. A second call
   * returns the first one's promise.
   * @returns what was abandoned; {@link drained} tells whether anything was.
   */
  stop(): Promise<StopReport>;
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

/**
 * Starts the API server: picks the adapters, builds the container, starts the worker
 * (unless disabled), both Koa apps and both listeners.
 * @throws when a port cannot be bound (the error of `listen`).
 */
export async function startServer(settings: ServerSettings, logger: Logger): Promise<RunningServer> {
  const adapters = await pickAdapters(settings, logger);
  const container = buildContainer(settings, logger, adapters);
  let worker: RunWorker | undefined;
  if (settings.worker.enabled) {
    // The demo processor stands in for the agent runtime an embedder supplies.
    worker = await adapters.runs.startWorker(new DemoRunProcessor(), {
      notifier: new LogNotifier(logger),
      logger,
      concurrency: settings.worker.concurrency,
    });
  }
  let draining = false;
  const apps = buildApps(container, () => draining);
  const mainHandler = apps.main.callback();
  const egressHandler = apps.egress.callback();
  const main: Server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    mainDrain.onRequest(req, res);
    void mainHandler(req, res);
  });
  const egress: Server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    egressDrain.onRequest(req, res);
    void egressHandler(req, res);
  });
  const mainDrain = new HttpDrain(main);
  const egressDrain = new HttpDrain(egress);
  // Requests Node's parser refuses still get problem details (CONTRACT "Request bodies and headers").
  handleClientErrors(main, logger);
  handleClientErrors(egress, logger);
  const port = await listen(main, settings.listen.host, settings.listen.port);
  const egressPort = await listen(egress, settings.egressListen.host, settings.egressListen.port);
  let stopping: Promise<StopReport> | undefined;
  const { delayMs, graceMs, closeBudgetMs } = settings.shutdown;
  return {
    port,
    egressPort,
    container,
    stop() {
      stopping ??= (async () => {
        draining = true;
        mainDrain.announceClose();
        egressDrain.announceClose();
        if (delayMs > 0) await sleep(delayMs);
        // One deadline for drain and close: whatever the worker's close leaves of the
        // budget is what the clients and pools get.
        const deadline = Date.now() + graceMs + closeBudgetMs;
        const left = (): number => Math.max(0, deadline - Date.now());
        // The worker drains with the listeners: its runs need no HTTP, and the queue and
        // store that requests use stay open until the close phase. BullMQ's worker bounds
        // its wait by graceMs itself and then closes without waiting; the in-memory one
        // is waited for until the deadline.
        const runsClosed = worker === undefined ? undefined : within(worker.close(false, graceMs), left());
        const [cutMain, cutEgress] = await Promise.all([mainDrain.drain(graceMs), egressDrain.drain(graceMs)]);
        const runs = await runsClosed;
        // The runs step reports the clients its workers dropped, this worker's among them.
        const closeStepsUnfinished = await closeAdapters(adapters, left());
        // Nothing left to wait for: the deactivation hook finds the adapters closed.
        await within(container.unbindAllAsync(), left());
        return {
          requestsCut: cutMain + cutEgress,
          runsAbandoned: runs?.outcome === 'done' ? (runs.value?.abandonedRunIds ?? []) : [],
          inProcessRunsAbandoned: runs !== undefined && runs.outcome !== 'done',
          closeStepsUnfinished,
        };
      })();
      return stopping;
    },
  };
}
