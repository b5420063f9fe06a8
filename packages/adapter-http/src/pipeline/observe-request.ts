import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { carriesContext, noopTelemetry, type Principal, type Telemetry } from '@svc/core';
import type { Context } from 'koa';
import type { ClientAddressResolver } from './client-address.js';
import type { Stage } from './stage.js';

/** Name of the tracer of `@svc/adapter-http`. */
export const ADAPTER_HTTP_TRACER_NAME = '@svc/adapter-http';

/** The operation label of a request no route matched (404, 405, an `OPTIONS` of the router). */
export const UNMATCHED_OPERATION = 'unmatched';

/** What the stages of one request leave in `ctx.state` for its log line, span and metrics. */
export interface ObservedState {
  /** The route's operation (`startRun`, `insertRecordViaEgress`, …), set when a route runs. */
  readonly operation?: string;
  /** The caller, set once the credential stage accepted it. */
  readonly principal?: Principal;
}

/** The operation of the request: its route's, `preflight`, or {@link UNMATCHED_OPERATION}. */
export function operationOf(ctx: Context): string {
  return (ctx.state as ObservedState).operation ?? UNMATCHED_OPERATION;
}

/**
 * The outermost stage of the public listeners: a server span per request and the
 * request metrics (core `Telemetry.requestFinished`). The span (OpenTelemetry HTTP
 * semantic conventions: `http.request.method`, `url.path`, `http.route`,
 * `http.response.status_code`, `client.address`, `url.scheme`, plus `svc.operation`,
 * `svc.request_id`, `svc.account_id`, `svc.credential_id`) continues an incoming
 * `traceparent` when a propagator is registered, and is the parent of the use case's
 * span; a 5xx marks it as an error. Without a tracer provider it is a no-op, and no
 * attribute is computed. Duration in seconds, from this stage to the end of the chain.
 * Source: docs/decisions.md "Observability".
 */
export function observeRequest(telemetry: Telemetry = noopTelemetry, resolveClient?: ClientAddressResolver): Stage {
  const tracer: Tracer = trace.getTracer(ADAPTER_HTTP_TRACER_NAME);
  return async (ctx, next) => {
    const started = performance.now();
    const parent = propagation.extract(ROOT_CONTEXT, ctx.req.headers);
    const span = tracer.startSpan(ctx.method, { kind: SpanKind.SERVER }, parent);
    try {
      // Without an SDK the span is the API's no-op: no context to carry.
      if (carriesContext(span)) await context.with(trace.setSpan(parent, span), next, undefined, ctx);
      else await next(ctx);
    } finally {
      const operation = operationOf(ctx);
      const status = ctx.status;
      telemetry.requestFinished(operation, status, (performance.now() - started) / 1000);
      if (span.isRecording()) {
        const state = ctx.state as ObservedState & { requestId?: string };
        const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
        const client = resolveClient?.(ctx.req);
        span.updateName(typeof route === 'string' ? `${ctx.method} ${route}` : `${ctx.method} ${operation}`);
        span.setAttributes({
          'http.request.method': ctx.method,
          'url.path': ctx.path,
          'http.response.status_code': status,
          'svc.operation': operation,
          ...(typeof route === 'string' ? { 'http.route': route } : {}),
          ...(state.requestId !== undefined ? { 'svc.request_id': state.requestId } : {}),
          ...(state.principal !== undefined ? { 'svc.account_id': state.principal.accountId, 'svc.credential_id': state.principal.credentialId } : {}),
          ...(client !== undefined ? { 'client.address': client.ip, 'url.scheme': client.scheme } : {}),
        });
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}

/**
 * The fields the access log line adds to `request_id`, `method`, `path`, `status` and
 * `duration_ms`: `operation`, `account_id` and `credential_id` once authenticated (ids,
 * never a secret), `client_ip` (from trusted proxies only, see `clientAddressResolver`),
 * and `trace_id` while a span is recorded.
 */
export function accessLogFields(resolveClient: ClientAddressResolver): (ctx: Context) => Record<string, unknown> {
  return (ctx) => {
    const { principal } = ctx.state as ObservedState;
    const span = trace.getActiveSpan();
    return {
      operation: operationOf(ctx),
      ...(principal !== undefined ? { account_id: principal.accountId, credential_id: principal.credentialId } : {}),
      client_ip: resolveClient(ctx.req).ip,
      ...(span?.isRecording() === true ? { trace_id: span.spanContext().traceId } : {}),
    };
  };
}
