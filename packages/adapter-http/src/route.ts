import type { ApiIndex, OperationId, Principal, RequestMeter } from '@svc/core';
import type { Context } from 'koa';
import type { Json } from './openapi/components.js';
import type { FixedAnswer } from './pipeline/fixed-answer.js';
import type { EnforcedLimits, HttpAppSettings, HttpOperation, HttpUseCases } from './settings.js';

/** The two listeners: `{base_url}` and the direct stable-egress address `{egress_url}`. */
export type Listener = 'main' | 'egress';

/** Methods a route can serve; `HEAD` is served by `GET`, `OPTIONS` by the router. */
export type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** What a route's handler is built from, once per app. */
export interface RouteDeps {
  readonly useCases: HttpUseCases;
  readonly settings: HttpAppSettings;
  /** The limits the server enforces. */
  readonly limits: EnforcedLimits;
  /** The API index (built once by `DescribeApi`). */
  readonly index: ApiIndex;
  /** The served OpenAPI document, YAML, assembled from the route list (built on first call). */
  readonly openApiYaml: () => Buffer;
  /** `max-age` of cacheable fixed answers, in seconds. */
  readonly cacheMaxAgeSeconds: number;
}

/**
 * Who is calling an authenticated route: the principal the credential stage found, and
 * the request's rate-limit charge (charged once, by the use case or the rate-limit stage).
 */
export interface Caller {
  readonly principal: Principal;
  readonly meter: RequestMeter;
  /** The request's `X-Request-Id`: a run started by it keeps it (core `StartRunInput.requestId`). */
  readonly requestId: string;
}

/** What the OpenAPI document needs from the app: addresses and the enforced limits. */
export interface DocumentContext {
  readonly baseUrl: string;
  readonly egressUrl: string;
  readonly limits: EnforcedLimits;
}

interface RouteBase {
  /**
   * The operation: its id in the OpenAPI document (`<id>ViaEgress` on the egress
   * listener) and its key in `HttpAppSettings.deprecations`.
   */
  readonly operationId: HttpOperation | string;
  readonly method: RouteMethod;
  /**
   * Where it is served, per listener, in path-to-regexp syntax (`:name` parameters).
   * Matching is case-insensitive and takes a trailing slash; the egress listener serves
   * only the routes that name it.
   */
  readonly paths: Readonly<Partial<Record<Listener, readonly string[]>>>;
  /** Its OpenAPI operation object on `listener`; absent: not documented (health, docs). */
  readonly openapi?: (doc: DocumentContext, listener: Listener) => Json;
}

/** An operation that needs a credential: the credential stage runs first with `credential`. */
export interface AuthenticatedRoute extends RouteBase {
  readonly kind: 'authenticated';
  /** The core's operation whose credential rules (kinds, scopes) apply. */
  readonly credential: OperationId;
  /**
   * Builds the handler once per listener: it turns the request into the use case's
   * input, calls `execute` and sends the result (docs/ARCHITECTURE.md "Style to follow").
   */
  readonly handler: (deps: RouteDeps, listener: Listener) => (ctx: Context, caller: Caller) => Promise<void>;
}

/** An operation without a credential whose answer is computed per request. */
export interface PublicRoute extends RouteBase {
  readonly kind: 'public';
  readonly handler: (deps: RouteDeps, listener: Listener) => (ctx: Context) => Promise<void> | void;
}

/**
 * A `GET` whose answer never changes while the app runs, computed once (ETag and 304
 * included): answered before the router on the exact path, by the router on any other
 * spelling it accepts.
 */
export interface FixedRoute extends RouteBase {
  readonly kind: 'fixed';
  readonly method: 'GET';
  /** The answer; `deprecation` holds the operation's deprecation headers (empty when not deprecated). */
  readonly answer: (deps: RouteDeps, deprecation: readonly (readonly [string, string])[]) => FixedAnswer;
}

/**
 * One operation of the HTTP API: a route module under `routes/` exports one. Adding an
 * operation is adding such a module (and its use case) and listing it in `routes/index.ts`.
 */
export type RouteDefinition = AuthenticatedRoute | PublicRoute | FixedRoute;

/** A path parameter the router matched (already percent-decoded, see `routeMatching`); `''` when absent. */
export function pathParam(ctx: Context, name: string): string {
  return String((ctx['params'] as Record<string, string> | undefined)?.[name] ?? '');
}

/** A request header as one string (repeated lines joined by `, `); `undefined` when absent. */
export function requestHeader(ctx: Context, name: string): string | undefined {
  const value = ctx.request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
