import { randomBytes, randomUUID } from 'node:crypto';
import { sha256Hex } from '@svc/core';
import { INSERT_BODY, RUN_START_BODY, TDS_LOGIN } from './fixtures.js';
import type { LoadRequest } from './load.js';

/** Ids and the secret of the account the bench configures. */
export interface BenchAccount {
  readonly apiKey: string;
  readonly agentId: string;
  /** A `sqlserver` connection (its database details come with {@link ApiConfigOptions.sqlServerPort}). */
  readonly connectionId: string;
}

/** The headers of the bench's authenticated JSON requests: `Content-Type` and the account's `X-API-Key`. */
export function jsonRequestHeaders(account: BenchAccount): Record<string, string> {
  return { 'content-type': 'application/json', 'x-api-key': account.apiKey };
}

/** The bench's run start (`POST /api/v1/agents/{agent_id}/run`, {@link RUN_START_BODY}) to the server on `port`. */
export function runRequest(port: number, account: BenchAccount): LoadRequest {
  return { url: `http://127.0.0.1:${port}/api/v1/agents/${account.agentId}/run`, method: 'POST', headers: jsonRequestHeaders(account), body: RUN_START_BODY };
}

/** The bench's row insert (`POST /api/v1/connections/{connection_id}/records`, {@link INSERT_BODY}) to the server on `port`. */
export function insertRequest(port: number, account: BenchAccount): LoadRequest {
  return { url: `http://127.0.0.1:${port}/api/v1/connections/${account.connectionId}/records`, method: 'POST', headers: jsonRequestHeaders(account), body: INSERT_BODY };
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
  /** `files` with local storage (the upload scenario): largest file, bytes, and the storage directory. */
  readonly files?: { readonly maxBytes: number; readonly directory: string };
}

/**
 * The API server's configuration (`config.example.yaml` format; JSON is YAML) for a
 * bench run: limits of 1e9 requests / 60 s so that the load measures the path and not
 * 429s, no in-process worker (the bench measures accepting runs, not running them), file
 * keys not checked (`files.verify_keys: false`), and a short shutdown grace.
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
    files: {
      // The run start's file reference (fixtures.ts) stays an opaque key, as before the Files
      // feature and as the same-work peers take it: checking it against the file catalog
      // (the default) would add a lookup the peers do not make, and answer 400 here.
      verify_keys: false,
      ...(options.files !== undefined ? { max_bytes: options.files.maxBytes, storage: { kind: 'local', directory: options.files.directory } } : {}),
    },
    // The admin listener (metrics) runs as in production, on a free port.
    admin_listen: { port: 0 },
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

/**
 * What a same-work peer (`children/peers/*`) needs to answer like the API server: the
 * account, keys, agents and connections of {@link apiConfig}'s output, and its limits,
 * taken from that output so that peer and project always run with the same ones.
 * Handed to the peer child as one JSON argument.
 */
export interface PeerConfig {
  readonly port: number;
  /** `base_url` of the project's configuration (status URLs). */
  readonly baseUrl: string;
  /** API keys by SHA-256 hex digest of their secret. */
  readonly keys: readonly { readonly sha256: string; readonly keyId: string; readonly accountId: string }[];
  readonly agents: readonly { readonly id: string; readonly accountId: string }[];
  readonly connections: readonly { readonly id: string; readonly accountId: string }[];
  /** Requests per window, per credential and per agent (`rate_limits` of the config). */
  readonly limits: { readonly credential: PeerLimit; readonly agent: PeerLimit };
  /** Redis URL and a key prefix of the peer's own (the Redis peer). */
  readonly redis?: { readonly url: string; readonly prefix: string };
  /** The scripted TDS server (the insert peer). */
  readonly sqlserver?: { readonly host: string; readonly port: number; readonly database: string; readonly user: string; readonly password: string };
}

/** One fixed window: `requests` per `window_seconds`, as in the project's configuration. */
export interface PeerLimit {
  readonly requests: number;
  readonly window_seconds: number;
}

interface ConfigShape {
  base_url: string;
  rate_limits: { credential: PeerLimit; agent: PeerLimit };
  accounts: { id: string; api_keys: { id: string; sha256: string }[]; agents: { id: string }[]; connections: { id: string }[] }[];
}

/**
 * The {@link PeerConfig} of a peer listening on `port`, derived from
 * `apiConfig(options)` (so from the same limits and account as the project's run).
 */
export function peerConfig(options: ApiConfigOptions, extra: Pick<PeerConfig, 'redis'> = {}): PeerConfig {
  const config = apiConfig(options) as unknown as ConfigShape;
  return {
    port: options.port,
    baseUrl: config.base_url,
    keys: config.accounts.flatMap((a) => a.api_keys.map((k) => ({ sha256: k.sha256, keyId: k.id, accountId: a.id }))),
    agents: config.accounts.flatMap((a) => a.agents.map((g) => ({ id: g.id, accountId: a.id }))),
    connections: config.accounts.flatMap((a) => a.connections.map((c) => ({ id: c.id, accountId: a.id }))),
    limits: config.rate_limits,
    ...(extra.redis !== undefined ? { redis: extra.redis } : {}),
    ...(options.sqlServerPort !== undefined
      ? { sqlserver: { host: '127.0.0.1', port: options.sqlServerPort, database: TDS_LOGIN.database, user: TDS_LOGIN.user, password: TDS_LOGIN.password } }
      : {}),
  };
}
