import { context, INVALID_SPAN_CONTEXT, isSpanContextValid, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { errorTypeOf } from '../domain/error-type.js';

/**
 * Name of the tracers of `@svc/core` (use cases, run attempts). Each adapter names its own
 * after its package (`@svc/adapter-http`, …). Source: docs/decisions.md "Observability".
 */
export const CORE_TRACER_NAME = '@svc/core';

/**
 * The tracer named `name` from the global OpenTelemetry API: a no-op until a tracer
 * provider is registered (the API server registers the SDK's only when the standard
 * `OTEL_*` variables ask for it). Take it when the object that uses it is built, not at
 * module load: a tracer taken before a provider is registered stays bound to it.
 */
export function tracerOf(name: string): Tracer {
  return trace.getTracer(name);
}

/**
 * True when `span` has a context to carry to its children (a span of a registered tracer
 * provider, sampled or not), false for the API's no-op span. Same answer as
 * `isSpanContextValid(span.spanContext())`; the no-op span's context is the API's
 * `INVALID_SPAN_CONTEXT` object itself, recognised without the two hex regular expressions
 * `isSpanContextValid` runs (1.8 µs of a run start's 3 spans in the bench profile).
 */
export function carriesContext(span: Span): boolean {
  const spanContext = span.spanContext();
  return spanContext !== INVALID_SPAN_CONTEXT && isSpanContextValid(spanContext);
}

/**
 * Runs `work` inside a new active span `name` (a child of the active span, if any) and
 * ends the span when `work` settles. A rejection marks the span as an error with
 * `error.type` ({@link errorTypeOf}) and passes on unchanged; no exception event is
 * recorded, because its message could carry SQL text or a host. Without a registered
 * tracer provider the span is a non-recording no-op (measured: docs/decisions.md
 * "Observability").
 *
 * @param kind - the span kind; default `INTERNAL` (`CLIENT` for a call to Redis or a database).
 */
export function withSpan<T>(tracer: Tracer, name: string, attributes: Attributes | undefined, work: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  const span = tracer.startSpan(name, attributes !== undefined ? { kind, attributes } : { kind });
  // No SDK registered: the API's no-op span has no valid context and nothing to carry, so
  // the work runs as is (measured: ~0.6 µs less per span than startActiveSpan's no-op).
  if (!carriesContext(span)) return work(span);
  return withStartedSpan(span, () => work(span));
}

/** Runs `work` with `span` active, marks a rejection as its error, and ends it. */
function withStartedSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  return context.with(trace.setSpan(context.active(), span), async () => {
    try {
      return await work();
    } catch (error) {
      if (span.isRecording()) {
        const type = errorTypeOf(error);
        span.setAttribute('error.type', type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: type });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Anything with an asynchronous `execute`: a use case. */
export interface Executable {
  execute(input: never): Promise<unknown>;
}

/**
 * Makes `useCase.execute` run inside a span `spanName` (e.g. `StartRun.execute`), whose
 * attribute `svc.outcome` is `ok` or the domain error code of the `Result` it answers
 * (an expected outcome, not a span error). Returns the same object, its `execute`
 * replaced, so the use case keeps its class and type.
 */
export function traceExecute<U extends Executable>(useCase: U, spanName: string, tracer: Tracer): U {
  const execute = useCase.execute.bind(useCase) as (input: unknown) => Promise<unknown>;
  const traced = (input: unknown): Promise<unknown> => {
    const span = tracer.startSpan(spanName, { kind: SpanKind.INTERNAL });
    // The no-op span (no tracer provider): the use case's own promise, no wrapper around it.
    if (!carriesContext(span)) return execute(input);
    return withStartedSpan(span, async () => {
      const result = await execute(input);
      if (span.isRecording()) span.setAttribute('svc.outcome', outcomeOf(result));
      return result;
    });
  };
  Object.defineProperty(useCase, 'execute', { value: traced, configurable: true, writable: true });
  return useCase;
}

function outcomeOf(result: unknown): string {
  if (typeof result !== 'object' || result === null || !('ok' in result)) return 'ok';
  if (result.ok === true) return 'ok';
  const code = (result as { error?: { code?: unknown } }).error?.code;
  return typeof code === 'string' ? code : 'error';
}
