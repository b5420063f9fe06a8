import type { SqlServerPoolStats } from '@svc/adapter-sqlserver';
import type { FinishedRunStatus, Logger, RateLimitOutcome, RateLimitScope, RecordWriteOutcome, Telemetry, WebhookAttemptResult, WebhookDeliveryOutcome } from '@svc/core';
import { errorTypeOf, silentLogger } from '@svc/core';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AccumulatedHistogram, type HistogramSeries } from './accumulated-histogram.js';

/** Where the gauges read at each scrape come from (all optional). */
export interface MetricSources {
  /** Runs waiting to be taken (core `RunBackend.queueDepth`). */
  readonly queueDepth?: () => Promise<number>;
  /** The SQL Server pools (adapter-sqlserver `SqlServerRecordWriter.poolStats`). */
  readonly poolStats?: () => readonly SqlServerPoolStats[];
  /** The readiness checks of `/readyz`, each reported as `svc_dependency_up{dependency}` 1 or 0. */
  readonly readiness?: Readonly<Record<string, () => Promise<boolean>>>;
  /** Where a failing gauge read is logged (its error type only). */
  readonly logger?: Logger;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** `2xx` for 204; statuses outside 100..599 count as `5xx` (Koa never sends one). */
function statusClassIndex(status: number): number {
  const i = Math.floor(status / 100) - 1;
  return i >= 0 && i < STATUS_CLASSES.length ? i : 4;
}

/** One operation's request metrics, per status class index. */
interface RequestChildren {
  /** Requests answered, counted here and handed to `svc_http_requests_total` at each scrape. */
  readonly counts: number[];
  readonly histograms: (HistogramSeries | undefined)[];
}

/**
 * The core's {@link Telemetry} on prom-client, in a registry of its own (one per server,
 * so that two servers in one process never share a series). Metric names, labels and
 * buckets: docs/decisions.md "Observability". Per-request cost: one Map lookup, one
 * histogram observation and plain increments: the request, rate-limit and runs-started
 * counters count in numbers of their own, handed to prom-client by each counter's
 * `collect` at the scrape (the same series and values). A labelled prom-client counter's
 * `inc()` builds its label hash and checks its labels on every call: 0.19 µs against
 * 0.006 µs for a number, measured in one process, three per run start. The request and
 * row-write durations are {@link AccumulatedHistogram}s, for the same reason (prom-client's
 * histogram `observe`: 5 050 of a run start's 276 202 instructions, see there).
 * prom-client's `labels(...)` children of the other metrics are made once per label set
 * and kept (their label values are bounded: operationIds, status classes, scopes,
 * statuses, configured connection ids). Gauges (queue depth, pools, dependencies) are
 * read at each scrape from {@link MetricSources}.
 */
export class PrometheusTelemetry implements Telemetry {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  private readonly requests: Counter<'operation' | 'status_class'>;
  private readonly requestDuration: AccumulatedHistogram<'operation' | 'status_class'>;
  private readonly rateLimits: Counter<'scope' | 'outcome'>;
  private readonly runsStarted: Counter;
  private readonly runsFinished: Counter<'status'>;
  private readonly queueWait: Histogram;
  private readonly writeDuration: AccumulatedHistogram<'connection_id' | 'outcome'>;
  private readonly webhookAttempts: Histogram<'result'>;
  private readonly webhookDeliveries: Counter<'outcome'>;
  private readonly byOperation = new Map<string, RequestChildren>();
  /** Rate-limit decisions by scope and outcome, handed to `svc_rate_limit_decisions_total` at the scrape. */
  private readonly rateLimitCounts: Record<RateLimitScope, Record<RateLimitOutcome, number>> = {
    credential: { allowed: 0, refused: 0 },
    agent: { allowed: 0, refused: 0 },
  };
  /** Runs started, handed to `svc_runs_started_total` at the scrape. */
  private started = 0;
  private readonly finishedChildren = new Map<string, Counter.Internal>();
  private readonly notifications: Counter<'channel' | 'outcome'>;

  /** @param sources - what the scrape-time gauges read; see {@link MetricSources}. */
  constructor(sources: MetricSources = {}) {
    const registers = [this.registry];
    const logger = sources.logger ?? silentLogger;
    this.requests = new Counter({
      name: 'svc_http_requests_total',
      help: 'Requests answered, by operation (operationId; unmatched: no route) and status class.',
      labelNames: ['operation', 'status_class'],
      registers,
      collect: () => {
        this.requests.reset();
        for (const [operation, { counts }] of this.byOperation) {
          counts.forEach((count, i) => {
            if (count > 0) this.requests.inc({ operation, status_class: STATUS_CLASSES[i] as string }, count);
          });
        }
      },
    });
    this.requestDuration = new AccumulatedHistogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time from the first middleware to the end of the answer, in seconds, by operation and status class.',
      labelNames: ['operation', 'status_class'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.rateLimits = new Counter({
      name: 'svc_rate_limit_decisions_total',
      help: 'Rate-limit windows checked, by scope (credential, agent) and outcome (allowed, refused).',
      labelNames: ['scope', 'outcome'],
      registers,
      collect: () => {
        this.rateLimits.reset();
        for (const [scope, outcomes] of Object.entries(this.rateLimitCounts)) {
          for (const [outcome, count] of Object.entries(outcomes)) if (count > 0) this.rateLimits.inc({ scope, outcome }, count);
        }
      },
    });
    this.runsStarted = new Counter({
      name: 'svc_runs_started_total',
      help: 'Runs accepted (answered 202) and queued.',
      registers,
      collect: () => {
        this.runsStarted.reset();
        if (this.started > 0) this.runsStarted.inc(this.started);
      },
    });
    this.runsFinished = new Counter({ name: 'svc_runs_finished_total', help: 'Runs that reached a final status, by status.', labelNames: ['status'], registers });
    this.queueWait = new Histogram({
      name: 'svc_run_queue_wait_seconds',
      help: 'Time from a run being accepted to its first attempt, in seconds.',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    });
    this.writeDuration = new AccumulatedHistogram({
      name: 'svc_record_write_duration_seconds',
      help: 'Row writes, by connection id and outcome (ok or the error code), in seconds: pool wait, round trip and retry included.',
      labelNames: ['connection_id', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.notifications = new Counter({
      name: 'svc_notifications_total',
      help: 'Notifications of a finished run, by channel (email) and outcome (sent; failed: given up after its attempts).',
      labelNames: ['channel', 'outcome'],
      registers,
    });
    // Webhooks (docs/decisions.md "Webhooks"): few per run, so prom-client's labels() per call is fine.
    this.webhookAttempts = new Histogram({
      name: 'svc_webhook_attempt_duration_seconds',
      help: 'Webhook delivery attempts, by result (success, http_error, timeout, network_error, refused), in seconds; its _count is the attempts by result.',
      labelNames: ['result'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'svc_webhook_deliveries_total',
      help: 'Webhook deliveries ended, by outcome (delivered, failed, dropped).',
      labelNames: ['outcome'],
      registers,
    });
    new Gauge({
      name: 'svc_run_queue_depth',
      help: 'Runs waiting to be taken by a worker, read at the scrape.',
      registers,
      async collect() {
        if (sources.queueDepth === undefined) return;
        try {
          this.set(await sources.queueDepth());
        } catch (error) {
          // A lost queue answers nothing: the series is left out rather than show a stale value.
          this.reset();
          logger.warn({ component: 'metrics', gauge: 'svc_run_queue_depth', error_type: errorTypeOf(error) }, 'metric source failed');
        }
      },
    });
    new Gauge({
      name: 'svc_sqlserver_pool_connections',
      help: 'Connections of each SQL Server pool, by connection id, route and state (in_use, idle), read at the scrape.',
      labelNames: ['connection_id', 'route', 'state'],
      registers,
      collect() {
        this.reset();
        for (const pool of sources.poolStats?.() ?? []) {
          this.labels(pool.connectionId, pool.route, 'in_use').set(pool.inUse);
          this.labels(pool.connectionId, pool.route, 'idle').set(pool.idle);
        }
      },
    });
    new Gauge({
      name: 'svc_sqlserver_pool_waiting_writes',
      help: 'Writes waiting for a connection of each SQL Server pool, read at the scrape.',
      labelNames: ['connection_id', 'route'],
      registers,
      collect() {
        this.reset();
        for (const pool of sources.poolStats?.() ?? []) this.labels(pool.connectionId, pool.route).set(pool.pending);
      },
    });
    new Gauge({
      name: 'svc_dependency_up',
      help: "1 when a dependency answers its readiness check (/readyz's), else 0, read at the scrape.",
      labelNames: ['dependency'],
      registers,
      async collect() {
        const checks = Object.entries(sources.readiness ?? {});
        const up = await Promise.all(checks.map(([, check]) => check().catch(() => false)));
        checks.forEach(([name], i) => this.labels(name).set(up[i] === true ? 1 : 0));
      },
    });
    // process_* and nodejs_* (CPU, memory, event loop lag, GC), prom-client's defaults.
    collectDefaultMetrics({ register: this.registry });
  }

  requestFinished(operation: string, status: number, durationSeconds: number): void {
    let children = this.byOperation.get(operation);
    if (children === undefined) this.byOperation.set(operation, (children = { counts: [0, 0, 0, 0, 0], histograms: [] }));
    const i = statusClassIndex(status);
    (children.counts[i] as number) += 1;
    (children.histograms[i] ??= this.requestDuration.series(operation, STATUS_CLASSES[i] as string)).observe(durationSeconds);
  }

  rateLimitDecision(scope: RateLimitScope, outcome: RateLimitOutcome): void {
    this.rateLimitCounts[scope][outcome] += 1;
  }

  runStarted(): void {
    this.started += 1;
  }

  runFinished(status: FinishedRunStatus): void {
    let child = this.finishedChildren.get(status);
    if (child === undefined) this.finishedChildren.set(status, (child = this.runsFinished.labels(status)));
    child.inc();
  }

  runWaited(waitSeconds: number): void {
    this.queueWait.observe(waitSeconds);
  }

  recordWrite(connectionId: string, outcome: RecordWriteOutcome, durationSeconds: number): void {
    // The histogram keeps its series by label values: no map of our own in front of it.
    this.writeDuration.series(connectionId, outcome).observe(durationSeconds);
  }

  /**
   * One notification of a finished run ended (counted once per message, not per attempt):
   * `svc_notifications_total{channel, outcome}`. Not in the core `Telemetry`: notifiers
   * are wired by the composition root (docs/decisions.md "E-mail notifications").
   * @param channel - `email`.
   * @param outcome - `sent` (the SMTP server took it) or `failed` (given up).
   */
  notificationFinished(channel: 'email', outcome: 'sent' | 'failed'): void {
    this.notifications.labels(channel, outcome).inc();
  }

  webhookAttempt(result: WebhookAttemptResult, durationSeconds: number): void {
    this.webhookAttempts.labels(result).observe(durationSeconds);
  }

  webhookDelivery(outcome: WebhookDeliveryOutcome): void {
    this.webhookDeliveries.labels(outcome).inc();
  }

  /** The exposition of every metric (Prometheus text format 0.0.4), for `GET /metrics`. */
  async metrics(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
