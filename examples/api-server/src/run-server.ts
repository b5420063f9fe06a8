/**
 * The API server's start and stop, after `main.ts` has held V8's young generation
 * (./young-generation.ts): settings, logger, tracing, signal handlers, the configuration
 * reloader, both listeners and the development account's one-time secrets. Exits 2 on a
 * configuration error, 1 when the server cannot start.
 */
import { releaseYoungGeneration } from './young-generation.js';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { DEV_AGENT_ID, DEV_POSTGRESQL_CONNECTION_ID, DEV_SQLSERVER_CONNECTION_ID, devAccount } from './dev-account.js';
import { scriptArgs } from './command-line.js';
import { ConfigReloader } from './config-reloader.js';
import { startServer, type RunningServer } from './server.js';
import { exitAfterStop, stopBoundMs } from './shutdown.js';
import { ConfigError, loadSettings, type ServerSettings } from './settings.js';
import { startTracing, TRACING_FLUSH_MS } from './observability/tracing.js';
import { within } from '@svc/adapter-queue/memory';

/** Starts the server described by the command line and environment; see `main.ts`. */
async function main(): Promise<void> {
  const { values } = parseArgs({ args: scriptArgs(process.argv.slice(2)), options: { config: { type: 'string' } }, strict: true });
  const configPath = values.config ?? (process.env['SVC_CONFIG'] || undefined);
  let settings: ServerSettings;
  try {
    settings = loadSettings(configPath);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`svc: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const dev = configPath === undefined ? devAccount() : undefined;
  if (dev !== undefined) settings = { ...settings, accounts: [dev.account] };

  const logger = pino({ level: settings.logLevel, base: null, timestamp: pino.stdTimeFunctions.isoTime });
  // Before anything makes a span: only when the standard OTEL_* variables ask for traces.
  const tracing = await startTracing(process.env);
  // Handlers first: a signal that arrives while starting is noted (and the guard armed)
  // at once; the bounded stop begins as soon as the start is done, so that a BullMQ job
  // already taken or a client half open is stopped like any other, not cut by an exit.
  let started!: (server: RunningServer) => void;
  const serverStarted = new Promise<RunningServer>((resolve) => (started = resolve));
  let stopping = false;
  // SIGHUP reloads (its default action would end the process); a reload asked while
  // starting waits for the start, one asked while stopping is ignored.
  const reloader = new ConfigReloader({ path: configPath, logger, apply: (next, reason) => serverStarted.then((server) => server.reload(next, reason)) });
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    reloader.close();
    const { delayMs, graceMs, closeBudgetMs } = settings.shutdown;
    logger.info(
      { signal, shutdown_delay_ms: delayMs, shutdown_grace_ms: graceMs, shutdown_close_budget_ms: closeBudgetMs },
      'stopping: draining in-flight requests',
    );
    exitAfterStop(
      logger,
      // The last spans are exported after the stop, within TRACING_FLUSH_MS.
      serverStarted.then((server) => server.stop()).finally(() => tracing && within(tracing.shutdown(), TRACING_FLUSH_MS)),
      stopBoundMs(settings.shutdown),
    );
  };
  // process.once: a second signal meets Node's default action and ends the process at once.
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => void reloader.reload('SIGHUP'));
  await reloader.watch();

  logger.info({}, 'starting');
  const server = await startServer(settings, { logger });
  started(server);
  releaseYoungGeneration();
  // A signal came while starting: its stop runs now.
  if (stopping) return;
  logger.info(
    { port: server.port, egress_port: server.egressPort, admin_port: server.adminPort ?? null, base_url: settings.baseUrl, egress_url: settings.egressUrl, tracing: tracing !== undefined },
    'listening',
  );

  if (dev !== undefined) {
    // Printed once, outside the log stream: these secrets are never logged.
    process.stdout.write(
      [
        '',
        `svc API on ${settings.baseUrl} (egress ${settings.egressUrl}) with a development account.`,
        'Its secrets are new at every start and shown only now:',
        `  export SVC_API_KEY=${dev.apiKey}`,
        `  export SVC_ACCESS_TOKEN=${dev.accessToken}`,
        `  agent id:                  ${DEV_AGENT_ID}`,
        `  sqlserver connection id:   ${DEV_SQLSERVER_CONNECTION_ID}  (in-memory demo table dbo.orders: id, sku, qty, note, status)`,
        `  postgresql connection id:  ${DEV_POSTGRESQL_CONNECTION_ID}  (writes refused: 400)`,
        '',
      ].join('\n') + '\n',
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`svc: cannot start: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
