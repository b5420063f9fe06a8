import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressApp, createHttpApp, requestListener, type HttpAppSettings, type HttpUseCases } from '@svc/adapter-http';
import { createCore, type Core, type CorePorts, type CoreOptions, type FileSettings, type RateLimitPolicy, type RateLimitSettings } from '@svc/core';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  aConnection,
  anAgent,
  aStoredCredential,
  InMemoryAgentCatalog,
  InMemoryConnectionCatalog,
  InMemoryCredentialStore,
  InMemoryRateLimitStore,
  InMemoryRecordWriter,
  type InMemoryRunQueue,
  type InMemoryRunStore,
  SequentialIdGenerator,
  SystemClock,
  RecordingLogger,
} from '@svc/core/testing';
import { recordingAnswers } from './observed-answers.js';

/** `{base_url}` and `{egress_url}` the apps under test are configured with (not where they listen). */
export const BASE_URL = 'https://api.svc.example.test';
export const EGRESS_URL = 'https://egress.svc.example.test';

/** Secrets the tests present; the store holds only their digests. */
export const SECRETS = {
  keyA: 'svc-http-test-key-account-a-000000000001',
  keyA2: 'svc-http-test-key-account-a-000000000002',
  keyB: 'svc-http-test-key-account-b-000000000001',
  tokenWrite: 'svcpt_http-test-token-runs-write-00000001',
  tokenFiles: 'svcpt_http-test-token-files-write-0000001',
  tokenNoScope: 'svcpt_http-test-token-no-scope-000000001',
  tokenExpired: 'svcpt_http-test-token-expired-0000000001',
} as const;

/** The `sqlserver` connection of account A, with table `dbo.orders`. */
export const CONNECTION_ID = aConnection().connectionId;
/** A `postgresql` connection of account A. */
export const PG_CONNECTION_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
/** A `sqlserver` connection of account B. */
export const FOREIGN_CONNECTION_ID = '11111111-2222-4333-8444-555555555555';
/** Agents of account A and of account B. */
export const AGENT_ID = anAgent().agentId;
export const FOREIGN_AGENT_ID = 'agent_of_b';

/** The in-memory world behind the apps under test. */
export interface World {
  /** The credential store: a test may add a credential (even one the settings would refuse). */
  readonly credentials: InMemoryCredentialStore;
  readonly agents: InMemoryAgentCatalog;
  readonly connections: InMemoryConnectionCatalog;
  readonly writer: InMemoryRecordWriter;
  readonly runs: InMemoryRunStore;
  readonly queue: InMemoryRunQueue;
  /** The file records and bytes (in memory). */
  readonly files: Core['files'];
  /** The rate-limit policy every authenticated request is charged by. */
  readonly rateLimits: RateLimitPolicy;
  readonly useCases: HttpUseCases;
  /** Another core on this world's ports and options, with `overrides` in their place (e.g. a failing writer). */
  readonly coreWith: (overrides: CorePorts) => Core;
}

/** Options of {@link startApps}. */
export interface AppOptions {
  readonly limits?: RateLimitSettings;
  readonly bodyLimitBytes?: number;
  readonly deprecations?: HttpAppSettings['deprecations'];
  /** Replace some use cases (e.g. one that throws). */
  readonly override?: (world: World) => Partial<HttpUseCases>;
  /** More settings of both apps (telemetry, CORS origins, trusted proxies). */
  readonly settings?: Partial<HttpAppSettings>;
  /** The core's `files.*` settings. */
  readonly files?: FileSettings;
}

/** Both apps listening on loopback. */
export interface RunningApps {
  /** Where the main app listens, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Where the egress app listens. */
  readonly egressUrl: string;
  readonly world: World;
  readonly logger: RecordingLogger;
  readonly settings: HttpAppSettings;
  close(): Promise<void>;
}

function buildWorld(limits: RateLimitSettings | undefined, files?: FileSettings): World {
  const clock = new SystemClock();
  const credentials = new InMemoryCredentialStore([
    aStoredCredential(SECRETS.keyA, { credentialId: 'key_a1' }),
    aStoredCredential(SECRETS.keyA2, { credentialId: 'key_a2' }),
    aStoredCredential(SECRETS.keyB, { credentialId: 'key_b1', accountId: ACCOUNT_B }),
    aStoredCredential(SECRETS.tokenWrite, { credentialId: 'tok_write', scopes: ['runs:write', 'runs:read'] }),
    aStoredCredential(SECRETS.tokenFiles, { credentialId: 'tok_files', scopes: ['files:write'] }),
    aStoredCredential(SECRETS.tokenNoScope, { credentialId: 'tok_noscope', scopes: [] }),
    aStoredCredential(SECRETS.tokenExpired, {
      credentialId: 'tok_expired',
      scopes: ['runs:write'],
      expiresAt: new Date('2020-01-01T00:00:00Z'),
    }),
  ]);
  const connections = new InMemoryConnectionCatalog([
    aConnection(),
    aConnection({ connectionId: PG_CONNECTION_ID, type: 'postgresql' }),
    aConnection({ connectionId: FOREIGN_CONNECTION_ID, accountId: ACCOUNT_B }),
  ]);
  const agents = new InMemoryAgentCatalog([anAgent(), anAgent({ agentId: FOREIGN_AGENT_ID, accountId: ACCOUNT_B })]);
  const writer = new InMemoryRecordWriter();
  writer.defineTable('dbo.orders', ['id', 'sku', 'qty', 'note', 'status'], [{ id: 1, sku: 'A-1', qty: 1, note: null, status: 'new' }]);
  const ports: CorePorts = { credentials, connections, agents, recordWriter: writer, rateLimitStore: new InMemoryRateLimitStore(clock), clock, ids: new SequentialIdGenerator() };
    // The tests of the other operations name made-up file keys; files.test.ts (which passes `files`) checks keys.
  const options: CoreOptions = { baseUrl: BASE_URL, egressUrl: EGRESS_URL, ...(limits !== undefined ? { rateLimits: limits } : {}), files: files ?? { verifyKeys: false } };
  const core = createCore(ports, options);
  return {
    credentials,
    agents,
    connections,
    writer,
    runs: core.runs.store,
    queue: core.runs.queue,
    files: core.files,
    rateLimits: core.rateLimits,
    useCases: core,
    coreWith: (overrides) => createCore({ ...ports, runs: core.runs, ...overrides }, options),
  };
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Builds the use cases on the core's in-memory adapters, both Koa apps, and listens on
 * loopback ports chosen by the OS.
 */
export async function startApps(options: AppOptions = {}): Promise<RunningApps> {
  const world = buildWorld(options.limits, options.files);
  const useCases = { ...world.useCases, ...(options.override?.(world) ?? {}) };
  const logger = new RecordingLogger();
  const settings: HttpAppSettings = {
    baseUrl: BASE_URL,
    egressUrl: EGRESS_URL,
    logger,
    ...(options.bodyLimitBytes !== undefined ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
    ...(options.deprecations !== undefined ? { deprecations: options.deprecations } : {}),
    ...options.settings,
  };
  // Every answer is recorded: declared-statuses.test.ts checks each against the document.
  // As the API server serves them: fixed answers before Koa (`requestListener`).
  const main = createServer(recordingAnswers('main', requestListener(createHttpApp(useCases, settings))));
  const egress = createServer(recordingAnswers('egress', requestListener(createEgressApp(useCases, settings))));
  const [url, egressUrl] = await Promise.all([listen(main), listen(egress)]);
  return {
    url,
    egressUrl,
    world: { ...world, useCases },
    logger,
    settings,
    close: async () => {
      await Promise.all([close(main), close(egress)]);
    },
  };
}

export { apiKey, bearer, call, type Answer, type CallOptions } from '../../../../tools/test-support/http.js';

/** Path of the row writes of a connection on the main address. */
export const recordsPath = (connectionId: string = CONNECTION_ID): string => `/api/v1/connections/${connectionId}/records`;
/** Path of the row writes of a connection on the egress address. */
export const egressRecordsPath = (connectionId: string = CONNECTION_ID): string => `/v1/connections/${connectionId}/records`;
/** Path of run creation of an agent. */
export const runPath = (agentId: string = AGENT_ID): string => `/api/v1/agents/${encodeURIComponent(agentId)}/run`;

/** A valid insert body on `dbo.orders`. */
export const anInsert = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  entity: 'dbo.orders',
  values: { id: 2, sku: 'B-2', qty: 3, note: null, status: 'new' },
  ...overrides,
});

/** A valid update body on `dbo.orders` (row id 1). */
export const anUpdate = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  entity: 'dbo.orders',
  key_column: 'id',
  key_value: 1,
  values: { status: 'paid' },
  ...overrides,
});

/** The account ids of the world, for readability in tests. */
export { ACCOUNT_A, ACCOUNT_B };
