/**
 * A worker alone: `pnpm worker -- --config FILE` (or `SVC_CONFIG`). Processes the runs
 * the API instances queue in Redis with the demo processor; needs `redis_url` (or
 * `REDIS_URL`): without Redis, runs live in the API process and its own worker runs them.
 * SIGTERM / SIGINT: stop taking runs, finish those in progress for at most
 * `shutdown_grace_ms`, close the Redis clients within `shutdown_close_budget_ms`; exit 0
 * when nothing was abandoned, else 1 with one log line naming it (an abandoned run stays
 * queued: another worker picks it up once its lock expires). `shutdown_delay_ms` does
 * not apply: a worker serves no load balancer.
 */
import { parseArgs } from 'node:util';
import { BullMqRuns, DemoRunProcessor, LogNotifier } from '@svc/adapter-queue';
import { pino } from 'pino';
import { ConfigError, loadSettings } from './settings.js';
import { droppedClientNotes, exitAfterStop, within, type StopReport } from './shutdown.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string' } }, strict: true });
  const configPath = values.config ?? (process.env['SVC_CONFIG'] || undefined);
  const settings = loadSettings(configPath);
  if (settings.redisUrl === undefined) throw new ConfigError('a standalone worker needs redis_url (or REDIS_URL)');
  const logger = pino({ level: settings.logLevel, base: null, timestamp: pino.stdTimeFunctions.isoTime });
  const { graceMs, closeBudgetMs } = settings.shutdown;
  // Handlers first: a signal while connecting exits at once (nothing taken yet).
  const running: { runs?: BullMqRuns } = {};
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, shutdown_grace_ms: graceMs, shutdown_close_budget_ms: closeBudgetMs }, 'worker stopping: finishing runs in progress');
    exitAfterStop(logger, running.runs === undefined ? undefined : stopRuns(running.runs, graceMs, closeBudgetMs), graceMs + closeBudgetMs);
  };
  // process.once: a second signal meets Node's default action and ends the process at once.
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  const runs = await BullMqRuns.connect({ redis: settings.redisUrl, prefix: settings.redisPrefix }, { logger });
  running.runs = runs;
  await runs.startWorker(new DemoRunProcessor(), { notifier: new LogNotifier(logger), logger, concurrency: settings.worker.concurrency });
  logger.info({ concurrency: settings.worker.concurrency }, 'worker started');
}

/** Closes the worker (bounded by `graceMs` for its runs) and the clients, within the budget. */
async function stopRuns(runs: BullMqRuns, graceMs: number, closeBudgetMs: number): Promise<StopReport> {
  const closed = await within(runs.close(false, graceMs), graceMs + closeBudgetMs);
  return {
    requestsCut: 0,
    runsAbandoned: closed.outcome === 'done' ? closed.value.abandonedRunIds : [],
    inProcessRunsAbandoned: false,
    closeStepsUnfinished:
      closed.outcome === 'done'
        ? droppedClientNotes(closed.value.droppedClients)
        : [`run worker and Redis clients (${closed.outcome === 'timeout' ? 'timed out' : 'failed'})`],
  };
}

main().catch((error: unknown) => {
  process.stderr.write(`svc worker: cannot start: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
