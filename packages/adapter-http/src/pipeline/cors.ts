import koaCors from '@koa/cors';
import type { Context } from 'koa';
import type { Stage } from './stage.js';

/**
 * Response headers a browser client may read (`Access-Control-Expose-Headers`): the
 * request id, the rate-limit headers, `Retry-After`, `Location` of a run start, the
 * caching and deprecation headers, `WWW-Authenticate` and `Allow`.
 */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'Retry-After',
  'Location',
  'ETag',
  'Deprecation',
  'Sunset',
  'Link',
  'WWW-Authenticate',
  'Allow',
  'Idempotent-Replayed',
] as const;

/** Request headers a browser client may send (`Access-Control-Allow-Headers`). */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'X-API-Key',
  'Content-Type',
  'Content-Encoding',
  'X-Request-Id',
  'X-Svc-Egress',
  'Idempotency-Key',
  'If-None-Match',
  'Last-Event-ID',
] as const;

/** Seconds a browser may cache a preflight answer (`Access-Control-Max-Age`): 10 minutes. */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * CORS for the configured origins only (`cors.origins`, e.g. `https://app.example.com`),
 * with `@koa/cors`: a request whose `Origin` is one of them gets
 * `Access-Control-Allow-Origin` with that origin (never `*`), `Vary: Origin`, and the
 * exposed headers of {@link CORS_EXPOSED_HEADERS}; its preflight is answered 204 with the
 * methods the API serves, {@link CORS_ALLOWED_HEADERS} and a max age of
 * {@link CORS_MAX_AGE_SECONDS} seconds, labelled operation `preflight`. Any other origin
 * gets no CORS header at all (the browser then refuses to read the answer), and its
 * preflight reaches the router like any `OPTIONS`. No credentials mode: the API takes
 * credentials in headers, never cookies. Returns `undefined` for no origin (no CORS
 * headers on any answer: the default). Source: docs/decisions.md "Observability" (HTTP
 * for real deployments).
 */
export function corsStage(origins: readonly string[] | undefined): Stage | undefined {
  if (origins === undefined || origins.length === 0) return undefined;
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  const cors = koaCors({
    origin: (ctx: Context) => {
      const origin = ctx.get('Origin');
      return allowed.has(origin.toLowerCase()) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'],
    allowHeaders: [...CORS_ALLOWED_HEADERS],
    exposeHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: CORS_MAX_AGE_SECONDS,
  });
  return async (ctx, next) => {
    let passed = false;
    await cors(ctx, () => {
      passed = true;
      return Promise.resolve(next(ctx));
    });
    // @koa/cors answered a preflight itself, without the router.
    if (!passed) ctx.state['operation'] = 'preflight';
  };
}
