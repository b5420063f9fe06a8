import { createHash, randomUUID } from 'node:crypto';
import Router from '@koa/router';
import {
  DependencyUnavailableError,
  silentLogger,
  type Authenticate,
  type DescribeApi,
  type DomainError,
  type GetRun,
  type InsertRecord,
  type Logger,
  type OperationId,
  type Principal,
  type RateLimitPolicy,
  type RequestMeter,
  type RecordWriteInput,
  type Result,
  type StartRun,
  type UpdateRecord,
} from '@svc/core';
import Koa, { type Context, type Middleware, type Next } from 'koa';
import { deprecationHeaders, type Deprecation } from './deprecation.js';
import { llmsTxt } from './llms-txt.js';
import { openApiYaml } from './openapi.js';
import { HttpProblem, PROBLEM_CONTENT_TYPE, problemOf, problemOfDomainError, STATUS_BY_CODE, type HttpErrorCode } from './problem.js';
import { setRateLimitHeaders } from './rate-limit-headers.js';
import { ACCEPTED_CONTENT_CODINGS, readJsonBody } from './request-body.js';

/** A Koa application built by {@link createHttpApp} or {@link createEgressApp}. */
export type HttpApp = Koa;

/** The use cases the HTTP adapter calls (any object with the same `execute`). */
export interface HttpUseCases {
  readonly describeApi: Pick<DescribeApi, 'execute'>;
  readonly authenticate: Pick<Authenticate, 'execute'>;
  readonly insertRecord: Pick<InsertRecord, 'execute'>;
  readonly updateRecord: Pick<UpdateRecord, 'execute'>;
  readonly startRun: Pick<StartRun, 'execute'>;
  readonly getRun: Pick<GetRun, 'execute'>;
  /** Makes each authenticated request's rate-limit charge (core `RateLimitPolicy`). */
  readonly rateLimits: Pick<RateLimitPolicy, 'meterFor'>;
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
  /** The per-credential limit, as stated in the OpenAPI document. */
  readonly credentialLimit: { readonly limit: number; readonly windowSeconds: number };
  /** Largest JSON body in bytes; default 1 MiB (CONTRACT.md "Row writes"). Over it: 413. */
  readonly bodyLimitBytes?: number;
  /** Operations marked deprecated: they answer with Deprecation, Sunset and Link. */
  readonly deprecations?: Partial<Record<HttpOperation, Deprecation>>;
  /** `max-age` of the index and the OpenAPI document, in seconds; default 300. */
  readonly cacheMaxAgeSeconds?: number;
  /** Where request lines and failures go; default: nowhere. */
  readonly logger?: Logger;
  /** Checks reported by `/readyz` (e.g. `redis`); all must pass for 200. */
  readonly readiness?: Readonly<Record<string, ReadinessCheck>>;
  /** True while the server drains for shutdown: `/readyz` answers 503. */
  readonly isDraining?: () => boolean;
}

const DEFAULT_BODY_LIMIT = 1024 * 1024;
// Every 415 of a body says which codings it may use, so one documented answer covers the
// media type, the charset and the coding (RFC 9110 §15.5.16).
const ACCEPT_ENCODING = { 'Accept-Encoding': ACCEPTED_CONTENT_CODINGS } as const;
const REQUEST_ID = /^[A-Za-z0-9._~:@/+=-]{1,128}$/u;
const WWW_AUTHENTICATE_REALM = 'Bearer realm="svc"';

type Handler = (ctx: Context) => Promise<void> | void;

function header(ctx: Context, name: string): string | undefined {
  const value = ctx.request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** `Content-Type` of JSON answers, as Koa's `ctx.type = 'application/json'` writes it. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Status, `Content-Type` and a JSON text body, in the order Koa's `ctx.status`, `ctx.type`
 * and `ctx.body` setters would set them, without their media-type lookup.
 */
function send(ctx: Context, status: number, contentType: string, text: string): void {
  const response = ctx.response;
  response.status = status;
  ctx.res.setHeader('Content-Type', contentType);
  response.body = text;
}

function sendProblem(ctx: Context, code: HttpErrorCode, detail: string, errors?: DomainError['errors']): void {
  const body = problemOf(code, detail, { errors, requestId: ctx.state['requestId'] as string });
  send(ctx, body.status, PROBLEM_CONTENT_TYPE, JSON.stringify(body));
}

function sendJson(ctx: Context, status: number, body: unknown): void {
  send(ctx, status, JSON_CONTENT_TYPE, JSON.stringify(body));
}

/**
 * Request id, access log line and the error boundary: the outermost middleware. Any
 * unexpected throw becomes a 500 `internal_error` that reveals nothing; the log line
 * holds the request id and the error's type, never its message (it may hold SQL text).
 */
function requestContext(logger: Logger): Middleware {
  return async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    const incoming = header(ctx, 'x-request-id');
    const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state['requestId'] = requestId;
    ctx.res.setHeader('X-Request-Id', requestId);
    try {
      await next();
    } catch (error) {
      if (error instanceof HttpProblem) {
        for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
        sendProblem(ctx, error.code, error.detail);
      } else if (error instanceof DependencyUnavailableError) {
        logger.warn({ request_id: requestId, dependency: error.dependency }, 'dependency unavailable');
        ctx.set('Retry-After', '5');
        sendProblem(ctx, 'service_unavailable', 'A service this operation depends on is unavailable; nothing was done. Retry later.');
      } else {
        const e = error as { name?: unknown; code?: unknown };
        logger.error(
          { request_id: requestId, error_type: typeof e?.name === 'string' ? e.name : typeof error, error_code: typeof e?.code === 'string' ? e.code : undefined },
          'unexpected error',
        );
        sendProblem(ctx, 'internal_error', `An unexpected error occurred; quote request id ${requestId} when reporting it.`);
      }
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        { request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, duration_ms: Math.round(durationMs * 100) / 100 },
        'request',
      );
    }
  };
}

/**
 * Registers `path` with one handler per method: another method answers 405 with `Allow`,
 * `OPTIONS` answers 204 with `Allow`, `HEAD` runs the `GET` handler (Koa drops the body).
 */
function route(router: Router, path: string, handlers: Partial<Record<'GET' | 'POST' | 'PATCH', Handler>>): void {
  const allowed = Object.keys(handlers);
  if (handlers.GET !== undefined) allowed.push('HEAD');
  allowed.push('OPTIONS');
  const allow = allowed.join(', ');
  router.all(path, async (ctx) => {
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    const handler = handlers[method as keyof typeof handlers];
    if (handler !== undefined) return handler(ctx);
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new HttpProblem('method_not_allowed', `Method ${ctx.method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
  });
}

function notFound(ctx: Context): void {
  sendProblem(ctx, 'not_found', `Nothing is served at ${ctx.method} ${ctx.path}.`);
}

/** Everything the two apps share: authentication, JSON bodies, metered answers. */
class Operations {
  /** The deprecation headers of each deprecated operation, computed once. */
  readonly deprecationHeaders: Partial<Record<HttpOperation, readonly (readonly [string, string])[]>> = {};

  constructor(
    private readonly useCases: HttpUseCases,
    private readonly settings: HttpAppSettings,
  ) {
    for (const [operation, d] of Object.entries(settings.deprecations ?? {}) as [HttpOperation, Deprecation | undefined][]) {
      if (d !== undefined) this.deprecationHeaders[operation] = Object.entries(deprecationHeaders(d));
    }
  }

  /**
   * Authenticates and opens the request's rate-limit charge, or answers 401 / 403 and
   * returns `undefined`.
   */
  async authenticated(ctx: Context, operation: OperationId): Promise<{ principal: Principal; meter: RequestMeter } | undefined> {
    // Every header line, from the raw headers: `ctx.request.headers` keeps only the first
    // Authorization and joins repeated X-API-Key lines, which would hide a second
    // credential (CONTRACT.md "Request bodies and headers").
    const distinct = ctx.req.headersDistinct;
    const result = await this.useCases.authenticate.execute({
      apiKeys: distinct['x-api-key'] ?? [],
      authorizations: distinct['authorization'] ?? [],
      operation,
    });
    if (result.ok) return { principal: result.value, meter: this.useCases.rateLimits.meterFor(result.value) };
    const error = result.error;
    if (error.code === 'insufficient_scope') {
      ctx.set('WWW-Authenticate', `${WWW_AUTHENTICATE_REALM}, error="insufficient_scope", scope="${error.requiredScope ?? ''}"`);
    } else if (error.code === 'missing_credential') {
      ctx.set('WWW-Authenticate', WWW_AUTHENTICATE_REALM);
    } else {
      ctx.set('WWW-Authenticate', `${WWW_AUTHENTICATE_REALM}, error="invalid_token"`);
    }
    this.sendError(ctx, error);
    return undefined;
  }

  /**
   * Reads the JSON body (see `readJsonBody` in request-body.ts): 415 for another media
   * type, a charset other than UTF-8 or an unsupported `Content-Encoding`; 413 over the
   * limit, counted after decoding; 400 `invalid_json` for a body that cannot be decoded
   * or parsed, or that repeats a member name. An absent body is `undefined` (the use
   * case's validation names it).
   */
  async body(ctx: Context): Promise<unknown> {
    const hasBody = (ctx.request.length ?? 0) > 0 || ctx.request.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return undefined;
    if (ctx.request.is('application/json', 'application/*+json') === false) {
      throw new HttpProblem('unsupported_media_type', 'The request body must be JSON, sent with Content-Type: application/json.', ACCEPT_ENCODING);
    }
    const charset = ctx.request.charset.toLowerCase();
    if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new HttpProblem('unsupported_media_type', 'The request body charset is not supported; send UTF-8.', ACCEPT_ENCODING);
    }
    return readJsonBody(ctx.req, this.settings.bodyLimitBytes ?? DEFAULT_BODY_LIMIT);
  }

  /**
   * Reads the body like {@link body}. When it cannot be read (415, 413, `invalid_json`),
   * the use case never runs, so the request is charged here, once (core `RequestMeter`),
   * and its answer carries the rate-limit headers like every authenticated answer
   * (CONTRACT.md "Rate limits"): 429 when over the limit, else the body's problem.
   */
  async meteredBody(ctx: Context, meter: RequestMeter): Promise<unknown> {
    try {
      return await this.body(ctx);
    } catch (error) {
      if (!(error instanceof HttpProblem) || meter.charged) throw error;
      const refused = await meter.charge();
      if (meter.decision !== undefined) setRateLimitHeaders(ctx.res, meter.decision);
      if (refused !== undefined) throw new HttpProblem(refused.code, refused.detail);
      throw error;
    }
  }

  /** Sends a use case's answer: the charge's rate-limit headers, then data or problem details. */
  sendMetered<T>(ctx: Context, meter: RequestMeter, result: Result<T, DomainError>, status: number): void {
    if (meter.decision !== undefined) setRateLimitHeaders(ctx.res, meter.decision);
    if (result.ok) sendJson(ctx, status, { data: result.value });
    else this.sendError(ctx, result.error);
  }

  sendError(ctx: Context, error: DomainError): void {
    send(ctx, STATUS_BY_CODE[error.code], PROBLEM_CONTENT_TYPE, JSON.stringify(problemOfDomainError(error, ctx.state['requestId'] as string)));
  }

  deprecate(ctx: Context, operation: HttpOperation): void {
    const headers = this.deprecationHeaders[operation];
    if (headers === undefined) return;
    for (const [name, value] of headers) ctx.res.setHeader(name, value);
  }

  /** A row write handler; `route` is fixed on the egress address, else read from the header. */
  recordWrite(kind: 'insertRecord' | 'updateRecord', operation: HttpOperation, egress: boolean): Handler {
    return async (ctx) => {
      this.deprecate(ctx, operation);
      const caller = await this.authenticated(ctx, kind);
      if (caller === undefined) return;
      const input: RecordWriteInput = {
        ...caller,
        connectionId: String(ctx['params']?.connection_id ?? ''),
        body: await this.meteredBody(ctx, caller.meter),
        route: egress ? 'egress' : { egressHeader: header(ctx, 'x-svc-egress') },
      };
      const result = await this.useCases[kind].execute(input);
      this.sendMetered(ctx, caller.meter, result, kind === 'insertRecord' ? 201 : 200);
    };
  }
}

/**
 * RFC 9110 §13.1.2: `If-None-Match` matches when it is `*` or lists `etag` (weak
 * comparison). Not `ctx.fresh`: it ignores `If-None-Match` when the request also says
 * `Cache-Control: no-cache`, which fetch() adds to every conditional request, so fetch
 * clients would never get a 304.
 */
function noneMatch(ctx: Context, etag: string): boolean {
  const header = ctx.get('If-None-Match').trim();
  if (header === '') return false;
  if (header === '*') return true;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//u, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/**
 * A precomputed answer to `GET` (and so `HEAD`) of a resource that does not change while
 * the app runs: the index, the OpenAPI document, llms.txt, the OAuth metadata, `/livez`.
 */
interface FixedAnswer {
  /** Headers before the body's, in order: deprecation, then `ETag` and `Cache-Control`. */
  readonly headers: readonly (readonly [string, string])[];
  /** The validator of `If-None-Match`; absent: not cacheable, always 200. */
  readonly etag?: string;
  /** The `Content-Type` header, as Koa's `ctx.type` setter writes it. */
  readonly contentType: string;
  readonly body: Buffer | string;
}

function cachedAnswer(contentType: string, body: Buffer, maxAgeSeconds: number, before: readonly (readonly [string, string])[] = []): FixedAnswer {
  const etag = etagOf(body);
  return { headers: [...before, ['ETag', etag], ['Cache-Control', `public, max-age=${maxAgeSeconds}`]], etag, contentType, body };
}

function sendFixed(ctx: Context, answer: FixedAnswer): void {
  const res = ctx.res;
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  const response = ctx.response;
  response.status = 200;
  if (answer.etag !== undefined && noneMatch(ctx, answer.etag)) {
    response.status = 304;
    return;
  }
  res.setHeader('Content-Type', answer.contentType);
  response.body = answer.body;
}

/**
 * Answers `GET` and `HEAD` of the exact paths of `answers` before the router runs: the
 * index and the documents are the most requested and cheapest answers. Any other
 * spelling the router accepts (trailing slash, other case) still reaches the router,
 * whose handlers send the same answers.
 */
function fixedAnswers(answers: ReadonlyMap<string, FixedAnswer>): Middleware {
  return (ctx: Context, next: Next) => {
    const method = ctx.method;
    if (method === 'GET' || method === 'HEAD') {
      const answer = answers.get(ctx.path);
      if (answer !== undefined) return sendFixed(ctx, answer);
    }
    return next();
  };
}

function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * The Koa app of the main address (`{base_url}`): the operations of api-spec.md
 * (`GET /api/v1`, `POST`/`PATCH /api/v1/connections/{connection_id}/records`,
 * `POST /api/v1/agents/{agent_id}/run`, `GET /api/v1/runs/{run_id}`), the OpenAPI
 * document at `/openapi.yaml` and `/docs/api-reference/openapi.yaml`, `/llms.txt`,
 * `/docs`, the OAuth protected resource metadata (RFC 9728), `/livez` and `/readyz`.
 * Errors are RFC 9457 problem details (CONTRACT.md "Envelope and errors").
 */
export function createHttpApp(useCases: HttpUseCases, settings: HttpAppSettings): Koa {
  const logger = settings.logger ?? silentLogger;
  const maxAge = settings.cacheMaxAgeSeconds ?? 300;
  const ops = new Operations(useCases, settings);
  const app = new Koa();
  app.silent = true;
  const router = new Router();

  const index = useCases.describeApi.execute();
  const indexBody = Buffer.from(JSON.stringify(index));
  const yaml = Buffer.from(
    openApiYaml({
      baseUrl: settings.baseUrl,
      egressUrl: settings.egressUrl,
      credentialLimit: settings.credentialLimit,
      deprecatedOperations: Object.keys(settings.deprecations ?? {}),
    }),
  );
  const llms = Buffer.from(llmsTxt(index));
  const protectedResource = Buffer.from(
    JSON.stringify({
      resource: `${settings.baseUrl}/api/v1`,
      scopes_supported: index.authentication.methods[0]?.scopes_supported ?? [],
      bearer_methods_supported: ['header'],
      resource_name: index.name,
      resource_documentation: index.documentation_url,
    }),
  );

  const fixed = new Map<string, FixedAnswer>([
    ['/api/v1', cachedAnswer(JSON_CONTENT_TYPE, indexBody, maxAge, ops.deprecationHeaders.describeApi)],
    ['/openapi.yaml', cachedAnswer('application/yaml; charset=utf-8', yaml, maxAge)],
    ['/llms.txt', cachedAnswer('text/plain; charset=utf-8', llms, maxAge)],
    ['/.well-known/oauth-protected-resource', cachedAnswer(JSON_CONTENT_TYPE, protectedResource, maxAge)],
    ['/livez', { headers: [], contentType: JSON_CONTENT_TYPE, body: JSON.stringify({ status: 'ok' }) }],
  ]);
  fixed.set('/docs/api-reference/openapi.yaml', fixed.get('/openapi.yaml') as FixedAnswer);
  fixed.set('/docs', fixed.get('/llms.txt') as FixedAnswer);
  for (const [path, answer] of fixed) route(router, path, { GET: (ctx) => sendFixed(ctx, answer) });

  const records = { POST: ops.recordWrite('insertRecord', 'insertRecord', false), PATCH: ops.recordWrite('updateRecord', 'updateRecord', false) };
  route(router, '/api/v1/connections/:connection_id/records', records);
  route(router, '/api/v1/agents/:agent_id/run', {
    POST: async (ctx) => {
      ops.deprecate(ctx, 'startRun');
      const caller = await ops.authenticated(ctx, 'startRun');
      if (caller === undefined) return;
      const body = await ops.meteredBody(ctx, caller.meter);
      const result = await useCases.startRun.execute({ ...caller, agentId: String(ctx['params']?.agent_id ?? ''), body });
      if (result.ok) ctx.res.setHeader('Location', result.value.status_url);
      ops.sendMetered(ctx, caller.meter, result, 202);
    },
  });
  route(router, '/api/v1/runs/:run_id', {
    GET: async (ctx) => {
      ops.deprecate(ctx, 'getRun');
      const caller = await ops.authenticated(ctx, 'getRun');
      if (caller === undefined) return;
      const result = await useCases.getRun.execute({ ...caller, runId: String(ctx['params']?.run_id ?? '') });
      ops.sendMetered(ctx, caller.meter, result, 200);
    },
  });
  route(router, '/readyz', {
    GET: async (ctx) => {
      const checks: Record<string, 'ok' | 'failing'> = {};
      await Promise.all(
        Object.entries(settings.readiness ?? {}).map(async ([name, check]) => {
          checks[name] = await check().then((up) => (up ? 'ok' : 'failing'), () => 'failing' as const);
        }),
      );
      const draining = settings.isDraining?.() ?? false;
      const ready = !draining && Object.values(checks).every((c) => c === 'ok');
      ctx.set('Cache-Control', 'no-store');
      sendJson(ctx, ready ? 200 : 503, { status: ready ? 'ready' : draining ? 'draining' : 'not_ready', checks });
    },
  });

  app.use(requestContext(logger));
  app.use(fixedAnswers(fixed));
  app.use(router.routes());
  app.use(notFound);
  return app;
}

/**
 * The Koa app of the direct stable-egress address (`{egress_url}`): only `POST` and
 * `PATCH /v1/connections/{connection_id}/records`, with the same credentials, bodies and
 * answers as the main address, always on the egress route. Anything else: 404.
 * Source: api-spec.md "POST .../records"; CONTRACT.md "Addresses".
 */
export function createEgressApp(useCases: HttpUseCases, settings: HttpAppSettings): Koa {
  const ops = new Operations(useCases, settings);
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  router.post('/v1/connections/:connection_id/records', ops.recordWrite('insertRecord', 'insertRecord', true));
  router.patch('/v1/connections/:connection_id/records', ops.recordWrite('updateRecord', 'updateRecord', true));
  app.use(requestContext(settings.logger ?? silentLogger));
  app.use(router.routes());
  app.use(notFound);
  return app;
}
