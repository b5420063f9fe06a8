import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '@svc/core';
import { needsSqlServer, writeTargets, type Adapters } from './container.js';
import { catalogCounts, type CatalogCounts, type LiveCatalogs } from './live-catalogs.js';
import type { ServerSettings } from './settings.js';

type Setting = (s: ServerSettings) => unknown;

/**
 * Every setting but `accounts`, by the configuration file's name: none of them changes
 * while the server runs (listeners are bound, clients connected, the core and the HTTP
 * apps built with them). The `satisfies` clause makes a new setting fail to build until it
 * is listed here, so that a reload never ignores one silently.
 * Source: docs/decisions.md "Configuration reload".
 */
const FIXED_SETTINGS = {
  baseUrl: { base_url: (s) => s.baseUrl },
  listen: { listen: (s) => s.listen },
  egressUrl: { 'egress.url': (s) => s.egressUrl },
  egressListen: { 'egress.listen': (s) => s.egressListen },
  egressSourceAddress: { 'egress.source_address': (s) => s.egressSourceAddress },
  // From the environment, which a reload does not change; listed so a new key never goes unnoticed. Only its name is reported.
  cursorKey: { SVC_CURSOR_KEY: (s) => s.cursorKey },
  rateLimits: { rate_limits: (s) => s.rateLimits },
  redisUrl: { redis_url: (s) => s.redisUrl },
  redisPrefix: { redis_prefix: (s) => s.redisPrefix },
  dependencyTimeoutMs: { dependency_timeout_ms: (s) => s.dependencyTimeoutMs },
  worker: { worker: (s) => s.worker },
  sqlserver: { sqlserver: (s) => s.sqlserver },
  catalog: { 'catalog.postgres': (s) => s.catalog?.postgres },
  deprecations: { deprecations: (s) => s.deprecations },
  logLevel: { log_level: (s) => s.logLevel },
  shutdown: {
    shutdown_delay_ms: (s) => s.shutdown.delayMs,
    shutdown_grace_ms: (s) => s.shutdown.graceMs,
    shutdown_close_budget_ms: (s) => s.shutdown.closeBudgetMs,
  },
  durability: {
    'redis.require_durable': (s) => s.durability.redisRequireDurable,
    'runs.retention_seconds': (s) => s.durability.runRetentionSeconds,
    'runs.max_finished_in_memory': (s) => s.durability.maxFinishedRunsInMemory,
  },
  runEventsKeepAliveMs: { 'runs.events_keepalive_ms': (s) => s.runEventsKeepAliveMs },
  index: { index: (s) => s.index },
  observability: {
    admin_listen: (s) => s.observability.admin,
    'cors.origins': (s) => s.observability.corsOrigins,
    trusted_proxies: (s) => s.observability.trustedProxies,
  },
  // Only the name is reported: it holds the SMTP password.
  smtp: { smtp: (s) => s.smtp },
  // The endpoints themselves are accounts' (reloaded); the delivery settings are fixed.
  webhooks: { webhooks: (s) => s.webhooks },
  files: { files: (s) => s.files },
} satisfies Record<Exclude<keyof ServerSettings, 'accounts'>, Record<string, Setting>>;

/**
 * The settings (configuration file names, e.g. `listen`, `redis_url`) whose value in
 * `next` differs from the running one but cannot change while the server runs.
 */
export function fixedSettingsChanged(running: ServerSettings, next: ServerSettings): string[] {
  const changed: string[] = [];
  for (const fields of Object.values(FIXED_SETTINGS) as Record<string, Setting>[]) {
    for (const [name, value] of Object.entries(fields)) if (!isDeepStrictEqual(value(running), value(next))) changed.push(name);
  }
  return changed;
}

/** What a reload did. Source: docs/decisions.md "Configuration reload". */
export interface ReloadReport {
  /** What the catalogs hold now (counts only). */
  readonly counts: CatalogCounts;
  /** Settings that differ in the file but were left as they were (a restart applies them). */
  readonly fixedSettingsChanged: readonly string[];
  /**
   * SQL Server connections (ids) removed or with changed details: their writers close
   * (pools and TCP connections) once the writes already in flight on them have ended.
   */
  readonly sqlServerConnectionsRetired: readonly string[];
}

/** What a reload replaces: the catalogs and the writers' routes. */
export interface LiveParts {
  readonly catalogs: LiveCatalogs;
  readonly adapters: Pick<Adapters, 'recordWriter' | 'sqlServerWriters'>;
}

/**
 * Applies the live part of `next` (accounts: API keys, OAuth tokens, agents, connections)
 * to a running server: everything new is built first (adapter-sqlserver loaded when a
 * SQL Server connection appears), then the catalogs and the writers' routes are swapped
 * in one synchronous step, so no request sees half of a configuration and none waits.
 *
 * With `catalog.postgres` at start, nothing is swapped (the catalog keeps itself current);
 * the report names the fixed settings that differ.
 *
 * @param running - the settings the server started with (the fixed ones stay these).
 * @param env - environment the SQL Server passwords are read from.
 * @throws ConfigError naming the field when a SQL Server connection's password variable
 *   is not set; nothing has changed then.
 */
export async function applyReload(running: ServerSettings, next: ServerSettings, live: LiveParts, env: NodeJS.ProcessEnv = process.env): Promise<ReloadReport> {
  if (running.catalog?.postgres !== undefined) {
    // The accounts live in the PostgreSQL catalog, whose changes every instance sees by
    // itself (LISTEN/NOTIFY): the file has none to apply, and `catalog` is fixed.
    return { counts: catalogCounts([]), fixedSettingsChanged: fixedSettingsChanged(running, next), sqlServerConnectionsRetired: [] };
  }
  const targets = writeTargets(next, env);
  const sqlServer = needsSqlServer(targets) ? await live.adapters.sqlServerWriters() : undefined;
  // One synchronous step: the routes first (they only throw for a bug, before any change).
  const rerouted = live.adapters.recordWriter.reroute(targets, sqlServer);
  live.catalogs.replace(next.accounts);
  return { counts: catalogCounts(next.accounts), fixedSettingsChanged: fixedSettingsChanged(running, next), sqlServerConnectionsRetired: rerouted.sqlServerRetired };
}

/**
 * The log lines of a reload: one line with the counts (never a secret, digest or id), and,
 * when the file changed settings that cannot change while running, one warning naming them.
 */
export function logReload(logger: Logger, report: ReloadReport, reason: string): void {
  const { counts } = report;
  logger.info(
    {
      reason,
      accounts: counts.accounts,
      api_keys: counts.apiKeys,
      oauth_tokens: counts.oauthTokens,
      agents: counts.agents,
      connections: counts.connections,
      sqlserver_connections_closing: report.sqlServerConnectionsRetired.length,
    },
    'configuration reloaded',
  );
  if (report.fixedSettingsChanged.length > 0) {
    logger.warn(
      { reason, settings: report.fixedSettingsChanged },
      `settings that cannot change while running were left as they were (a restart applies them): ${report.fixedSettingsChanged.join(', ')}`,
    );
  }
}
