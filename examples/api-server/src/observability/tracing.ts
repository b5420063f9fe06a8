import { context, propagation, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';

/** `service.name` of the spans unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` say otherwise. */
export const DEFAULT_SERVICE_NAME = 'svc-api';

/**
 * Default bound of one OTLP export, in ms, when neither `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`
 * nor `OTEL_EXPORTER_OTLP_TIMEOUT` is set: 10 s, the OTLP specification's default. Exports
 * run in the background in batches; a slow or lost collector delays no request (the batch
 * queue drops spans when full) and no export waits longer than this.
 */
export const OTLP_EXPORT_TIMEOUT_MS = 10_000;

/**
 * Ms a stopping process gives the last spans to be exported, after its stop: 500 ms,
 * half of the stop guard's margin (`shutdown.ts`), so the exit stays within its bound; a
 * collector on the same network answers in milliseconds, and spans not exported by then
 * are dropped rather than holding the exit.
 */
export const TRACING_FLUSH_MS = 500;

/** The tracing SDK, once started. */
export interface Tracing {
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and unregisters the SDK (the API's no-op tracer again); never rejects. */
  shutdown(): Promise<void>;
}

/** What {@link startTracing} can be given instead of what the environment picks (tests). */
export interface TracingOverrides {
  /** Where spans go (e.g. the SDK's `InMemorySpanExporter`). */
  readonly exporter?: SpanExporter;
}

/** True when the standard variables ask for traces: an OTLP endpoint, or `OTEL_TRACES_EXPORTER` (but not `none`, nor `OTEL_SDK_DISABLED=true`). */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  const exporter = env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(exporter || env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
}

async function exporterFrom(env: NodeJS.ProcessEnv): Promise<SpanExporter> {
  const name = env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() || 'otlp';
  if (name === 'console') return new (await import('@opentelemetry/sdk-trace-node')).ConsoleSpanExporter();
  if (name !== 'otlp') throw new RangeError(`OTEL_TRACES_EXPORTER=${name} is not supported here (otlp, console or none)`);
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  const timeout = Number(env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'] ?? env['OTEL_EXPORTER_OTLP_TIMEOUT'] ?? OTLP_EXPORT_TIMEOUT_MS);
  // The endpoint, headers and compression come from the standard OTEL_EXPORTER_OTLP_* variables.
  return new OTLPTraceExporter({ timeoutMillis: Number.isFinite(timeout) && timeout > 0 ? timeout : OTLP_EXPORT_TIMEOUT_MS });
}

/**
 * Starts the OpenTelemetry tracing SDK (sdk-trace-node) when the standard `OTEL_*`
 * variables ask for it ({@link tracingRequested}): spans are batched and exported over
 * OTLP (http/protobuf; `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, …), or
 * printed with `OTEL_TRACES_EXPORTER=console`; sampling follows `OTEL_TRACES_SAMPLER`;
 * `service.name` is {@link DEFAULT_SERVICE_NAME} unless the environment names one. It
 * registers the global tracer provider, the AsyncLocalStorage context manager and the W3C
 * trace-context propagator, so the spans of `@opentelemetry/api` in the core and the
 * adapters become real, and an incoming `traceparent` is continued. Otherwise nothing is
 * started, and those spans stay no-ops. The SDK's modules are imported only then: loaded at
 * every start they added about 10 MB to the idle server's RSS (measured with `node -e`
 * importing this module: 60.7 MB against 50.8 MB for `@opentelemetry/api` alone).
 * Source: docs/decisions.md "Observability".
 * @returns the SDK to flush and shut down, or `undefined` when tracing is off.
 * @throws RangeError (rejects) for an `OTEL_TRACES_EXPORTER` other than otlp, console or none.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env, overrides: TracingOverrides = {}): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  const exporter = overrides.exporter ?? (await exporterFrom(env));
  const { detectResources, envDetector, resourceFromAttributes } = await import('@opentelemetry/resources');
  const { BatchSpanProcessor, NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
  // The environment's resource (OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME) wins over the
  // default name; envDetector reads process.env, `env` is read for the service name too.
  const serviceName = env['OTEL_SERVICE_NAME']?.trim();
  const resource = resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME })
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(serviceName ? resourceFromAttributes({ 'service.name': serviceName }) : null);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  let shutdown: Promise<void> | undefined;
  return {
    flush: () => provider.forceFlush(),
    shutdown() {
      shutdown ??= provider
        .shutdown()
        .catch(() => undefined)
        .finally(() => {
          trace.disable();
          context.disable();
          propagation.disable();
        });
      return shutdown;
    },
  };
}
