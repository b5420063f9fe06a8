/**
 * A worker alone: `pnpm worker -- --config FILE` (or `SVC_CONFIG`). Processes the runs
 * the API instances queue in Redis with the demo processor; needs `redis_url` (or
 * `REDIS_URL`): without Redis, runs live in the API process and its own worker runs them.
 * SIGTERM / SIGINT: finish the runs in progress, then stop.
 */
import { parseArgs } from 'node:util';
import { BullMqRuns, DemoRunProcessor, LogNotifier } from '@svc/adapter-queue';
import { pino } from 'pino';
import { ConfigError, loadSettings } from './settings.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string' } }, strict: true });
  const configPath = values.config ?? (process.env['SVC_CONFIG'] || undefined);
  const settings = loadSettings(configPath);
  if (settings.redisUrl === undefined) throw new ConfigError('a standalone worker needs redis_url (or REDIS_URL)');
  const logger = pino({ level: settings.logLevel, base: null, timestamp: pino.stdTimeFunctions.isoTime });
  const runs = await BullMqRuns.connect({ redis: settings.redisUrl, prefix: settings.redisPrefix }, { logger });
  await runs.startWorker(new DemoRunProcessor(), { notifier: new LogNotifier(logger), logger, concurrency: settings.worker.concurrency });
  logger.info({ concurrency: settings.worker.concurrency }, 'worker started');
  const stop = (signal: string): void => {
    logger.info({ signal }, 'worker stopping: finishing runs in progress');
    runs.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`svc worker: cannot start: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
