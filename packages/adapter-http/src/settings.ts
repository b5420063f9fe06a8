import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DEFAULT_BODY_LIMIT_BYTES,
  type Authenticate,
  type ClaimIdempotencyKey,
  type DescribeApi,
  type GetAgent,
  type GetConnection,
  type FindAgent,
  type GetRun,
  type CancelRun,
  type CompleteFile,
  type DeleteFile,
  type GetFile,
  type ListFiles,
  type PrepareFile,
  type ReceiveFileUpload,
  type StreamRunEvents,
  type ListAgents,
  type ListConnections,
  type InsertRecord,
  type ListRuns,
  type Logger,
  type OperationId,
  type Principal,
  type RecordWriteInput,
  type RequestMeter,
  type Telemetry,
  type RateLimitPolicy,
  type RateLimitSettings,
  type StartRun,
  type UpdateRecord,
  type WindowLimit,
} from '@svc/core';
import type { DocsSite } from './docs-site.js';
import type { Deprecation } from './pipeline/deprecation.js';

/** The use cases the HTTP adapter calls (any object with the same `execute`). */
export interface HttpUseCases {
  readonly describeApi: Pick<DescribeApi, 'execute'>;
  readonly authenticate: Pick<Authenticate, 'execute'>;
  readonly insertRecord: Pick<InsertRecord, 'execute'>;
  readonly updateRecord: Pick<UpdateRecord, 'execute'>;
  readonly startRun: Pick<StartRun, 'execute'>;
  readonly getRun: Pick<GetRun, 'execute'>;
  readonly cancelRun: Pick<CancelRun, 'execute'>;
  readonly streamRunEvents: Pick<StreamRunEvents, 'execute'>;
  readonly listAgents: Pick<ListAgents, 'execute'>;
  readonly getAgent: Pick<GetAgent, 'execute'>;
  readonly listConnections: Pick<ListConnections, 'execute'>;
  readonly getConnection: Pick<GetConnection, 'execute'>;
  readonly listRuns: Pick<ListRuns, 'execute'>;
  readonly prepareFile: Pick<PrepareFile, 'execute'>;
  /** The bytes of a file at the API's own signed upload address (no credential). */
  readonly receiveFileUpload: Pick<ReceiveFileUpload, 'execute'>;
  readonly completeFile: Pick<CompleteFile, 'execute'>;
  readonly getFile: Pick<GetFile, 'execute'>;
  readonly listFiles: Pick<ListFiles, 'execute'>;
  readonly deleteFile: Pick<DeleteFile, 'execute'>;
  /** The agent of an MCP endpoint, checked before the exchange is handed over (404 otherwise). */
  readonly findAgent: Pick<FindAgent, 'execute'>;
  /** The `Idempotency-Key` step of the run start and the row writes (replay, refuse or claim). */
  readonly claimIdempotencyKey: Pick<ClaimIdempotencyKey, 'execute'>;
  /**
   * Makes each authenticated request's rate-limit charge (core `RateLimitPolicy`); its
   * `settings` are the limits the OpenAPI document and llms.txt state, so the document
   * always says what the policy enforces.
   */
  readonly rateLimits: Pick<RateLimitPolicy, 'meterFor' | 'settings'>;
}

/**
 * One exchange with an agent's MCP endpoint, as the HTTP adapter hands it over once the
 * credential is identified (401 otherwise), the JSON body read (415, 413, 400 otherwise)
 * and the agent found (404 otherwise). The same shape as `McpExchange` of
 * `@svc/adapter-mcp`, which the composition root plugs in (adapters never import each other).
 */
export interface McpDoorExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly agentId: string;
  /** The parsed JSON-RPC message; numbers that a double cannot hold stay core `ExactNumber`s. */
  readonly body: unknown;
  readonly principal: Principal;
  /** Every `X-API-Key` and `Authorization` line, for each tool call's own authentication. */
  readonly credentials: { readonly apiKeys: readonly string[]; readonly authorizations: readonly string[] };
  /** The route of row writes: the raw `X-Svc-Egress` header, as REST passes it. */
  readonly route: NonNullable<RecordWriteInput['route']>;
  readonly requestId?: string;
  /**
   * The request's rate-limit charge (core `RequestMeter`). Already charged by the HTTP
   * adapter unless the body is one tool call ({@link McpDoor.isToolCall}): then the tool
   * call charges it, through its use case, exactly once.
   */
  readonly meter: RequestMeter;
  /** Sets the rate-limit headers of a charged tool call on the answer. */
  readonly charged: (meter: RequestMeter) => void;
  /** Sets `Retry-After` on the answer: a tool call met a lost dependency (its result is `service_unavailable`). */
  readonly unavailable: () => void;
}

/** The MCP endpoint the main listener mounts at `/api/v1/agents/{agent_id}/mcp` (adapter-mcp's `McpEndpoint`). */
export interface McpDoor {
  /** Answers the exchange on its raw Node response (status, headers, JSON or SSE body). */
  handle(exchange: McpDoorExchange): Promise<void>;
  /**
   * True when `body` is one JSON-RPC `tools/call` of a tool the endpoint serves: that call
   * charges the request (its use case knows whether the agent's window applies). Every
   * other message (`initialize`, `tools/list`, `ping`, notifications, an unknown tool, a
   * batch) is charged by the HTTP adapter before the exchange is handed over.
   */
  isToolCall(body: unknown): boolean;
}

/** Names of the operations that can be marked deprecated. */
export type HttpOperation = OperationId | 'describeApi';

/** One named readiness check: resolves true when the dependency answers. */
export type ReadinessCheck = () => Promise<boolean>;

/** Settings of the HTTP adapter. URLs are absolute, without a trailing slash. */
export interface HttpAppSettings {
  /** `{base_url}`: `servers[0].url` of the OpenAPI document. */
  readonly baseUrl: string;
  /** `{egress_url}`. */
  readonly egressUrl: string;
  /**
   * Largest JSON body in bytes, counted after decoding; default `DEFAULT_BODY_LIMIT_BYTES`
   * (1 MiB, docs/CONTRACT.md "Row writes"). Over it: 413. Enforced here and stated in the document.
   */
  readonly bodyLimitBytes?: number;
  /** Operations marked deprecated: they answer with Deprecation, Sunset and Link. */
  readonly deprecations?: Partial<Record<HttpOperation, Deprecation>>;
  /** `max-age` of the index and the OpenAPI document, in seconds; default 300. */
  readonly cacheMaxAgeSeconds?: number;
  /**
   * The agents' MCP endpoint (`POST /api/v1/agents/{agent_id}/mcp`, docs/CONTRACT.md
   * "MCP"); absent: that path answers 404 `not_found`, like an unknown agent.
   */
  readonly mcp?: McpDoor;
  /**
   * The docs site served under `/docs` (pages rendered by the composition root); absent:
   * `/docs` answers the llms.txt text and `/docs/{page}` 404 (docs/decisions.md "Docs site").
   */
  readonly docs?: DocsSite;
  /** Where request lines and failures go; default: nowhere. */
  readonly logger?: Logger;
  /** Checks reported by `/readyz` (e.g. `redis`); all must pass for 200. */
  readonly readiness?: Readonly<Record<string, ReadinessCheck>>;
  /** True while the server drains for shutdown: `/readyz` answers 503. */
  readonly isDraining?: () => boolean;
  /**
   * Ms between two comment lines (`: keep-alive`) of an open run events stream
   * (`GET /api/v1/runs/{run_id}/events`), so that proxies keep it open; default 15000.
   * Source: docs/CONTRACT.md "Runs lifecycle".
   */
  readonly runEventsKeepAliveMs?: number;
  /**
   * Aborted when the server stops: every open run events stream ends at once, cleanly
   * (its client resumes with `Last-Event-ID`, on another instance), so that the drain
   * does not wait for streams that never end. Source: docs/decisions.md "Cancel and run
   * events", "Stopping".
   */
  readonly closingStreams?: AbortSignal;

  // Observability and deployment (docs/decisions.md "Observability").
  /** Gets every request's operation, status and duration (core `Telemetry.requestFinished`); default: nobody. */
  readonly telemetry?: Telemetry;
  /**
   * Origins allowed to call the API from a browser (`https://app.example.com`, no path):
   * their requests get CORS headers (`pipeline/cors.ts`); default none: no CORS header.
   */
  readonly corsOrigins?: readonly string[];
  /**
   * Proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed, for logs and
   * spans only: addresses, CIDR ranges, `loopback`, `linklocal`, `uniquelocal`
   * (`pipeline/client-address.ts`); default none: both headers are ignored.
   */
  readonly trustedProxies?: readonly string[];
}

/** The limits a server enforces, as the adapter enforces (body) and states (all) them. */
export interface EnforcedLimits {
  /** Per credential, on every authenticated operation. */
  readonly credential: WindowLimit;
  /** Per agent, on run creation. */
  readonly agent: WindowLimit;
  /** Largest request body in bytes, after decoding. */
  readonly bodyLimitBytes: number;
}

/**
 * The limits a server enforces: the rate limits of its core policy (`rateLimits.settings`)
 * and the body size of `settings` (default `DEFAULT_BODY_LIMIT_BYTES`).
 */
export function enforcedLimits(rateLimits: RateLimitSettings, settings: Pick<HttpAppSettings, 'bodyLimitBytes'>): EnforcedLimits {
  return {
    credential: rateLimits.credential,
    agent: rateLimits.agent,
    bodyLimitBytes: settings.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
  };
}

const KIB = 1024;
const MIB = KIB * KIB;

/** A size in bytes as people read it: `1 MiB`, `64 KiB`, else `<n> bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= MIB && bytes % MIB === 0) return `${bytes / MIB} MiB`;
  if (bytes >= KIB && bytes % KIB === 0) return `${bytes / KIB} KiB`;
  return `${bytes} bytes`;
}
