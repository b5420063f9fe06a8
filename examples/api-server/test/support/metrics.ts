/** One sample line of a scrape: `name{labels} value`. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** One scrape of `/metrics`: its sample lines, and whether a family was declared. */
export interface Scrape {
  readonly samples: readonly Sample[];
  has(family: string): boolean;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/u;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/gu;

/**
 * Reads the sample lines of the Prometheus text format 0.0.4 as prom-client writes them.
 * Hand-written, and only for tests: the one parser on the registry
 * (parse-prometheus-text-format 1.1.1) dropped the labels and the `_count` of every
 * histogram sample prom-client writes (tried on a four-line histogram: only the buckets
 * came back), and these tests compare histogram counts per label set.
 */
export function parseScrape(text: string): Scrape {
  const samples: Sample[] = [];
  const families = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) families.add(line.split(' ')[2] ?? '');
    const match = SAMPLE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name as string] = (value as string).replace(/\\(.)/gu, '$1');
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return { samples, has: (family) => families.has(family) };
}

/** GETs `{adminUrl}/metrics` and reads it ({@link parseScrape}). */
export async function scrape(adminUrl: string): Promise<Scrape> {
  const res = await fetch(`${adminUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return parseScrape(await res.text());
}

/**
 * The sum of the samples named `name` whose labels include `labels` (for a histogram,
 * name its `_count`); 0 when there is none.
 */
export function valueOf(metrics: Scrape, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const sample of metrics.samples) {
    if (sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) total += sample.value;
  }
  return total;
}

/** Every `operation|status_class` → count of `svc_http_requests_total`. */
export function requestCounts(metrics: Scrape): Map<string, number> {
  const counts = new Map<string, number>();
  for (const sample of metrics.samples) {
    if (sample.name === 'svc_http_requests_total') counts.set(`${sample.labels['operation']}|${sample.labels['status_class']}`, sample.value);
  }
  return counts;
}
