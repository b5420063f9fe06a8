import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleClientErrors, requestListener } from '@svc/adapter-http';
import { createWorker, FanOutNotifier, silentLogger, StoredRunFiles, type Core, type Logger, type Notifier, type RunBackend, type RunProcessor } from '@svc/core';
import type { Container } from 'inversify';
import { DemoRunProcessor, msUntil, RUN_WORKER_STOP_SLACK_MS, within, type RunWorker, type RunWorkerCloseReport } from '@svc/adapter-queue/memory';
import { buildApps, buildContainer, closeAdapters, pickAdapters, TOKENS } from './container.js';
import { emailNotifier } from './notifications.js';
import { applyReload, logReload, type ReloadReport } from './reload.js';
import type { ServerSettings } from './settings.js';
import { HttpDrain, type StopReport } from './shutdown.js';
import { startAdminListener, type AdminListener } from './observability/admin-listener.js';
import { serverTelemetry } from './observability/server-telemetry.js';
import { startWebhooks } from './webhooks.js';

/** A running API server: both listeners, and how to stop it. */
export interface RunningServer {
  /** Port of the main listener (useful with port 0). */
  readonly port: number;
  /** Port of the egress listener. */
  readonly egressPort: number;
  /** Port of the admin listener (`/metrics`, `/livez`, `/readyz`); absent when `admin_listen.enabled` is false. */
  readonly adminPort?: number;
  readonly container: Container;
  /**
   * Stops (docs/CONTRACT.md "Dependencies and faults"), in three phases of
   * {@link ServerSettings.shutdown}: for `delayMs` it keeps serving while `/readyz`
   * answers 503 `draining` and every answer carries `Connection: close`; then for at most
   * `graceMs` it stops accepting, answers what was received and what arrives on open
   * connections, and lets the worker finish its runs in progress (a durable worker stops
   * taking runs at once; the in-memory one keeps taking them until the HTTP drain is
   * done, since a run it leaves queued is lost); what is still open then is cut,
   * abandoned or lost; then it closes clients and pools, each within `closeBudgetMs` of
   * its own. Resolves within `delayMs + graceMs + RUN_WORKER_STOP_SLACK_MS +
   * closeBudgetMs` (plus timer slack) whatever state Redis, the SQL Server pools or the
   * worker are in; never rejects. A second call returns the first one's promise.
   * @returns what was abandoned; {@link drained} tells whether anything was.
   */
  stop(): Promise<StopReport>;
  /**
   * Applies a new configuration while serving (docs/decisions.md "Configuration reload"):
   * its accounts, API keys, OAuth tokens, agents and connections (the catalogs and the
   * writers' routes) replace the running ones at once, without a request dropped or
   * held; a removed SQL Server connection's pools close after its in-flight writes.
   * Every other setting stays as it was; the report names those that differ. Logs one
   * line with the counts (never a secret or digest), and one warning naming the settings
   * left as they were. Reloads run one at a time, in call order.
   * @param next - settings validated by `loadSettings`.
   * @param reason - what asked for it, for the log line (e.g. `SIGHUP`, `file change`).
   * @throws ConfigError naming the field when a SQL Server connection's password
   *   variable is not set (the running configuration is kept); Error once `stop()` was called.
   */
  reload(next: ServerSettings, reason?: string): Promise<ReloadReport>;
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
 * What {@link startServer} plugs in besides its settings. Source: README "Plug in your
 * agent runtime"; docs/decisions.md "Run processors".
 */
export interface ServerOptions {
  /** Where log lines go; default: nowhere. */
  readonly logger?: Logger;
  /**
   * The agent runtime that processes the runs (core `RunProcessor`); default the demo
   * processor (adapter-queue `DemoRunProcessor`), which stands in for one. Used by the
   * server's own worker (`worker.enabled`) and nowhere else: standalone workers
   * (`createWorker`) plug it in themselves.
   */
  readonly processor?: RunProcessor;
  /**
   * Told once when a run reaches a final status; default the e-mail of `smtp`
   * (adapter-email `SmtpNotifier`), or without `smtp` one log line a run (adapter-queue
   * `LogNotifier`). Webhooks are told too, whatever this is (docs/decisions.md "E-mail
   * notifications", "Webhooks").
   */
  readonly notifier?: Notifier;
}

/**
 * Starts the API server: picks the adapters, builds the container, starts the worker
 * with `options.processor` (unless `worker.enabled` is false), both Koa apps and both
 * listeners.
 * @throws when a port cannot be bound (the error of `listen`).
 */
export async function startServer(settings: ServerSettings, options: ServerOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? silentLogger;
  const adapters = await pickAdapters(settings, logger);
  const telemetry = serverTelemetry(adapters, logger);
  // One notifier for the worker and for the cancel of a queued run made final in this
  // process: e-mail (SMTP when `smtp` is set, else the log line; docs/decisions.md "E-mail
  // notifications") and webhooks ("Webhooks"), whatever `options.notifier` is. Bound late:
  // the webhook endpoints are read from the container's catalogs.
  const bound: { notifier?: Notifier } = {};
  const lateNotifier: Notifier = {
    runFinished: (run) => bound.notifier?.runFinished(run) ?? Promise.resolve(),
    runChanged: (change) => bound.notifier?.runChanged?.(change) ?? Promise.resolve(),
  };
  const container = buildContainer(settings, logger, adapters, telemetry, lateNotifier);
  // Webhooks (docs/decisions.md "Webhooks"): deliveries are made where runs are processed.
  // Endpoints from the PostgreSQL catalog with catalog.postgres (its NOTIFY keeps them current), else the configuration's accounts.
  const endpoints = (adapters.catalog ?? container.get(TOKENS.catalogs)).webhookEndpoints;
  const webhooks = await startWebhooks(settings, endpoints, { logger, telemetry, deliver: settings.worker.enabled });
  const notifier = (bound.notifier = new FanOutNotifier([options.notifier ?? (await emailNotifier(settings, logger, telemetry)), webhooks.notifier], logger));
  let worker: RunWorker | undefined;
  if (settings.worker.enabled) {
    worker = await createWorker({
      backend: adapters.runs,
      processor: options.processor ?? new DemoRunProcessor({ delayMs: settings.worker.demoDelayMs, readFiles: settings.files.verifyKeys }),
      notifier,
      logger,
      concurrency: settings.worker.concurrency,
      cancelGraceMs: settings.worker.cancelGraceMs,
      telemetry,
      // Processors read their runs' files (docs/CONTRACT.md "Files").
      ...(adapters.files !== undefined ? { files: new StoredRunFiles(adapters.files) } : {}),
    });
  }
  const sweep = sweepFiles(container.get(TOKENS.core), settings.files.sweepIntervalMs, logger);
  let draining = false;
  // Aborted when the drain begins: open run events streams end at once (their clients
  // resume with Last-Event-ID elsewhere) instead of holding the drain to its grace.
  const closingStreams = new AbortController();
  const apps = buildApps(container, () => draining, closingStreams.signal);
  // Fixed answers (the index, /livez, the documents) before Koa, the rest through it.
  const mainHandler = requestListener(apps.main);
  const egressHandler = requestListener(apps.egress);
  const main: Server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    mainDrain.onRequest(req, res);
    mainHandler(req, res);
  });
  const egress: Server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    egressDrain.onRequest(req, res);
    egressHandler(req, res);
  });
  const mainDrain = new HttpDrain(main);
  const egressDrain = new HttpDrain(egress);
  // Requests Node's parser refuses still get problem details (docs/CONTRACT.md "Request bodies and headers").
  handleClientErrors(main, logger);
  handleClientErrors(egress, logger);
  const port = await listen(main, settings.listen.host, settings.listen.port);
  const egressPort = await listen(egress, settings.egressListen.host, settings.egressListen.port);
  const { admin: adminListen } = settings.observability;
  const admin: AdminListener | undefined = adminListen.enabled
    ? await startAdminListener(adminListen, telemetry, { readiness: adapters.readiness, isDraining: () => draining, logger })
    : undefined;
  let stopping: Promise<StopReport> | undefined;
  const { delayMs, graceMs, closeBudgetMs } = settings.shutdown;
  const live = { catalogs: container.get(TOKENS.catalogs), adapters };
  let reloads: Promise<unknown> = Promise.resolve();
  return {
    port,
    egressPort,
    ...(admin !== undefined ? { adminPort: admin.port } : {}),
    container,
    reload(next, reason = 'reload') {
      const reloaded = reloads.then(async () => {
        if (stopping !== undefined) throw new Error('the server is stopping: configuration not reloaded');
        const report = await applyReload(settings, next, live);
        logReload(logger, report, reason);
        return report;
      });
      reloads = reloaded.catch(() => undefined);
      return reloaded;
    },
    stop() {
      stopping ??= (async () => {
        draining = true;
        clearInterval(sweep);
        mainDrain.announceClose();
        egressDrain.announceClose();
        if (delayMs > 0) await sleep(delayMs);
        const graceEnd = Date.now() + graceMs;
        closingStreams.abort();
        // No new webhook attempt from here (Redis: the rest wait for another process); the close phase awaits those in flight.
        void webhooks.stopDelivering();
        const drains = Promise.all([mainDrain.drain(graceMs), egressDrain.drain(graceMs)]);
        // The worker drains with the listeners: its runs need no HTTP, and the queue and
        // store that requests use stay open until the close phase.
        const runsClosed = worker === undefined ? undefined : closeWorker(worker, adapters.runs.durable, drains, graceEnd);
        const [cutMain, cutEgress] = await drains;
        const runs = await runsClosed;
        // The close phase has its own budget, whatever the drain and the worker took.
        const closeEnd = Date.now() + closeBudgetMs;
        // The MCP endpoint's handler holds nothing once the drain answered its exchanges.
        const [closed] = await Promise.all([closeAdapters(adapters, closeBudgetMs), admin?.close(), within(apps.mcp.close(), closeBudgetMs), webhooks.close(closeBudgetMs)]);
        // Nothing left to wait for: the deactivation hook finds the adapters closed.
        await within(container.unbindAllAsync(), msUntil(closeEnd));
        const reports = [runs?.report, closed.runs];
        return {
          requestsCut: cutMain + cutEgress,
          runsAbandoned: [...new Set(reports.flatMap((r) => r?.abandonedRunIds ?? []))],
          runsLost: [...new Set(reports.flatMap((r) => r?.lostRunIds ?? []))],
          closeStepsUnfinished: [...(runs?.unfinished ?? []), ...closed.unfinished],
        };
      })();
      return stopping;
    },
  };
}

/**
 * Closes the worker during the drain. A durable worker (BullMQ) stops taking runs at
 * once: a run queued now waits in Redis for another worker. The in-memory one keeps
 * taking runs until the HTTP drain is done, because a request answered in the drain may
 * have queued one that would otherwise be lost; then it stops within what is left of the
 * grace. Each worker bounds its own close by the grace + `RUN_WORKER_STOP_SLACK_MS`;
 * should it overrun that bound (a bug), the runs it is processing are still named.
 */
async function closeWorker(
  worker: RunWorker,
  durable: boolean,
  drains: Promise<unknown>,
  graceEnd: number,
): Promise<{ report: RunWorkerCloseReport; unfinished: string[] }> {
  if (!durable) await drains;
  const closed = await within(worker.close(false, msUntil(graceEnd)), msUntil(graceEnd) + RUN_WORKER_STOP_SLACK_MS);
  if (closed.outcome === 'done') return { report: closed.value ?? { abandonedRunIds: [] }, unfinished: [] };
  const inProgress = [...worker.runsInProgress()];
  return {
    report: durable ? { abandonedRunIds: inProgress } : { abandonedRunIds: [], lostRunIds: inProgress },
    unfinished: [`run worker (${closed.outcome === 'timeout' ? 'timed out' : 'failed'})`],
  };
}

/**
 * Runs the file expiry sweep (core `ExpireFiles`) every `intervalMs`, one pass at a time;
 * a pass that fails (Redis or the storage lost) is logged and the next one retries.
 * Every instance sweeps: each change is a compare-and-set, so two never clash.
 * @returns the interval, cleared when the server stops (unref'd: it holds no process open).
 */
function sweepFiles(core: Pick<Core<RunBackend>, 'expireFiles'>, intervalMs: number, logger: Logger): NodeJS.Timeout {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    core.expireFiles
      .execute()
      .then((report) => {
        if (report.expired > 0 || report.kept > 0) logger.info({ component: 'files', expired: report.expired, kept: report.kept }, 'file expiry sweep');
      })
      .catch((error: unknown) => logger.warn({ component: 'files', error_type: (error as Error).name }, 'file expiry sweep failed; the next pass retries'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return timer;
}
