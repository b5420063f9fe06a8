import type { Metric, Registry } from 'prom-client';

/** One series of an {@link AccumulatedHistogram}: what its label values observed. */
export interface HistogramSeries {
  /**
   * Counts `seconds` in the series' bucket, sum and count. A value that is not a finite
   * number is not counted (prom-client's `observe` would throw: here the caller is the end
   * of a request, which must not fail on a metric).
   */
  observe(seconds: number): void;
}

/** What a series holds; `counts[i]` is the observations of bucket i alone (not cumulative). */
interface SeriesState extends HistogramSeries {
  /** The label values by label name, in the order of the histogram's label names. */
  readonly labels: Readonly<Record<string, string>>;
  readonly counts: number[];
  sum: number;
  count: number;
  /** Whether the series is in the exposition: from its first observation (again after a reset). */
  listed: boolean;
}

/** One value of prom-client's metric shape (`MetricValueWithName` with `sharedLabels`), as its Histogram gives them. */
interface ExportedValue {
  readonly labels: Record<string, string | number>;
  readonly sharedLabels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly metricName: string;
  readonly exemplar: null | undefined;
}

/** Options of {@link AccumulatedHistogram}: as prom-client's `Histogram` configuration. */
export interface AccumulatedHistogramOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Upper bounds of the buckets, ascending, in the metric's unit (seconds here); `+Inf` is added. */
  readonly buckets: readonly number[];
  readonly registers: readonly Registry[];
}

/**
 * A Prometheus histogram whose series are taken once per label set and then observe with
 * a bucket search and three additions; exposed through a prom-client registry exactly as a
 * prom-client `Histogram` with the same name, help, labels, buckets and observations is
 * (same lines in the same order: each series from its first observation, its buckets
 * cumulative, then `+Inf`, `_sum` and `_count`; test/accumulated-histogram.test.ts compares
 * the two texts and JSON). `reset()` drops every series from the exposition until it
 * observes again, as prom-client's does.
 *
 * Why not prom-client's `Histogram`: its `observe`, even on a `labels(...)` child, checks
 * the labels, builds the label hash string and looks the bucket up by the bound turned into
 * a property name on every call: 5 050 of a run start's 276 202 instructions (callgrind,
 * `svc_http_request_duration_seconds`, 2026-11-28; bench/BENCHMARKS.md) and 855 ns a call
 * in one process (10⁶ calls, Node 20), against 30 ns here. prom-client has no call that
 * takes counted buckets. The registry reads the shape prom-client's own histogram gives
 * (`getForPromString`, `get`, `reset`, `name`, `help`, `type`, `aggregator`).
 * Source: docs/decisions.md "Observability"; Prometheus exposition format 0.0.4.
 */
export class AccumulatedHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly labelNames: readonly L[];
  private readonly upperBounds: readonly number[];
  /**
   * The series by their label values, one map a label: the first label's value leads to a
   * map of the second's, and so on; the last label's map holds the series. No key string is
   * built (a `JSON.stringify` of the values cost ~0.5 µs a lookup, bench profile of the
   * insert, issue 11). With no labels, the one series is under `''`.
   */
  private readonly byValues = new Map<string, unknown>();
  /** The listed series in the order of their first observation (since the last reset). */
  private order: SeriesState[] = [];

  /** @throws Error when `buckets` is not ascending, or a label is `le` (reserved, as in prom-client). */
  constructor(options: AccumulatedHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.upperBounds = [...options.buckets];
    if (this.labelNames.some((l) => l === 'le')) throw new Error('le is a reserved label keyword');
    for (let i = 1; i < this.upperBounds.length; i++) {
      if (!((this.upperBounds[i] as number) > (this.upperBounds[i - 1] as number))) throw new Error('buckets must be ascending');
    }
    // The registry takes prom-client's metric classes by type; it reads only the members above.
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /**
   * The series of `values` (one per label name, in the order of the label names): made on
   * first call, the same object afterwards. Keep it: finding it again costs a key string.
   * @throws Error when the number of values is not the number of label names.
   */
  series(...values: string[]): HistogramSeries {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name}: ${this.labelNames.length} label values expected, got ${values.length}`);
    let level = this.byValues;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      const value = values[i] as string;
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map()));
      level = next;
    }
    const key = last < 0 ? '' : (values[last] as string);
    const found = level.get(key) as SeriesState | undefined;
    if (found !== undefined) return found;
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, i) => {
      labels[name] = values[i] as string;
    });
    const bounds = this.upperBounds;
    const state: SeriesState = {
      labels,
      counts: bounds.map(() => 0),
      sum: 0,
      count: 0,
      listed: false,
      observe: (seconds) => {
        if (!Number.isFinite(seconds)) return;
        if (!state.listed) {
          state.listed = true;
          this.order.push(state);
        }
        // The first bound at or above the value (prom-client's `findBound`); above all: `+Inf` only.
        for (let i = 0; i < bounds.length; i++) {
          if (seconds <= (bounds[i] as number)) {
            (state.counts[i] as number) += 1;
            break;
          }
        }
        state.sum += seconds;
        state.count += 1;
      },
    };
    level.set(key, state);
    return state;
  }

  /** The values as prom-client's `Histogram.getForPromString` gives them (series labels in `sharedLabels`), for the text exposition. */
  getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: ExportedValue[]; aggregator: 'sum' }> {
    const bucketName = `${this.name}_bucket`;
    const values: ExportedValue[] = [];
    for (const s of this.order) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += s.counts[i] as number;
        values.push({ labels: { le }, value: cumulative, metricName: bucketName, exemplar: null, sharedLabels: s.labels });
      });
      values.push(
        { labels: { le: '+Inf' }, value: s.count, metricName: bucketName, exemplar: null, sharedLabels: s.labels },
        { labels: {}, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined, sharedLabels: s.labels },
        { labels: {}, value: s.count, metricName: `${this.name}_count`, exemplar: undefined, sharedLabels: s.labels },
      );
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  /** The values as prom-client's `Histogram.get` gives them: the series labels merged into each value's labels. */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; values: Omit<ExportedValue, 'sharedLabels'>[]; aggregator: 'sum' }> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })),
    };
  }

  /**
   * Empties every series and drops it from the exposition until it observes again. Only
   * the listed series hold counts: a series is listed by its first counted observation.
   */
  reset(): void {
    for (const s of this.order) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
      s.listed = false;
    }
    this.order = [];
  }
}
