/**
 * The shapes `createMcpEndpoint` is built from and serves: its use cases, settings and
 * one exchange (re-exported by `./endpoint.js`). Source: docs/CONTRACT.md "MCP".
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticate, DomainErrorCode, Logger, Principal, RateLimitPolicy, RecordWriteInput, RequestMeter, ValidationIssue } from '@svc/core';
import type { McpTool, McpToolUseCases } from './tools.js';

/** The use cases the endpoint calls: the tools' use cases, the credential check and the rate-limit policy. */
export interface McpUseCases extends McpToolUseCases {
  /** Authenticates each tool call with the tool's REST operation (kinds and scopes as REST). */
  readonly authenticate: Pick<Authenticate, 'execute'>;
  /** Gives each tool call its meter (`meterFor(principal)`), charged once, as REST does. */
  readonly rateLimits: Pick<RateLimitPolicy, 'meterFor'>;
}

/**
 * The codes a tool error can carry: the core's, plus `service_unavailable` (a lost
 * dependency) and `internal_error` (a bug), as REST answers them.
 */
export type McpProblemCode = DomainErrorCode | 'service_unavailable' | 'internal_error';

/**
 * Builds the problem details body (RFC 9457) REST would answer for `code`, as the HTTP
 * adapter builds it (`problemOf` of `@svc/adapter-http`, passed in by the composition
 * root): `type`, `title`, `status`, `detail`, `code`, `errors`, `request_id`.
 */
export type ProblemBuilder = (
  code: McpProblemCode,
  detail: string,
  extra: { errors?: readonly ValidationIssue[] | undefined; requestId?: string | undefined },
) => object;

/** Settings of `createMcpEndpoint`. */
export interface McpEndpointSettings {
  /** `serverInfo.name` (e.g. `svc`). */
  readonly name: string;
  /** `serverInfo.version`. */
  readonly version: string;
  /** Problem details of a tool error: the same JSON REST answers. */
  readonly problemOf: ProblemBuilder;
  /** Where failures of tool calls are logged (type only, never a message); default: nowhere. */
  readonly logger?: Logger;
  /** The tools; default {@link MCP_TOOLS}. */
  readonly tools?: readonly McpTool[];
  /**
   * Largest body in bytes the SDK reads itself, when a door passes no parsed body; default
   * the SDK's (4 MiB). The HTTP adapter always passes the body it read under its own limit.
   */
  readonly maxRequestBodySize?: number;
}

/**
 * One HTTP exchange with an agent's MCP endpoint, after the door (the HTTP adapter)
 * authenticated the credential (401 otherwise), found the agent (404 otherwise) and read
 * the JSON body.
 */
export interface McpExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The agent of the path. */
  readonly agentId: string;
  /** The parsed JSON-RPC message (exact numbers kept as the door's parser keeps them). */
  readonly body: unknown;
  /** Who sent it (identified; each tool call is authorized for its own operation). */
  readonly principal: Principal;
  /** Every `X-API-Key` and `Authorization` line of the request, for each tool call's authentication. */
  readonly credentials: { readonly apiKeys: readonly string[]; readonly authorizations: readonly string[] };
  /** The route of row writes: `egress`, or the raw `X-Svc-Egress` header (as REST passes it). */
  readonly route: NonNullable<RecordWriteInput['route']>;
  /** `X-Request-Id` of the request. */
  readonly requestId?: string;
  /**
   * The request's rate-limit charge: every authenticated request is charged exactly once
   * (docs/CONTRACT.md "Rate limits"). When the body is one tool call
   * (`McpEndpoint.isToolCall`) the door leaves it uncharged and the call charges it
   * through its use case (with the agent's window for `start_run`); otherwise the door
   * charged it before the exchange, and each call of a batch gets a meter of its own.
   */
  readonly meter: RequestMeter;
  /** Called once a tool call's meter was charged, before the answer's headers are written (the door adds rate-limit headers). */
  readonly charged?: (meter: RequestMeter) => void;
  /** Called when a tool call met a lost dependency, before the answer's headers are written (the door adds `Retry-After`). */
  readonly unavailable?: () => void;
}

