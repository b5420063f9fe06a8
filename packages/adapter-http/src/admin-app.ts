import { silentLogger, type Logger } from '@svc/core';
import Koa, { type Context } from 'koa';
import { JSON_CONTENT_TYPE, send } from './pipeline/problem-details.js';
import { readinessHandler } from './pipeline/readiness.js';
import { requestContext } from './pipeline/request-context.js';
import { routeMatching, type MountedRoute } from './pipeline/router.js';
import { pipeline } from './pipeline/stage.js';
import type { ReadinessCheck } from './settings.js';

/** A metrics scrape: the exposition text and its content type. */
export interface MetricsExposition {
  /** e.g. `text/plain; version=0.0.4; charset=utf-8` (Prometheus text format). */
  readonly contentType: string;
  readonly body: string;
}

/** Settings of {@link createAdminApp}. */
export interface AdminAppSettings {
  /** The metrics, rendered at each `GET /metrics` (e.g. a prom-client registry's `metrics()`). */
  readonly metrics: () => Promise<MetricsExposition>;
  /** The same checks as the public `/readyz`. */
  readonly readiness?: Readonly<Record<string, ReadinessCheck>>;
  /** True while the server drains for shutdown: `/readyz` answers 503 `draining`. */
  readonly isDraining?: () => boolean;
  /** Where a failing scrape is logged (the error's type, never its message); default: nowhere. */
  readonly logger?: Logger;
}

/**
 * The Koa app of the admin listener (docs/CONTRACT.md "Admin listener"; default
 * `127.0.0.1:9464`, never the public address): `GET /metrics` (no-store), `GET /livez`
 * (200 `{"status": "ok"}`) and `GET /readyz` (the public one's checks and answer,
 * `pipeline/readiness.ts`); anything else 404, errors as problem details with
 * `X-Request-Id`. It writes no access log line and feeds no request metric: a scrape
 * every few seconds would drown both.
 */
export function createAdminApp(settings: AdminAppSettings): Koa {
  const logger = settings.logger ?? silentLogger;
  const livez = JSON.stringify({ status: 'ok' });
  const routes: MountedRoute[] = [
    { method: 'GET', paths: ['/livez'], handler: (ctx: Context) => send(ctx, 200, JSON_CONTENT_TYPE, livez) },
    { method: 'GET', paths: ['/readyz'], handler: readinessHandler(settings) },
    {
      method: 'GET',
      paths: ['/metrics'],
      handler: async (ctx: Context) => {
        let scrape: MetricsExposition;
        try {
          scrape = await settings.metrics();
        } catch (error) {
          logger.error({ component: 'admin', error_type: (error as Error)?.name ?? typeof error }, 'metrics scrape failed');
          throw error;
        }
        ctx.set('Cache-Control', 'no-store');
        send(ctx, 200, scrape.contentType, scrape.body);
      },
    },
  ];
  const app = new Koa();
  app.silent = true;
  // Request ids and the error boundary, without the access log line.
  app.use(pipeline([requestContext(silentLogger)], routeMatching(routes, 'not_found')));
  return app;
}
