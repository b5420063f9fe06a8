import { expect } from 'chai';
import { Histogram, Registry } from 'prom-client';
import { AccumulatedHistogram } from '../src/observability/accumulated-histogram.js';
import { PrometheusTelemetry } from '../src/observability/metrics.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAME = 'svc_test_duration_seconds';
const HELP = 'A test histogram, in seconds.';

/** A prom-client Histogram and an AccumulatedHistogram, each in a registry of its own, fed alike. */
function pair(): {
  readonly reference: Registry;
  readonly ours: Registry;
  observe(operation: string, statusClass: string, seconds: number): void;
  reset(): void;
} {
  const reference = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['operation', 'status_class'], buckets: BUCKETS, registers: [reference] });
  const accumulated = new AccumulatedHistogram({ name: NAME, help: HELP, labelNames: ['operation', 'status_class'], buckets: BUCKETS, registers: [ours] });
  return {
    reference,
    ours,
    observe(operation, statusClass, seconds) {
      histogram.labels(operation, statusClass).observe(seconds);
      accumulated.series(operation, statusClass).observe(seconds);
    },
    reset() {
      histogram.reset();
      accumulated.reset();
    },
  };
}

async function expectSameExposition(p: ReturnType<typeof pair>): Promise<void> {
  expect(await p.ours.metrics()).to.equal(await p.reference.metrics());
  expect(await p.ours.getMetricsAsJSON()).to.deep.equal(await p.reference.getMetricsAsJSON());
}

describe('AccumulatedHistogram', function () {
  it("is exposed as prom-client's Histogram fed the same observations: text and JSON, series in first-observation order", async function () {
    const p = pair();
    await expectSameExposition(p);
    // On a bound, between bounds, below the first, above the last, zero, tiny and large values, several series.
    const values = [0.001, 0.0010001, 0.0007, 0, 1e-9, 0.3, 2.5, 10, 10.5, 123.456, 0.049999, 0.05];
    values.forEach((v, i) => p.observe(i % 3 === 0 ? 'startRun' : 'describeApi', i % 2 === 0 ? '2xx' : '4xx', v));
    // Label values the exposition must escape.
    p.observe('quote"back\\slash\nline', '5xx', 0.02);
    await expectSameExposition(p);
    const text = await p.ours.metrics();
    // startRun 2xx observed 0.001 and 2.5: cumulative buckets.
    expect(text).to.contain(`${NAME}_bucket{le="0.001",operation="startRun",status_class="2xx"} 1`);
    expect(text).to.contain(`${NAME}_bucket{le="1",operation="startRun",status_class="2xx"} 1`);
    expect(text).to.contain(`${NAME}_bucket{le="2.5",operation="startRun",status_class="2xx"} 2`);
    expect(text).to.contain(`${NAME}_count{operation="startRun",status_class="2xx"} 2`);
  });

  it('after reset lists nothing until a series observes again, then that series last, like prom-client', async function () {
    const p = pair();
    p.observe('a', '2xx', 0.01);
    p.observe('b', '2xx', 0.02);
    p.reset();
    await expectSameExposition(p);
    expect(await p.ours.metrics()).not.to.contain('_count');
    p.observe('b', '2xx', 0.5);
    p.observe('a', '2xx', 7);
    await expectSameExposition(p);
    const text = await p.ours.metrics();
    expect(text.indexOf('operation="b"')).to.be.below(text.indexOf('operation="a"'));
  });

  it('gives one series per label set, counts nothing that is not a finite number, and refuses a wrong number of label values', function () {
    const registry = new Registry();
    const h = new AccumulatedHistogram({ name: NAME, help: HELP, labelNames: ['operation'], buckets: [1], registers: [registry] });
    expect(h.series('x')).to.equal(h.series('x'));
    expect(h.series('x')).not.to.equal(h.series('y'));
    h.series('x').observe(Number.NaN);
    h.series('x').observe(Number.POSITIVE_INFINITY);
    return registry.metrics().then((text) => {
      expect(text).not.to.contain('_count');
      expect(() => h.series('x', 'y')).to.throw(/1 label values expected, got 2/u);
    });
  });

  it('tells label sets apart by every value, not by their concatenation, and keeps the one series of no labels', async function () {
    const registry = new Registry();
    const h = new AccumulatedHistogram({ name: NAME, help: HELP, labelNames: ['a', 'b'], buckets: [1], registers: [registry] });
    const sets: [string, string][] = [['x', 'y'], ['x', 'z'], ['y', 'y'], ['xy', ''], ['', 'xy'], ['x', 'y\u0000']];
    const series = sets.map(([a, b]) => h.series(a, b));
    expect(new Set(series).size).to.equal(sets.length);
    sets.forEach(([a, b], i) => expect(h.series(a, b)).to.equal(series[i]));
    const none = new AccumulatedHistogram({ name: `${NAME}_none`, help: HELP, labelNames: [], buckets: [1], registers: [registry] });
    expect(none.series()).to.equal(none.series());
    none.series().observe(0.5);
    expect(await registry.metrics()).to.contain(`${NAME}_none_count 1`);
  });

  it('refuses buckets out of order and the reserved label le', function () {
    expect(() => new AccumulatedHistogram({ name: NAME, help: HELP, labelNames: [], buckets: [1, 0.5], registers: [] })).to.throw(/ascending/u);
    expect(() => new AccumulatedHistogram({ name: NAME, help: HELP, labelNames: ['le'], buckets: [1], registers: [] })).to.throw(/reserved/u);
  });
});

describe('PrometheusTelemetry durations', function () {
  it('counts row writes in svc_record_write_duration_seconds by connection id and outcome, and requests in svc_http_request_duration_seconds', async function () {
    const telemetry = new PrometheusTelemetry();
    telemetry.recordWrite('conn_a', 'ok', 0.004);
    telemetry.recordWrite('conn_a', 'ok', 0.2);
    telemetry.recordWrite('conn_a', 'connection_timeout', 31);
    telemetry.requestFinished('startRun', 202, 0.0009);
    const text = (await telemetry.metrics()).body;
    expect(text).to.contain('svc_record_write_duration_seconds_bucket{le="0.005",connection_id="conn_a",outcome="ok"} 1');
    expect(text).to.contain('svc_record_write_duration_seconds_count{connection_id="conn_a",outcome="ok"} 2');
    expect(text).to.contain('svc_record_write_duration_seconds_bucket{le="30",connection_id="conn_a",outcome="connection_timeout"} 0');
    expect(text).to.contain('svc_record_write_duration_seconds_bucket{le="+Inf",connection_id="conn_a",outcome="connection_timeout"} 1');
    expect(text).to.contain('svc_http_request_duration_seconds_bucket{le="0.001",operation="startRun",status_class="2xx"} 1');
  });
});
