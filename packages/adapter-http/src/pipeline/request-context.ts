// Imported, as in observe-request.ts.
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { DependencyUnavailableError, type Logger } from '@svc/core';
import { HttpProblem } from '../problem.js';
import { sendProblem } from './problem-details.js';
import type { IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { AccessLogFields, ObservedExchange, RequestObserver } from './observe-request.js';
import type { Stage } from './stage.js';
import { discardUnreadBody } from './unread-body.js';

/**
 * `Retry-After` of a 503 `service_unavailable` (a lost dependency), in seconds: long
 * enough for a Redis failover or a reconnect, short enough that a client does not give up.
 * Source: docs/CONTRACT.md "Dependencies and faults".
 */
export const RETRY_AFTER_SECONDS = 5;

const REQUEST_ID = /^[A-Za-z0-9._~:@/+=-]{1,128}$/u;

/**
 * The request's id: its `X-Request-Id` when valid (1–128 characters of
 * `A-Z a-z 0-9 . _ ~ : @ / + = -`), else a new UUID v4. Source: docs/CONTRACT.md
 * "Envelope and errors".
 */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Writes the request's access log line (`request`, level info, when enabled): `request_id`,
 * `method`, `path`, `status`, `duration_ms` (two decimals, from `startedMs`, a
 * `performance.now()` reading) and `logFields`'s.
 */
export function logRequest(logger: Logger, exchange: ObservedExchange, requestId: string, startedMs: number, logFields: AccessLogFields | undefined, span?: Span): void {
  // A logger that drops info lines (log_level warn and above, silent) is not handed the
  // line's fields: gathering them (the client address, the active span, the object) cost
  // ~3 us of a request's CPU in the bench profile, for nothing.
  if (logger.isLevelEnabled?.('info') === false) return;
  const durationMs = performance.now() - startedMs;
  // logFields: operation, account and credential ids, client address, trace id (pipeline/observe-request.ts).
  logger.info(
    { request_id: requestId, method: exchange.method, path: exchange.path, status: exchange.status, duration_ms: Math.round(durationMs * 100) / 100, ...logFields?.(exchange, span) },
    'request',
  );
}

/** What a listener's {@link requestContext} does besides the request id and the error boundary. */
export interface RequestContextOptions {
  /** The access log line's fields beyond the stage's own; none without it. */
  readonly logFields?: AccessLogFields;
  /** With it, a body left unread is read to its end (up to this many bytes) and dropped. */
  readonly unreadBodyLimitBytes?: number;
  /** The request's span and metrics, begun first and ended last (`pipeline/observe-request.ts`). */
  readonly observer?: RequestObserver;
}

/**
 * Request id, access log line and the error boundary: the outermost stage, run within the
 * request's observation (`options.observer`: span and metrics) when there is one. A valid
 * incoming `X-Request-Id` is kept, else one is made; it goes on every answer. A thrown
 * {@link HttpProblem} becomes its problem details (with its headers); a
 * `DependencyUnavailableError` 503 `service_unavailable` with `Retry-After: 5`; any other
 * throw a 500 `internal_error` that reveals nothing: the log line holds the request id
 * and the error's type, never its message (it may hold SQL text).
 * With `options.unreadBodyLimitBytes`, a body the request's handling left unread is then read to
 * its end and dropped, before the answer goes out ({@link discardUnreadBody}: here rather
 * than as a middleware of its own, one Koa layer fewer on every request).
 * Source: docs/CONTRACT.md "Envelope and errors".
 */
export function requestContext(logger: Logger, options: RequestContextOptions = {}): Stage {
  const { logFields, unreadBodyLimitBytes, observer } = options;
  return async (ctx, next) => {
    const observation = observer?.begin(ctx);
    const started = observation?.started ?? performance.now();
    const requestId = requestIdOf(ctx.req);
    ctx.state['requestId'] = requestId;
    ctx.res.setHeader('X-Request-Id', requestId);
    try {
      try {
        await (observation === undefined || observer === undefined ? next(ctx) : observer.run(observation, ctx, next));
      } catch (error) {
        if (error instanceof HttpProblem) {
          for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
          sendProblem(ctx, error.code, error.detail);
        } else if (error instanceof DependencyUnavailableError) {
          logger.warn({ request_id: requestId, dependency: error.dependency }, 'dependency unavailable');
          ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
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
        if (unreadBodyLimitBytes !== undefined && !ctx.req.complete && !ctx.req.destroyed) await discardUnreadBody(ctx.req, unreadBodyLimitBytes);
        logRequest(logger, ctx, requestId, started, logFields, observation?.span);
      }
    } finally {
      // After the answer is settled and the line written: the metrics see the final status.
      if (observation !== undefined) observer?.end(ctx, observation);
    }
  };
}
