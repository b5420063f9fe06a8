import { silentLogger } from '@svc/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa, { type Context } from 'koa';
import { openApiYaml } from './openapi/document.js';
import { authenticated } from './pipeline/authenticate.js';
import { deprecationHeaderList, setHeaders } from './pipeline/deprecation.js';
import { sendFixed, type FixedAnswer } from './pipeline/fixed-answer.js';
import { fixedListener, type FixedListener } from './pipeline/fixed-listener.js';
import { meteredRoute } from './pipeline/rate-limit.js';
import { CODED_SLACK_BYTES } from './pipeline/json-body.js';
import { requestContext } from './pipeline/request-context.js';
import { clientAddressResolver } from './pipeline/client-address.js';
import { corsStage } from './pipeline/cors.js';
import { accessLogFields, requestObserver } from './pipeline/observe-request.js';
import { routeMatching, type Handler, type MountedRoute, type OtherMethods } from './pipeline/router.js';
import { pipeline } from './pipeline/stage.js';
import type { Caller, Listener, RouteDefinition, RouteDeps } from './route.js';
import { ROUTES } from './routes/index.js';
import { enforcedLimits, type HttpAppSettings, type HttpOperation, type HttpUseCases } from './settings.js';

export type { HttpAppSettings, HttpOperation, HttpUseCases, ReadinessCheck } from './settings.js';

/** A Koa application built by {@link createHttpApp} or {@link createEgressApp}. */
export type HttpApp = Koa;

/** What a listener's routes are built from, computed once per app. */
function depsOf(useCases: HttpUseCases, settings: HttpAppSettings): RouteDeps {
  const limits = enforcedLimits(useCases.rateLimits.settings, settings);
  let yaml: Buffer | undefined;
  return {
    useCases,
    settings,
    limits,
    index: useCases.describeApi.execute(),
    // Only a listener that serves the document pays for its YAML, once.
    openApiYaml: () =>
      (yaml ??= Buffer.from(
        openApiYaml({
          baseUrl: settings.baseUrl,
          egressUrl: settings.egressUrl,
          rateLimits: limits,
          bodyLimitBytes: limits.bodyLimitBytes,
          deprecatedOperations: Object.keys(settings.deprecations ?? {}),
        }),
      )),
    cacheMaxAgeSeconds: settings.cacheMaxAgeSeconds ?? 300,
  };
}

/**
 * One route as `listener` serves it: its handler behind the stages it needs, composed
 * once (no per-request closure): deprecation headers, then for an authenticated route
 * the credential stage and the rate-limit stage, then the route's own handler.
 */
function mount(route: RouteDefinition, deps: RouteDeps, listener: Listener, paths: readonly string[]): MountedRoute {
  const deprecation = deprecationHeaderList(deps.settings.deprecations?.[route.operationId as HttpOperation]);
  // The label of its log lines and metrics: the operationId of the OpenAPI document.
  const operation = listener === 'egress' ? `${route.operationId}ViaEgress` : route.operationId;
  if (route.kind === 'fixed') {
    const answer = { ...route.answer(deps, deprecation), operation };
    return { method: route.method, paths, handler: (ctx: Context) => sendFixed(ctx, answer), fixed: answer };
  }
  let handler: Handler;
  if (route.kind === 'public') {
    const handle = route.handler(deps, listener);
    handler = (ctx) => {
      ctx.state['operation'] = operation;
      if (deprecation.length > 0) setHeaders(ctx, deprecation);
      return handle(ctx);
    };
  } else {
    const handle = route.handler(deps, listener);
    const { credential } = route;
    const { authenticate: authenticator, rateLimits } = deps.useCases;
    // A `then`, not an async frame (docs/ARCHITECTURE.md "Style to follow"); a throw here
    // reaches the request context stage, which awaits it inside its `try`.
    const metered = (ctx: Context, caller: Caller): Promise<void> => meteredRoute(ctx, caller, handle);
    handler = (ctx) => {
      ctx.state['operation'] = operation;
      setHeaders(ctx, deprecation);
      return authenticated(ctx, authenticator, rateLimits, credential, metered);
    };
  }
  return { method: route.method, paths, handler };
}

/** The fixed answers each app serves before Koa (`pipeline/fixed-listener.ts`), for {@link requestListener}. */
const FIXED_LISTENERS = new WeakMap<Koa, FixedListener>();

/**
 * The Node request listener of an app built by {@link createHttpApp} or
 * {@link createEgressApp}: its fixed answers (`GET`/`HEAD` of the index, the OpenAPI
 * document, llms.txt, the docs site, the OAuth metadata, `/livez`) straight on Node's
 * request and response, everything else through `app.callback()`; the answers are the
 * same either way (test/fixed-listener.test.ts), the fixed ones cost less CPU
 * (bench/BENCHMARKS.md, issue 11). Use it where `app.callback()` would be used; a
 * middleware added to the app with `app.use` does not see the fixed answers (serve
 * `app.callback()` for that). Source: docs/decisions.md "Envelope and errors".
 */
export function requestListener(app: HttpApp): (req: IncomingMessage, res: ServerResponse) => void {
  const koa = app.callback();
  const fixed = FIXED_LISTENERS.get(app);
  if (fixed === undefined) return (req, res) => void koa(req, res);
  return (req, res) => {
    if (!fixed(req, res)) void koa(req, res);
  };
}

function build(useCases: HttpUseCases, settings: HttpAppSettings, listener: Listener, otherMethods: OtherMethods, routes: readonly RouteDefinition[]): Koa {
  const deps = depsOf(useCases, settings);
  const mounted: MountedRoute[] = [];
  for (const route of routes) {
    const paths = route.paths[listener];
    if (paths !== undefined) mounted.push(mount(route, deps, listener, paths));
  }
  const app = new Koa();
  app.silent = true;
  // Observability and CORS (docs/decisions.md "Observability"): the request context stage
  // runs the span and metrics around its request id, access log line and error boundary,
  // and drops what a handler left of a body (up to the limit and its coded slack); then
  // CORS and routing, all one Koa layer (pipeline/stage.ts).
  const resolveClient = clientAddressResolver(settings.trustedProxies);
  const cors = corsStage(settings.corsOrigins);
  const logger = settings.logger ?? silentLogger;
  const logFields = accessLogFields(resolveClient);
  const observer = requestObserver(settings.telemetry, resolveClient);
  if (cors === undefined) {
    const answers = new Map<string, FixedAnswer>();
    for (const route of mounted) for (const path of route.paths) if (route.fixed !== undefined) answers.set(path, route.fixed);
    if (answers.size > 0) FIXED_LISTENERS.set(app, fixedListener(answers, { logger, logFields, observer }));
  }
  app.use(
    pipeline(
      [
        requestContext(logger, {
          logFields,
          unreadBodyLimitBytes: deps.limits.bodyLimitBytes + CODED_SLACK_BYTES,
          observer,
        }),
        ...(cors !== undefined ? [cors] : []),
      ],
      routeMatching(mounted, otherMethods),
    ),
  );
  return app;
}

/**
 * The Koa app of the main address (`{base_url}`): the operations of docs/api-spec.md
 * (`GET /api/v1`, `POST`/`PATCH /api/v1/connections/{connection_id}/records`,
 * `POST /api/v1/agents/{agent_id}/run`, `GET /api/v1/runs/{run_id}`), the OpenAPI
 * document at `/openapi.yaml` and `/docs/api-reference/openapi.yaml`, `/llms.txt`,
 * `/docs` (the docs site of `settings.docs`, else the llms.txt text), the OAuth protected resource metadata (RFC 9728), `/livez` and `/readyz`:
 * the routes of `routes/`. A known path answers another method with 405 and `Allow`,
 * `OPTIONS` with 204. Errors are RFC 9457 problem details (docs/CONTRACT.md "Envelope and errors").
 */
export function createHttpApp(useCases: HttpUseCases, settings: HttpAppSettings, routes: readonly RouteDefinition[] = ROUTES): Koa {
  return build(useCases, settings, 'main', 'method_not_allowed', routes);
}

/**
 * The Koa app of the direct stable-egress address (`{egress_url}`): the routes that name
 * the egress listener (`POST` and `PATCH /v1/connections/{connection_id}/records`), with
 * the same credentials, bodies and answers as the main address, always on the egress
 * route. Anything else, another method on those paths included: 404.
 * Source: docs/api-spec.md "POST .../records"; docs/CONTRACT.md "Addresses".
 */
export function createEgressApp(useCases: HttpUseCases, settings: HttpAppSettings, routes: readonly RouteDefinition[] = ROUTES): Koa {
  return build(useCases, settings, 'egress', 'not_found', routes);
}
