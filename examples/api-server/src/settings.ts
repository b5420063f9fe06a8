import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { DEFAULT_CANCEL_GRACE_MS, DEFAULT_IN_MEMORY_MAX_FINISHED_RUNS, DEFAULT_RATE_LIMITS, DEFAULT_RUN_RETENTION_SECONDS, MINIMUM_SUNSET_NOTICE_DAYS } from '@svc/core';
import { filesSchema, filesSettingsOf, type FilesSettings } from './file-settings.js';
import { webhookEndpointSchema, webhookEndpointsOf, webhookErrorsIn, webhooksSchema, webhooksSettingsOf, type WebhookEndpointSettings, type WebhooksSettings } from './webhook-settings.js';
import { QUIT_TIMEOUT_MS } from '@svc/adapter-queue/memory';
import type { SmtpSettings } from '@svc/adapter-email';
import { parse as parseYaml } from 'yaml';
import { observabilityProperties, observabilitySettingsFrom, type ObservabilitySettings } from './observability/settings.js';

/** How one listener binds. */
export interface ListenSettings {
  readonly host: string;
  /** TCP port; 0 picks a free one (tests). */
  readonly port: number;
}

/** SQL Server details of a `sqlserver` connection. The password comes from an env var. */
export interface SqlServerDetails {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  /** Name of the environment variable that holds the password (never the password). */
  readonly passwordEnv: string;
  readonly encrypt: boolean;
  readonly trustServerCertificate: boolean;
}

/** A connection of an account. */
export interface ConnectionSettings {
  readonly id: string;
  readonly type: string;
  /** Human-readable name shown by discovery (`GET /api/v1/connections`); optional. */
  readonly name?: string;
  /** For `sqlserver`: the database to write to. Absent: an in-memory demo table set. */
  readonly sqlserver?: SqlServerDetails;
}

/** A credential as configured: only its SHA-256 digest. */
export interface CredentialSettings {
  readonly id: string;
  readonly sha256: string;
  readonly scopes: readonly string[];
  readonly expiresAt?: Date;
}

/** An agent of an account. */
export interface AgentSettings {
  readonly id: string;
  readonly name?: string;
  readonly description?: string;
}

/** An account and everything it owns. */
export interface AccountSettings {
  readonly id: string;
  readonly apiKeys: readonly CredentialSettings[];
  readonly oauthTokens: readonly CredentialSettings[];
  /** Agents; `name` and `description` are shown by discovery (`GET /api/v1/agents`). */
  readonly agents: readonly AgentSettings[];
  readonly connections: readonly ConnectionSettings[];
  /** `webhook_endpoints` (docs/decisions.md "Webhooks"); secrets already read. */
  readonly webhookEndpoints: readonly WebhookEndpointSettings[];
}

/** A deprecated operation (docs/CONTRACT.md "Index and versioning"). */
export interface DeprecationSettings {
  readonly deprecatedAt: Date;
  readonly sunsetAt?: Date;
  readonly link: string;
}

/**
 * How a stop (SIGTERM / SIGINT) proceeds, in three phases (docs/CONTRACT.md "Dependencies and
 * faults"): delay → drain → close. The process exits at the latest
 * `delayMs + graceMs` + 250 ms (the worker's stop slack, `RUN_WORKER_STOP_SLACK_MS`) +
 * `closeBudgetMs` after the signal, whatever state its dependencies are in.
 */
export interface ShutdownSettings {
  /**
   * `shutdown_delay_ms`, default 0: ms after the signal during which the server still
   * listens and serves while `/readyz` answers 503 `draining`, so that a load balancer
   * takes the instance out before it stops accepting.
   */
  readonly delayMs: number;
  /**
   * `shutdown_grace_ms`, default 10000: ms the drain lasts at most: requests already
   * received (and requests on connections already open) are answered, runs in progress
   * finish (the in-memory worker also takes the runs queued while requests are answered).
   * Whatever is still open then is cut (requests), abandoned (BullMQ runs: their job's
   * lock expires and another worker picks them up again) or lost (in-memory runs).
   */
  readonly graceMs: number;
  /**
   * `shutdown_close_budget_ms`, default 5000: ms the close of clients and pools (Redis,
   * BullMQ, SQL Server) may take after the drain, its own whatever the drain took. A live
   * dependency closes in milliseconds; a paused or lost one never answers its QUIT, so
   * this bounds the wait, and the clients still open then are dropped. At least
   * `QUIT_TIMEOUT_MS` (1000): what one bounded QUIT needs. The default keeps 0 + 10 s + 5 s well
   * under Kubernetes' default `terminationGracePeriodSeconds` (30 s), after which the
   * process would be SIGKILLed without its log line.
   */
  readonly closeBudgetMs: number;
}

/**
 * `catalog.postgres`: the accounts, credentials (SHA-256 digests only), agents and connections
 * live in a PostgreSQL catalog shared by several instances (`@svc/adapter-postgres`), not in
 * the file's `accounts`. Source: issue 13 part 1; README "A catalog for several instances
 * (PostgreSQL)". A restart applies a change of it (docs/decisions.md "Configuration reload").
 */
export interface PostgresCatalogSettings {
  /**
   * `url_env`, default `SVC_CATALOG_URL`: the name of the environment variable that holds the
   * catalog database's URL (`postgres://user:password@host:port/database`). The URL itself is
   * never in the file (it may hold a password), never logged.
   */
  readonly urlEnv: string;
  /** `schema`, default `svc`: the PostgreSQL schema `svc-server migrate` made. */
  readonly schema: string;
  /**
   * `timeout_ms`, default `dependency_timeout_ms`: bound in milliseconds of every catalog
   * lookup (past it: 503 `service_unavailable`), of each step of opening it at start, and of
   * `/readyz`'s `catalog` check.
   */
  readonly timeoutMs: number;
}

/**
 * The environment variable holding the key list cursors are signed with (at least 32
 * bytes, UTF-8; shorter → `ConfigError`; unset or empty → the key shared through Redis when
 * Redis is configured (container `sharedCursorKey`), else a random key per process). Every
 * instance serving one API signs with the same key, or a cursor one gives is refused by
 * another. Source: docs/decisions.md "Discovery: agents and connections".
 */
export const CURSOR_KEY_ENV = 'SVC_CURSOR_KEY';

/**
 * The environment variable that holds the SMTP password when `smtp.password_env` names none
 * (docs/decisions.md "E-mail notifications"). The password is never in the file, never logged.
 */
export const DEFAULT_SMTP_PASSWORD_ENV = 'SVC_SMTP_PASSWORD';

/** Every setting of the API server, validated. Times in the names' units. */
export interface ServerSettings {
  readonly baseUrl: string;
  readonly listen: ListenSettings;
  readonly egressUrl: string;
  readonly egressListen: ListenSettings;
  /** Source address the egress route's database traffic leaves from; absent: OS default. */
  readonly egressSourceAddress?: string;
  /**
   * The key list cursors are signed with, from the environment variable `SVC_CURSOR_KEY`
   * (at least 32 bytes; never logged); absent: the key shared through Redis, or a random
   * key per process without Redis (core `CoreOptions.cursorKey`).
   * Source: docs/decisions.md "Discovery: agents and connections".
   */
  readonly cursorKey?: string;
  readonly rateLimits: {
    readonly credential: { readonly limit: number; readonly windowSeconds: number };
    readonly agent: { readonly limit: number; readonly windowSeconds: number };
    /** API instances sharing Redis: the in-memory fallback divides limits by it. */
    readonly instanceCount: number;
  };
  readonly redisUrl?: string;
  /** Key prefix in Redis (queues, limits, runs). */
  readonly redisPrefix: string;
  /**
   * Ms within which a request that needs a lost, failing or paused dependency (Redis)
   * is answered 503 `service_unavailable` (docs/CONTRACT.md "Dependencies and faults");
   * `/readyz` is bounded by it too. Default 2000.
   */
  readonly dependencyTimeoutMs: number;
  /**
   * The worker: `enabled`, `concurrency`; `cancel_grace_ms` (default 10000): ms a
   * processor may go on after its run's cancel fired its signal before it is abandoned
   * and the run made `cancelled` (docs/CONTRACT.md "Runs lifecycle"); `demo_delay_ms`
   * (default 500): the demo processor's run time.
   */
  readonly worker: { readonly enabled: boolean; readonly concurrency: number; readonly cancelGraceMs: number; readonly demoDelayMs: number };
  readonly sqlserver: { readonly connectTimeoutMs: number; readonly requestTimeoutMs: number; readonly poolMax: number };
  readonly accounts: readonly AccountSettings[];
  /** Where the catalog is: absent, the file's {@link ServerSettings.accounts}; `postgres`, a PostgreSQL catalog (then `accounts` is empty). */
  readonly catalog?: { readonly postgres: PostgresCatalogSettings };
  readonly deprecations: Readonly<Record<string, DeprecationSettings>>;
  readonly logLevel: string;
  /**
   * `runs.events_keepalive_ms` (default 15000): ms between two comment lines of an open
   * run events stream (`GET /api/v1/runs/{run_id}/events`), so that proxies keep it open.
   */
  readonly runEventsKeepAliveMs: number;
  /** How SIGTERM / SIGINT stop the process (docs/CONTRACT.md "Dependencies and faults"). */
  readonly shutdown: ShutdownSettings;
  /** Durability of runs (issue "Faults" part 5). */
  readonly durability: {
    /** `redis.require_durable`: refuse to start when Redis's settings could lose a run. */
    readonly redisRequireDurable: boolean;
    /** `runs.retention_seconds`: seconds a finished run stays readable at its `status_url`. */
    readonly runRetentionSeconds: number;
    /** `runs.max_finished_in_memory`: finished runs the in-memory store keeps at most. */
    readonly maxFinishedRunsInMemory: number;
  };
  /** Index overrides (documentation URLs, trial, sandbox). */
  readonly index: {
    readonly name?: string;
    readonly documentationUrl?: string;
    readonly accessRequestUrl?: string;
    readonly trial?: { readonly available: boolean; readonly durationDays: number; readonly inviteRequired: boolean };
    readonly publicSandboxAvailable?: boolean;
  };
  /** Admin listener, CORS origins and trusted proxies (`observability/settings.ts`). */
  readonly observability: ObservabilitySettings;
  /**
   * `smtp`: where the e-mail a run's `notification_email` gets when the run ends is sent
   * (adapter-email `SmtpNotifier`); absent: no e-mail, one log line says a notification was
   * due (adapter-queue `LogNotifier`). File fields: `host`, `port` (default 465 when
   * `secure`, else 587), `secure` (default false: STARTTLS when offered), `require_tls`
   * (default false), `user`, `password_env` (the environment variable holding the password,
   * default `SVC_SMTP_PASSWORD`; read here, never logged), `from`, `timeout_ms` (bound of
   * one send attempt, default 10000). Source: docs/decisions.md "E-mail notifications".
   */
  readonly smtp?: SmtpSettings;
  /** `webhooks`: retry schedule and SSRF rule of webhook deliveries (`webhook-settings.ts`). */
  readonly webhooks: WebhooksSettings;
  /** `files`: limits, expiry and storage of files (`file-settings.ts`; docs/CONTRACT.md "Files"). */
  readonly files: FilesSettings;
}

/** A configuration that does not validate; `message` names every bad field. */
export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
}

/**
 * A configuration that names one id or SHA-256 digest twice (docs/CONTRACT.md "Isolation
 * between accounts"): account ids, credential ids (API keys and OAuth tokens share one
 * space), agent ids, connection ids (compared case-insensitively, as UUIDs) and digests are
 * each unique across the whole file. `message` names both places of every duplicate, e.g.
 * `accounts[1].agents[0].id: agent "a1" is already defined at accounts[0].agents[2]`.
 */
export class DuplicateIdError extends ConfigError {
  override readonly name = 'DuplicateIdError';
}

const listen = {
  type: 'object',
  additionalProperties: false,
  properties: { host: { type: 'string', minLength: 1 }, port: { type: 'integer', minimum: 0, maximum: 65535 } },
} as const;
const window = {
  type: 'object',
  additionalProperties: false,
  required: ['requests', 'window_seconds'],
  properties: { requests: { type: 'integer', minimum: 1 }, window_seconds: { type: 'integer', minimum: 1, maximum: 86400 } },
} as const;
const credential = (oauth: boolean) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: oauth ? ['id', 'sha256', 'scopes'] : ['id', 'sha256'],
    properties: {
      id: { type: 'string', minLength: 1, maxLength: 128 },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      scopes: { type: 'array', items: { type: 'string', enum: ['runs:write', 'runs:read'] }, uniqueItems: true },
      expires_at: { type: 'string', format: 'date-time' },
    },
  }) as const;

/** JSON Schema of the configuration file (see `config.example.yaml`). */
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    base_url: { type: 'string', format: 'uri', pattern: '^https?://' },
    listen,
    egress: {
      type: 'object',
      additionalProperties: false,
      properties: { url: { type: 'string', format: 'uri', pattern: '^https?://' }, listen, source_address: { type: 'string', anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] } },
    },
    rate_limits: {
      type: 'object',
      additionalProperties: false,
      properties: { credential: window, agent: window, instance_count: { type: 'integer', minimum: 1 } },
    },
    redis_url: { type: 'string', pattern: '^rediss?://' },
    redis_prefix: { type: 'string', minLength: 1, maxLength: 64 },
    dependency_timeout_ms: { type: 'integer', minimum: 100, maximum: 60_000 },
    redis: { type: 'object', additionalProperties: false, properties: { require_durable: { type: 'boolean' } } },
    runs: {
      type: 'object',
      additionalProperties: false,
      properties: {
        retention_seconds: { type: 'integer', minimum: 60 },
        max_finished_in_memory: { type: 'integer', minimum: 0 },
        events_keepalive_ms: { type: 'integer', minimum: 10, maximum: 600_000 },
      },
    },
    worker: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean' },
        concurrency: { type: 'integer', minimum: 1, maximum: 1000 },
        cancel_grace_ms: { type: 'integer', minimum: 0, maximum: 3_600_000 },
        demo_delay_ms: { type: 'integer', minimum: 0, maximum: 3_600_000 },
      },
    },
    sqlserver: {
      type: 'object',
      additionalProperties: false,
      properties: {
        connect_timeout_ms: { type: 'integer', minimum: 100 },
        request_timeout_ms: { type: 'integer', minimum: 100 },
        pool_max: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    catalog: {
      type: 'object',
      additionalProperties: false,
      required: ['postgres'],
      properties: {
        postgres: {
          type: 'object',
          additionalProperties: false,
          properties: {
            url_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
            schema: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,39}$' },
            timeout_ms: { type: 'integer', minimum: 100, maximum: 60_000 },
          },
        },
      },
    },
    accounts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id'],
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 128 },
          api_keys: { type: 'array', items: credential(false) },
          oauth_tokens: { type: 'array', items: credential(true) },
          agents: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['id'],
              properties: {
                id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^/?#\\s]+$' },
                name: { type: 'string' },
                description: { type: 'string', minLength: 1, maxLength: 2000 },
              },
            },
          },
          webhook_endpoints: { type: 'array', items: webhookEndpointSchema },
          connections: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['id', 'type'],
              properties: {
                id: { type: 'string', format: 'uuid' },
                type: { type: 'string', minLength: 1 },
                name: { type: 'string', minLength: 1, maxLength: 200 },
                sqlserver: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['host', 'database', 'user', 'password_env'],
                  properties: {
                    host: { type: 'string', minLength: 1 },
                    port: { type: 'integer', minimum: 1, maximum: 65535 },
                    database: { type: 'string', minLength: 1 },
                    user: { type: 'string', minLength: 1 },
                    password_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
                    encrypt: { type: 'boolean' },
                    trust_server_certificate: { type: 'boolean' },
                  },
                },
              },
            },
          },
        },
      },
    },
    deprecations: {
      type: 'object',
      propertyNames: { enum: ['describeApi', 'insertRecord', 'updateRecord', 'startRun', 'getRun', 'listRuns', 'listAgents', 'getAgent', 'listConnections', 'getConnection'] },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['deprecated_at', 'link'],
        properties: { deprecated_at: { type: 'string', format: 'date-time' }, sunset_at: { type: 'string', format: 'date-time' }, link: { type: 'string', format: 'uri' } },
      },
    },
    log_level: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    // Shutdown (docs/CONTRACT.md "Dependencies and faults"): see ShutdownSettings.
    shutdown_delay_ms: { type: 'integer', minimum: 0, maximum: 600_000 },
    shutdown_grace_ms: { type: 'integer', minimum: 0, maximum: 600_000 },
    shutdown_close_budget_ms: { type: 'integer', minimum: QUIT_TIMEOUT_MS, maximum: 600_000 },
    index: {
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string' },
        documentation_url: { type: 'string', format: 'uri' },
        access_request_url: { type: 'string', format: 'uri' },
        trial: {
          type: 'object',
          additionalProperties: false,
          required: ['available', 'duration_days', 'invite_required'],
          properties: { available: { type: 'boolean' }, duration_days: { type: 'integer', minimum: 0 }, invite_required: { type: 'boolean' } },
        },
        public_sandbox_available: { type: 'boolean' },
      },
    },
    // admin_listen, cors, trusted_proxies (docs/decisions.md "Observability").
    ...observabilityProperties,
    // E-mail when a run ends (docs/decisions.md "E-mail notifications"): see ServerSettings.smtp.
    smtp: {
      type: 'object',
      additionalProperties: false,
      required: ['host', 'from'],
      properties: {
        host: { type: 'string', minLength: 1, maxLength: 253 },
        port: { type: 'integer', minimum: 1, maximum: 65535 },
        secure: { type: 'boolean' },
        require_tls: { type: 'boolean' },
        user: { type: 'string', minLength: 1 },
        password_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        // An address or `Name <address>`, on one line.
        from: { type: 'string', minLength: 3, maxLength: 998, pattern: '^[^\\r\\n]*@[^\\r\\n]*$' },
        timeout_ms: { type: 'integer', minimum: 100, maximum: 120_000 },
      },
    },
    webhooks: webhooksSchema,
    // Limits, expiry and storage of files (docs/CONTRACT.md "Files"): see ServerSettings.files.
    files: filesSchema,
  },
} as const;

const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
(addFormatsModule as unknown as { default: (a: Ajv2020) => void }).default(ajv);
const validateConfig = ajv.compile(configSchema);

function fieldOf(e: ErrorObject): string {
  const path = e.instancePath.replace(/^\//u, '').replace(/\/(\d+)/gu, '[$1]').replace(/\//gu, '.');
  const extra = e.keyword === 'additionalProperties' ? String(e.params['additionalProperty']) : e.keyword === 'required' ? String(e.params['missingProperty']) : '';
  return [path, extra].filter((p) => p !== '').join('.') || '(root)';
}

/* eslint-disable @typescript-eslint/no-explicit-any -- the raw config is checked by the schema above */
const date = (s: any): Date | undefined => (typeof s === 'string' ? new Date(s) : undefined);
const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } => (value === undefined ? {} : ({ [key]: value } as { [P in K]: V }));

function credentialsOf(list: any[] | undefined): CredentialSettings[] {
  return (list ?? []).map((c) => ({ id: c.id, sha256: c.sha256, scopes: c.scopes ?? [], ...opt('expiresAt', date(c.expires_at)) }));
}

/**
 * Every id or digest of `accounts` (already schema-valid) defined a second time, as
 * `<place>: <what> is already defined at <first place>` (docs/CONTRACT.md "Isolation between
 * accounts"). The first place is the earlier one: accounts in order, and in an account its
 * `api_keys`, `oauth_tokens`, `agents`, `connections` in that order.
 */
function duplicatesIn(accounts: any[]): string[] {
  const found: string[] = [];
  const first = new Map<string, string>();
  /** `space` keeps the id spaces apart: an agent and an account may share an id. */
  const claim = (space: string, key: string, place: string, field: string, what: string, verb = 'defined'): void => {
    const seen = first.get(`${space}\u0000${key}`);
    if (seen === undefined) first.set(`${space}\u0000${key}`, place);
    else found.push(`${place}.${field}: ${what} is already ${verb} at ${seen}`);
  };
  accounts.forEach((a, i) => {
    const at = `accounts[${i}]`;
    claim('account', a.id, at, 'id', `account "${a.id}"`);
    for (const list of ['api_keys', 'oauth_tokens'] as const) {
      (a[list] ?? []).forEach((k: any, j: number) => {
        claim('credential', k.id, `${at}.${list}[${j}]`, 'id', `credential "${k.id}"`);
        // The digest is not a secret, but the place says enough.
        claim('sha256', k.sha256, `${at}.${list}[${j}]`, 'sha256', 'this SHA-256 digest', 'used');
      });
    }
    (a.agents ?? []).forEach((g: any, j: number) => claim('agent', g.id, `${at}.agents[${j}]`, 'id', `agent "${g.id}"`));
    (a.connections ?? []).forEach((k: any, j: number) =>
      claim('connection', String(k.id).toLowerCase(), `${at}.connections[${j}]`, 'id', `connection "${String(k.id).toLowerCase()}"`),
    );
    (a.webhook_endpoints ?? []).forEach((w: any, j: number) => claim('webhook_endpoint', w.id, `${at}.webhook_endpoints[${j}]`, 'id', `webhook endpoint "${w.id}"`));
  });
  return found;
}

/**
 * Validates a parsed configuration and turns it into {@link ServerSettings}, with the
 * defaults of docs/CONTRACT.md (base URL `http://127.0.0.1:8080`, egress `:8081`, 600 / 60 s
 * per credential, 30 / 60 s per agent).
 *
 * @param raw - the parsed YAML document (`{}` for none).
 * @param env - environment (for `REDIS_URL`).
 * @throws ConfigError naming every bad field; {@link DuplicateIdError} (a `ConfigError`)
 *   when the file is otherwise valid but defines an id or a digest twice, naming both places.
 */
export function settingsFrom(raw: unknown, env: NodeJS.ProcessEnv = process.env): ServerSettings {
  const doc = raw ?? {};
  if (!validateConfig(doc)) {
    const lines = (validateConfig.errors ?? []).map((e) => `  ${fieldOf(e)}: ${e.message ?? 'is invalid'}`);
    throw new ConfigError(`invalid configuration:\n${[...new Set(lines)].join('\n')}`);
  }
  const c = doc as any;
  const listenMain: ListenSettings = { host: c.listen?.host ?? '127.0.0.1', port: c.listen?.port ?? 8080 };
  const listenEgress: ListenSettings = { host: c.egress?.listen?.host ?? '127.0.0.1', port: c.egress?.listen?.port ?? 8081 };
  const duplicates = duplicatesIn(c.accounts ?? []);
  if (duplicates.length > 0) throw new DuplicateIdError(`invalid configuration:\n${duplicates.map((d) => `  ${d}`).join('\n')}`);
  if (c.base_url === undefined && listenMain.port === 0) {
    throw new ConfigError('invalid configuration:\n  base_url: is required when listen.port is 0 (the URLs the API answers must name the real port)');
  }
  if (c.egress?.url === undefined && listenEgress.port === 0) {
    throw new ConfigError('invalid configuration:\n  egress.url: is required when egress.listen.port is 0');
  }
  if (c.catalog?.postgres !== undefined && (c.accounts ?? []).length > 0) {
    throw new ConfigError(
      'invalid configuration:\n  accounts: must be absent or empty when catalog.postgres is set (the accounts live in the PostgreSQL catalog: svc-server accounts add …)',
    );
  }
  const webhookErrors = webhookErrorsIn(c.accounts ?? [], env);
  if (webhookErrors.length > 0) throw new ConfigError(`invalid configuration:\n${webhookErrors.map((d) => `  ${d}`).join('\n')}`);
  let observability: ObservabilitySettings;
  try {
    observability = observabilitySettingsFrom(c);
  } catch (error) {
    throw new ConfigError(`invalid configuration:\n  ${(error as Error).message}`);
  }
  const smtp = smtpSettingsFrom(c.smtp, env);
  const files = filesSettingsOf(c.files, env);
  if (!files.ok) throw new ConfigError(`invalid configuration:\n${files.errors.map((d) => `  ${d}`).join('\n')}`);
  const cursorKey = env[CURSOR_KEY_ENV] || undefined;
  if (cursorKey !== undefined && Buffer.byteLength(cursorKey, 'utf8') < 32) {
    throw new ConfigError(`invalid configuration:\n  ${CURSOR_KEY_ENV}: must be at least 32 bytes (list cursors are signed with it)`);
  }
  for (const [op, d] of Object.entries(c.deprecations ?? {}) as [string, any][]) {
    if (d.sunset_at !== undefined && Date.parse(d.sunset_at) - Date.parse(d.deprecated_at) < MINIMUM_SUNSET_NOTICE_DAYS * 86_400_000) {
      throw new ConfigError(
        `invalid configuration:\n  deprecations.${op}.sunset_at: must be at least ${MINIMUM_SUNSET_NOTICE_DAYS} days after deprecated_at (minimum sunset notice)`,
      );
    }
  }
  return {
    baseUrl: (c.base_url ?? `http://${listenMain.host}:${listenMain.port}`).replace(/\/+$/u, ''),
    listen: listenMain,
    egressUrl: (c.egress?.url ?? `http://${listenEgress.host}:${listenEgress.port}`).replace(/\/+$/u, ''),
    egressListen: listenEgress,
    ...opt('egressSourceAddress', c.egress?.source_address as string | undefined),
    ...opt('cursorKey', cursorKey),
    rateLimits: {
      credential: {
        limit: c.rate_limits?.credential?.requests ?? DEFAULT_RATE_LIMITS.credential.limit,
        windowSeconds: c.rate_limits?.credential?.window_seconds ?? DEFAULT_RATE_LIMITS.credential.windowSeconds,
      },
      agent: {
        limit: c.rate_limits?.agent?.requests ?? DEFAULT_RATE_LIMITS.agent.limit,
        windowSeconds: c.rate_limits?.agent?.window_seconds ?? DEFAULT_RATE_LIMITS.agent.windowSeconds,
      },
      instanceCount: c.rate_limits?.instance_count ?? 1,
    },
    ...opt('redisUrl', (c.redis_url as string | undefined) ?? (env['REDIS_URL'] || undefined)),
    redisPrefix: c.redis_prefix ?? 'svc',
    dependencyTimeoutMs: c.dependency_timeout_ms ?? 2000,
    worker: {
      enabled: c.worker?.enabled ?? true,
      concurrency: c.worker?.concurrency ?? 4,
      cancelGraceMs: c.worker?.cancel_grace_ms ?? DEFAULT_CANCEL_GRACE_MS,
      demoDelayMs: c.worker?.demo_delay_ms ?? 500,
    },
    runEventsKeepAliveMs: c.runs?.events_keepalive_ms ?? 15_000,
    sqlserver: {
      connectTimeoutMs: c.sqlserver?.connect_timeout_ms ?? 15_000,
      requestTimeoutMs: c.sqlserver?.request_timeout_ms ?? 30_000,
      poolMax: c.sqlserver?.pool_max ?? 10,
    },
    accounts: (c.accounts ?? []).map((a: any) => ({
      id: a.id,
      apiKeys: credentialsOf(a.api_keys),
      oauthTokens: credentialsOf(a.oauth_tokens),
      agents: (a.agents ?? []).map((g: any) => ({ id: g.id, ...opt('name', g.name as string | undefined), ...opt('description', g.description as string | undefined) })),
      connections: (a.connections ?? []).map((k: any) => ({
        id: String(k.id).toLowerCase(),
        type: k.type,
        ...opt('name', k.name as string | undefined),
        ...opt(
          'sqlserver',
          k.sqlserver === undefined
            ? undefined
            : {
                host: k.sqlserver.host,
                port: k.sqlserver.port ?? 1433,
                database: k.sqlserver.database,
                user: k.sqlserver.user,
                passwordEnv: k.sqlserver.password_env,
                encrypt: k.sqlserver.encrypt ?? true,
                trustServerCertificate: k.sqlserver.trust_server_certificate ?? false,
              },
        ),
      })),
      webhookEndpoints: webhookEndpointsOf(a.webhook_endpoints, env),
    })),
    ...opt(
      'catalog',
      c.catalog?.postgres === undefined
        ? undefined
        : {
            postgres: {
              urlEnv: c.catalog.postgres.url_env ?? 'SVC_CATALOG_URL',
              schema: c.catalog.postgres.schema ?? 'svc',
              timeoutMs: c.catalog.postgres.timeout_ms ?? c.dependency_timeout_ms ?? 2000,
            },
          },
    ),
    deprecations: Object.fromEntries(
      Object.entries(c.deprecations ?? {}).map(([op, d]: [string, any]) => [
        op,
        { deprecatedAt: new Date(d.deprecated_at), link: d.link, ...opt('sunsetAt', date(d.sunset_at)) },
      ]),
    ),
    logLevel: c.log_level ?? 'info',
    shutdown: { delayMs: c.shutdown_delay_ms ?? 0, graceMs: c.shutdown_grace_ms ?? 10_000, closeBudgetMs: c.shutdown_close_budget_ms ?? 5_000 },
    durability: {
      redisRequireDurable: c.redis?.require_durable ?? false,
      runRetentionSeconds: c.runs?.retention_seconds ?? DEFAULT_RUN_RETENTION_SECONDS,
      maxFinishedRunsInMemory: c.runs?.max_finished_in_memory ?? DEFAULT_IN_MEMORY_MAX_FINISHED_RUNS,
    },
    index: {
      ...opt('name', c.index?.name as string | undefined),
      ...opt('documentationUrl', c.index?.documentation_url as string | undefined),
      ...opt('accessRequestUrl', c.index?.access_request_url as string | undefined),
      ...opt(
        'trial',
        c.index?.trial === undefined
          ? undefined
          : { available: c.index.trial.available, durationDays: c.index.trial.duration_days, inviteRequired: c.index.trial.invite_required },
      ),
      ...opt('publicSandboxAvailable', c.index?.public_sandbox_available as boolean | undefined),
    },
    observability,
    ...opt('smtp', smtp),
    webhooks: webhooksSettingsOf(c.webhooks),
    files: files.value,
  };
}

/**
 * `smtp` of the file (already schema-valid) with its defaults, and the password read from
 * the variable `password_env` names.
 * @throws ConfigError naming `smtp.password_env` when `user` is set and that variable is unset or empty.
 */
function smtpSettingsFrom(s: any, env: NodeJS.ProcessEnv): SmtpSettings | undefined {
  if (s === undefined) return undefined;
  const passwordEnv: string = s.password_env ?? DEFAULT_SMTP_PASSWORD_ENV;
  const password = env[passwordEnv] || undefined;
  if (s.user !== undefined && password === undefined) {
    throw new ConfigError(`invalid configuration:\n  smtp.password_env: the environment variable ${passwordEnv} is not set (smtp.user needs a password)`);
  }
  const secure: boolean = s.secure ?? false;
  return {
    host: s.host,
    port: s.port ?? (secure ? 465 : 587),
    secure,
    requireTls: s.require_tls ?? false,
    ...(s.user !== undefined ? { user: s.user as string, password: password as string } : {}),
    from: s.from,
    timeoutMs: s.timeout_ms ?? 10_000,
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * Reads and validates a YAML configuration file.
 * @throws ConfigError when the file cannot be read or parsed, or does not validate.
 */
export function loadSettings(path: string | undefined, env: NodeJS.ProcessEnv = process.env): ServerSettings {
  if (path === undefined) return settingsFrom({}, env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new ConfigError(`cannot read the configuration file ${path}`);
  }
  return parseSettings(text, path, env);
}

/**
 * The validation of {@link loadSettings} applied to a configuration file's text: the admin
 * CLI runs it on the exact text it is about to write.
 *
 * @param text - the file's YAML text.
 * @param source - the file's name, for the message.
 * @param env - environment (for `REDIS_URL`).
 * @throws ConfigError when the text is not YAML or does not validate (see {@link settingsFrom}).
 */
export function parseSettings(text: string, source: string, env: NodeJS.ProcessEnv = process.env): ServerSettings {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`the configuration file ${source} is not valid YAML: ${(error as Error).message}`);
  }
  return settingsFrom(raw, env);
}
