import { request, Agent } from 'node:http';
import autocannon from 'autocannon';

/** Microseconds of the monotonic clock. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** One HTTP request, repeated by the load generator. */
export interface LoadRequest {
  readonly url: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** How long and how hard to load. Seconds may be fractional. */
export interface LoadShape {
  readonly connections: number;
  /** Load before the measure, discarded (JIT, pools, caches). 0: none. */
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
}

/** What one measured load produced. Latencies in milliseconds (autocannon: whole ms). */
export interface LoadResult {
  /** 2xx answers per second of the measured period. */
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Answers whose status was not 2xx. */
  readonly non2xx: number;
  /** Connection errors and timeouts. */
  readonly errors: number;
  /** 2xx answers of the warm-up and the measure together (to share out a profile). */
  readonly served: number;
  /**
   * CPU time of the server process (every thread, user + system) over the warm-up and the
   * measure, in µs per 2xx answer; absent when not asked for or not readable.
   */
  readonly serverCpuUsPerRequest?: number;
  /**
   * When the warm-up started and the measure ended, in microseconds of the monotonic
   * clock (`process.hrtime`), the clock of V8's `.cpuprofile` timestamps on Linux.
   */
  readonly window: { readonly fromUs: number; readonly toUs: number };
}

/**
 * Loads `target` with autocannon: a warm-up run (discarded), then the measured run; both
 * end by themselves after their duration. Every connection sends its next request as
 * soon as the answer arrives (closed loop: the server's maximum; mean latency is then
 * connections / throughput). No fixed-rate mode: autocannon's rate option sends each
 * second's quota in a burst, which measures the burst, not the path.
 */
export async function measureLoad(target: LoadRequest, shape: LoadShape, serverCpuMs?: () => Promise<number | undefined>): Promise<LoadResult> {
  const options = {
    url: target.url,
    method: target.method,
    headers: { ...target.headers },
    ...(target.body !== undefined ? { body: target.body } : {}),
    connections: shape.connections,
    timeout: 10,
  } as const;
  const cpuBefore = await serverCpuMs?.();
  const fromUs = monotonicUs();
  const warmup = shape.warmupSeconds > 0 ? await autocannon({ ...options, duration: shape.warmupSeconds }) : undefined;
  const result = await autocannon({ ...options, duration: shape.durationSeconds });
  const toUs = monotonicUs();
  const cpuAfter = await serverCpuMs?.();
  const served = result['2xx'] + (warmup?.['2xx'] ?? 0);
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    served,
    window: { fromUs, toUs },
    ...(cpuBefore !== undefined && cpuAfter !== undefined && served > 0 ? { serverCpuUsPerRequest: ((cpuAfter - cpuBefore) * 1000) / served } : {}),
  };
}

/** Latencies of operations run one after another, in milliseconds (µs resolution). */
export interface LatencySample {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  /**
   * CPU time of the server process (every thread, user + system) over the measure (not
   * the warm-up), µs per call; only with `serverCpuMs`. At concurrency 1 a call's
   * latency is this plus the other processes' CPU (client, database) and the wake-ups
   * between them: what tells the server's own share of a latency apart.
   */
  readonly serverCpuUsPerCall?: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * Runs `operation` sequentially (concurrency 1) for the warm-up (discarded), then for
 * the measure, timing each call with `performance.now()`; with `serverCpuMs` (ms so
 * far), also the server's CPU per call over the measure. Stops by itself.
 */
export async function measureSequential(operation: () => Promise<void>, shape: Omit<LoadShape, 'connections'>, serverCpuMs?: () => Promise<number | undefined>): Promise<LatencySample> {
  const warmupEnd = performance.now() + shape.warmupSeconds * 1000;
  while (performance.now() < warmupEnd) await operation();
  const times: number[] = [];
  const cpuBefore = await serverCpuMs?.();
  const end = performance.now() + shape.durationSeconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    await operation();
    times.push(performance.now() - t0);
  }
  const cpuAfter = await serverCpuMs?.();
  const sorted = times.sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    meanMs: sorted.reduce((s, t) => s + t, 0) / Math.max(1, sorted.length),
    ...(cpuBefore !== undefined && cpuAfter !== undefined && sorted.length > 0 ? { serverCpuUsPerCall: ((cpuAfter - cpuBefore) * 1000) / sorted.length } : {}),
  };
}

/** An HTTP exchange's status, headers (names in lower case) and body. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/**
 * A client that sends `target` over one kept-alive connection, for sequential latency
 * measures; an answer that takes longer than `timeoutMs` (milliseconds, default 10 000)
 * fails the send. `close()` releases the socket.
 */
export function keptAliveClient(target: LoadRequest, timeoutMs = 10_000): { send(): Promise<HttpAnswer>; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(target.url);
  const body = target.body === undefined ? undefined : Buffer.from(target.body);
  const headers = { ...target.headers, ...(body !== undefined ? { 'content-length': String(body.length) } : {}) };
  return {
    send: () =>
      new Promise<HttpAnswer>((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: target.method, headers, agent, timeout: timeoutMs }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.once('error', reject);
        });
        req.once('timeout', () => req.destroy(new Error('request timed out')));
        req.once('error', reject);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}
