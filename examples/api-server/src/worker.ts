/**
 * A worker alone: `pnpm worker --config FILE` (or `SVC_CONFIG`; pnpm's literal `--` is dropped). Processes the runs
 * the API instances queue in Redis with the demo processor; needs `redis_url` (or
 * `REDIS_URL`): without Redis, runs live in the API process and its own worker runs them.
 * The runs it finishes get the e-mail of `smtp` (docs/decisions.md "E-mail notifications"), counted on its
 * admin port; without `smtp`, a log line.
 * And their webhooks (docs/decisions.md "Webhooks"): the endpoints of the PostgreSQL catalog
 * with `catalog.postgres` (opened here, closed at stop), else of the configuration's accounts.
 * SIGTERM / SIGINT: stop taking runs, finish those in progress for at most
 * `shutdown_grace_ms`, close the Redis clients within `shutdown_close_budget_ms`; exit 0
 * when nothing was abandoned, else 1 with one log line naming it (an abandoned run stays
 * queued: another worker picks it up once its lock expires). `shutdown_delay_ms` does
 * not apply: a worker serves no load balancer. Its admin listener (`admin_listen.host`,
 * `admin_listen.worker_port`, default 127.0.0.1:9465) serves `/metrics` (runs finished,
 * queue wait and depth), `/livez` and `/readyz` (Redis).
 */
import { parseArgs } from 'node:util';
import { BullMqRuns, DemoRunProcessor, RUN_WORKER_STOP_SLACK_MS, within } from '@svc/adapter-queue';
import { createWorker, FanOutNotifier, StoredRunFiles, type RunWorker } from '@svc/core';
import { openFileStorage, type FileStorage } from './file-storage.js';
import { pino } from 'pino';
import { scriptArgs } from './command-line.js';
import type { PostgresCatalog } from '@svc/adapter-postgres';
import { bullMqSettingsOf, checkRedisDurability, openCatalog, redisBudget } from './container.js';
import { emailNotifier } from './notifications.js';
import { ConfigError, loadSettings } from './settings.js';
import { closeSteps, droppedClientNotes, exitAfterStop, stopBoundMs, type StopReport } from './shutdown.js';
import { startAdminListener, type AdminListener } from './observability/admin-listener.js';
import { PrometheusTelemetry } from './observability/metrics.js';
import { startTracing, TRACING_FLUSH_MS } from './observability/tracing.js';
import { LiveCatalogs } from './live-catalogs.js';
import { startWebhooks, type Webhooks } from './webhooks.js';

/** How much sooner than the close budget the webhook queue drops its clients (milliseconds): above a timer's lateness on a busy machine. */
const WEBHOOK_CLOSE_MARGIN_MS = 250;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: scriptArgs(process.argv.slice(2)), options: { config: { type: 'string' } }, strict: true });
  const configPath = values.config ?? (process.env['SVC_CONFIG'] || undefined);
  const settings = loadSettings(configPath);
  if (settings.redisUrl === undefined) throw new ConfigError('a standalone worker needs redis_url (or REDIS_URL)');
  const logger = pino({ level: settings.logLevel, base: null, timestamp: pino.stdTimeFunctions.isoTime });
  const tracing = await startTracing(process.env);
  const { graceMs, closeBudgetMs } = settings.shutdown;
  let admin: AdminListener | undefined;
  // Set once started; the stop handler, armed before, closes it.
  const stoppable: { webhooks?: Webhooks; catalog?: PostgresCatalog | undefined; files?: FileStorage } = {};
  // Handlers first: a signal while starting is noted (and the guard armed) at once; the
  // bounded stop begins as soon as the start is done (a job may already be taken).
  let started!: (worker: { runs: BullMqRuns; worker: RunWorker }) => void;
  const workerStarted = new Promise<{ runs: BullMqRuns; worker: RunWorker }>((resolve) => (started = resolve));
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, shutdown_grace_ms: graceMs, shutdown_close_budget_ms: closeBudgetMs }, 'worker stopping: finishing runs in progress');
    // No new webhook attempt from here: those waiting stay in Redis for another process.
    void stoppable.webhooks?.stopDelivering();
    exitAfterStop(
      logger,
      workerStarted
        .then(({ runs, worker }) =>
          stopRuns(runs, worker, graceMs, closeBudgetMs, {
            // In the one close phase (stopBoundMs counts one budget), after the runs: a run
            // finished in the grace has queued its deliveries (in Redis). The webhook queue
            // bounds its own close (with Redis lost, BullMQ's worker close never ends: its
            // clients are dropped at the bound) a little inside the step's, so that it
            // ends as done. No attempt starts after stopDelivering, so the catalog (read
            // when an attempt starts) closes at the same time.
            webhooks: () => stoppable.webhooks?.close(Math.max(0, closeBudgetMs - WEBHOOK_CLOSE_MARGIN_MS)) ?? Promise.resolve(),
            catalog: () => stoppable.catalog?.close() ?? Promise.resolve(),
            'file storage': () => stoppable.files?.close() ?? Promise.resolve(),
          }),
        )
        .finally(() => Promise.all([admin?.close(), tracing && within(tracing.shutdown(), TRACING_FLUSH_MS)])),
      stopBoundMs(settings.shutdown, false),
    );
  };
  // process.once: a second signal meets Node's default action and ends the process at once.
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  // SIGHUP reloads the API server's catalogs; a worker reads none, so it only says so
  // (the default action would end the process, and with it the runs in progress).
  process.on('SIGHUP', () => logger.info({ signal: 'SIGHUP' }, 'nothing to reload in a worker: restart it to apply a new configuration'));

  await checkRedisDurability(settings, logger);
  const runs = await BullMqRuns.connect(bullMqSettingsOf(settings), { logger });
  // The worker's own metrics (runs finished, queue wait and depth) on its admin port.
  const readiness = { redis: () => runs.ready() };
  const telemetry = new PrometheusTelemetry({ queueDepth: () => runs.queueDepth(), readiness, logger });
  let worker: RunWorker;
  // Webhook deliveries (docs/decisions.md "Webhooks"): queued by this worker's notifier, delivered here too.
  // Endpoints from the PostgreSQL catalog with catalog.postgres (kept current by its NOTIFY), else the configuration's accounts.
  let catalog: PostgresCatalog | undefined;
  try {
    catalog = stoppable.catalog = await openCatalog(settings, logger);
  } catch (error) {
    await runs.close(true, 0);
    throw error;
  }
  let files: FileStorage;
  try {
    files = stoppable.files = await openFileStorage(settings, logger, redisBudget(settings.dependencyTimeoutMs).runsMs);
  } catch (error) {
    await runs.close(true, 0);
    await within(catalog?.close() ?? Promise.resolve(), closeBudgetMs);
    throw error;
  }
  const webhooks = (stoppable.webhooks = await startWebhooks(settings, (catalog ?? new LiveCatalogs(settings.accounts)).webhookEndpoints, { logger, telemetry, deliver: true }));
  try {
    // E-mail when a run ends (docs/decisions.md "E-mail notifications"): SMTP when `smtp` is set, else the log line; and webhooks ("Webhooks").
    const notifier = new FanOutNotifier([await emailNotifier(settings, logger, telemetry), webhooks.notifier], logger);
    worker = await createWorker({
      backend: runs,
      processor: new DemoRunProcessor({ delayMs: settings.worker.demoDelayMs, readFiles: settings.files.verifyKeys }),
      notifier,
      logger,
      concurrency: settings.worker.concurrency,
      cancelGraceMs: settings.worker.cancelGraceMs,
      telemetry,
      // Processors read their runs' files (docs/CONTRACT.md "Files").
      files: new StoredRunFiles(files),
    });
    const { admin: listen } = settings.observability;
    if (listen.enabled) admin = await startAdminListener({ host: listen.host, port: listen.workerPort }, telemetry, { readiness, isDraining: () => stopping, logger });
  } catch (error) {
    await Promise.all([runs.close(true, 0), webhooks.close(0), within(files.close(), closeBudgetMs)]);
    await within(catalog?.close() ?? Promise.resolve(), closeBudgetMs);
    throw error;
  }
  started({ runs, worker });
  if (!stopping) logger.info({ concurrency: settings.worker.concurrency, admin_port: admin?.port ?? null }, 'worker started');
}

/**
 * Stops the worker (its runs get `graceMs`, its stop `RUN_WORKER_STOP_SLACK_MS` more),
 * then closes the queue and the Redis clients, and `otherCloseSteps` at the same time,
 * within `closeBudgetMs` of their own.
 */
async function stopRuns(runs: BullMqRuns, worker: RunWorker, graceMs: number, closeBudgetMs: number, otherCloseSteps: Parameters<typeof closeSteps>[0]): Promise<StopReport> {
  const stopped = await within(worker.close(false, graceMs), graceMs + RUN_WORKER_STOP_SLACK_MS);
  const abandoned = stopped.outcome === 'done' ? (stopped.value?.abandonedRunIds ?? []) : worker.runsInProgress();
  let droppedClients: readonly string[] = [];
  const unfinished = await closeSteps(
    {
      runs: async () => {
        // The worker's close is memoised: this closes the queue and quits every client.
        droppedClients = (await runs.close()).droppedClients ?? [];
        return droppedClientNotes(droppedClients);
      },
      ...otherCloseSteps,
    },
    closeBudgetMs,
  );
  return {
    requestsCut: 0,
    runsAbandoned: abandoned,
    runsLost: [],
    closeStepsUnfinished: [...(stopped.outcome === 'done' ? [] : [`run worker (${stopped.outcome === 'timeout' ? 'timed out' : 'failed'})`]), ...unfinished],
  };
}

main().catch((error: unknown) => {
  process.stderr.write(`svc worker: cannot start: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
