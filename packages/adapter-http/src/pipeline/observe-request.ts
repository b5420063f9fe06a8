// Imported: the global `performance` is a lazy getter of Node's (~100 instructions an access).
import { performance } from 'node:perf_hooks';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context as OtelContext, type Span, type Tracer } from '@opentelemetry/api';
import { carriesContext, noopTelemetry, type Principal, type Telemetry } from '@svc/core';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import type { ClientAddressResolver } from './client-address.js';
import type { NextStage } from './stage.js';

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

/**
 * What observing a request reads of it: a Koa `Context` has it all, and the fixed answers
 * served before Koa (`pipeline/fixed-listener.ts`) build it from the request.
 */
export interface ObservedExchange {
  readonly req: IncomingMessage;
  /** The request method, upper case. */
  readonly method: string;
  /** The request path without its query. */
  readonly path: string;
  /** The answer's status (200 until one is chosen). */
  readonly status: number;
  /** What the stages left: {@link ObservedState} and `requestId`. */
  readonly state: ObservedState & { readonly requestId?: string };
  /** The route's path template, when a route matched (Koa's `ctx._matchedRoute`). */
  readonly _matchedRoute?: unknown;
}

/** The operation of the request: its route's, `preflight`, or {@link UNMATCHED_OPERATION}. */
export function operationOf(ctx: ObservedExchange): string {
  return (ctx.state as ObservedState).operation ?? UNMATCHED_OPERATION;
}

/** One request as {@link RequestObserver} follows it, from `begin` to `end`. */
export interface RequestObservation {
  /** `performance.now()` at `begin`, milliseconds. */
  readonly started: number;
  /** The request's server span (the API's no-op span without a tracer provider). */
  readonly span: Span;
  /** The extracted parent context (an incoming `traceparent`, else the root): the span's parent, set active with it by `run`. */
  readonly context: OtelContext;
}

/**
 * The span and metrics of every request of a public listener, run by the request context
 * stage around everything else (`pipeline/request-context.ts`): one async frame for both,
 * where two stages of their own cost each run start ~1.2 KiB more heap (`pnpm
 * bench:instructions`, bytes allocated a request).
 */
export interface RequestObserver {
  /** Starts the request's clock and span; first of all. */
  begin(ctx: ObservedExchange): RequestObservation;
  /** Runs `next` with the span active when it carries context (a tracer provider is registered). */
  run(observation: RequestObservation, ctx: Context, next: NextStage): Promise<void> | void;
  /** Records the request's metrics and ends its span; last of all, whatever happened. */
  end(ctx: ObservedExchange, observation: RequestObservation): void;
}

/**
 * The observer of the public listeners: a server span per request and the request
 * metrics (core `Telemetry.requestFinished`). The span (OpenTelemetry HTTP semantic
 * conventions: `http.request.method`, `url.path`, `http.route`,
 * `http.response.status_code`, `client.address`, `url.scheme`, plus `svc.operation`,
 * `svc.request_id`, `svc.account_id`, `svc.credential_id`) continues an incoming
 * `traceparent` when a propagator is registered, and is the parent of the use case's
 * span; a 5xx marks it as an error. Without a tracer provider it is a no-op, and no
 * attribute is computed. Duration in seconds, from `begin` to `end`.
 * Source: docs/decisions.md "Observability".
 */
export function requestObserver(telemetry: Telemetry = noopTelemetry, resolveClient?: ClientAddressResolver): RequestObserver {
  const tracer: Tracer = trace.getTracer(ADAPTER_HTTP_TRACER_NAME);
  return {
    begin(ctx) {
      const started = performance.now();
      const parent = propagation.extract(ROOT_CONTEXT, ctx.req.headers);
      const span = tracer.startSpan(ctx.method, { kind: SpanKind.SERVER }, parent);
      return { started, span, context: parent };
    },
    run(observation, ctx, next) {
      // Without an SDK the span is the API's no-op: no context to carry.
      const { span } = observation;
      return carriesContext(span) ? context.with(trace.setSpan(observation.context, span), next, undefined, ctx) : next(ctx);
    },
    end(ctx, { started, span }) {
      const operation = operationOf(ctx);
      const status = ctx.status;
      telemetry.requestFinished(operation, status, (performance.now() - started) / 1000);
      if (span.isRecording()) {
        const state = ctx.state;
        const route = ctx._matchedRoute;
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
    },
  };
}

/** The fields of a request's access log line beyond the request context's own; `span`: the request's span, when observed. */
export type AccessLogFields = (ctx: ObservedExchange, span?: Span) => Record<string, unknown>;

/**
 * The fields the access log line adds to `request_id`, `method`, `path`, `status` and
 * `duration_ms`: `operation`, `account_id` and `credential_id` once authenticated (ids,
 * never a secret), `client_ip` (from trusted proxies only, see `clientAddressResolver`),
 * and `trace_id` while a span is recorded (the request's `span`, else the active one).
 */
export function accessLogFields(resolveClient: ClientAddressResolver): AccessLogFields {
  return (ctx, observed) => {
    const { principal } = ctx.state;
    const span = observed ?? trace.getActiveSpan();
    return {
      operation: operationOf(ctx),
      ...(principal !== undefined ? { account_id: principal.accountId, credential_id: principal.credentialId } : {}),
      client_ip: resolveClient(ctx.req).ip,
      ...(span?.isRecording() === true ? { trace_id: span.spanContext().traceId } : {}),
    };
  };
}
