import { randomBytes, randomUUID } from 'node:crypto';
import { sha256Hex } from '@svc/core';
import { TDS_LOGIN } from './fixtures.js';

/** Ids and the secret of the account the bench configures. */
export interface BenchAccount {
  readonly apiKey: string;
  readonly agentId: string;
  /** A `sqlserver` connection (its database details come with {@link ApiConfigOptions.sqlServerPort}). */
  readonly connectionId: string;
}

/** A fresh account: a new API key each run (only its digest goes to the server). */
export function benchAccount(): BenchAccount {
  return { apiKey: `svc-${randomBytes(32).toString('base64url')}`, agentId: 'agent_bench', connectionId: randomUUID() };
}

/** Environment variable holding the SQL Server password of the bench's connection. */
export const DB_PASSWORD_ENV = 'SVC_BENCH_DB_PASSWORD';

/** What varies between the API server's configurations in the bench. */
export interface ApiConfigOptions {
  readonly account: BenchAccount;
  readonly port: number;
  readonly egressPort: number;
  readonly logLevel: 'silent' | 'info';
  readonly redis?: { readonly url: string; readonly prefix: string };
  /** Port of the scripted TDS server; absent: the connection has no database details. */
  readonly sqlServerPort?: number;
}

/**
 * The API server's configuration (`config.example.yaml` format; JSON is YAML) for a
 * bench run: limits of 1e9 requests / 60 s so that the load measures the path and not
 * 429s, no in-process worker (the bench measures accepting runs, not running them), and
 * a short shutdown grace.
 */
export function apiConfig(options: ApiConfigOptions): Record<string, unknown> {
  const { account } = options;
  const unlimited = { requests: 1_000_000_000, window_seconds: 60 };
  return {
    base_url: `http://127.0.0.1:${options.port}`,
    listen: { host: '127.0.0.1', port: options.port },
    egress: { url: `http://127.0.0.1:${options.egressPort}`, listen: { host: '127.0.0.1', port: options.egressPort } },
    rate_limits: { credential: unlimited, agent: unlimited },
    ...(options.redis !== undefined ? { redis_url: options.redis.url, redis_prefix: options.redis.prefix } : {}),
    worker: { enabled: false },
    log_level: options.logLevel,
    shutdown_grace_ms: 2000,
    accounts: [
      {
        id: 'acct_bench',
        api_keys: [{ id: 'key_bench', sha256: sha256Hex(account.apiKey) }],
        agents: [{ id: account.agentId, name: 'Bench agent' }],
        connections: [
          {
            id: account.connectionId,
            type: 'sqlserver',
            ...(options.sqlServerPort !== undefined
              ? { sqlserver: { host: '127.0.0.1', port: options.sqlServerPort, database: TDS_LOGIN.database, user: TDS_LOGIN.user, password_env: DB_PASSWORD_ENV, encrypt: false } }
              : {}),
          },
        ],
      },
    ],
  };
}
