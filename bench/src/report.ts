import { BASELINE, PEERS, SCENARIOS, type BenchReport, type PeerScenario, type ProfiledServer, type ProfileReport, type ScenarioName } from './bench.js';

/** One target (issue 11's), checked against a report. */
export interface TargetCheck {
  readonly target: string;
  /** The figures measured, as text. */
  readonly measured: string;
  /** `undefined`: not measured in this run (skipped or not asked for). */
  readonly met: boolean | undefined;
}

const MB = 1024 * 1024;
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const ratio = (n: number | undefined) => (n === undefined ? '–' : `${n.toFixed(2)}×`);

function row(report: BenchReport, scenario: ScenarioName) {
  return report.rows.find((r) => r.scenario === scenario);
}

/**
 * The profiles as Markdown: self time per request of each profiled server, per package
 * or area, then the largest functions of each API server.
 */
export function formatProfiles(profile: ProfileReport, top = 10): string {
  const named: [string, ProfiledServer | undefined][] = [
    ['bare Koa', profile.koa],
    ['index', profile.index],
    ['run start', profile.runStart],
    ['run start, Koa peer', profile.peerRunStart],
    ['run start, Redis', profile.runRedis],
    ['insert', profile.insert],
  ];
  const servers = named.filter((s): s is [string, ProfiledServer] => s[1] !== undefined);
  const us = (ms: number, served: number) => (served > 0 ? (ms * 1000) / served : NaN);
  const out = [
    'CPU profiles (`--cpu-prof` on the server child, same load as the table, only the load\'s window), self time in µs per request:',
    '',
    `| server | req/s while profiled | busy µs/request | profile |`,
    '|---|---:|---:|---|',
    ...servers.map(([name, p]) => `| ${name} | ${fmt(p.requestsPerSecond)} | ${fmt(us(p.summary.busyMs, p.served), 1)} | ${p.file} |`),
    '',
    `| package or area | ${servers.map(([name]) => name).join(' | ')} |`,
    `|---|${servers.map(() => '---:').join('|')}|`,
  ];
  const keys = new Set(servers.flatMap(([, p]) => p.summary.packages.slice(0, top).map((x) => x.key)));
  const perPackage = servers.map(([, p]) => new Map(p.summary.packages.map((x) => [x.key, us(x.selfMs, p.served)])));
  // Rows in the order of the largest cost on any server.
  const largest = (key: string) => Math.max(...perPackage.map((m) => m.get(key) ?? 0));
  const ordered = [...keys].sort((a, b) => largest(b) - largest(a));
  for (const key of ordered) out.push(`| ${key} | ${perPackage.map((m) => fmt(m.get(key) ?? 0, 1)).join(' | ')} |`);
  for (const [name, p] of servers.slice(1)) {
    out.push('', `| function (${name}) | µs/request | share of busy |`, '|---|---:|---:|');
    for (const f of p.summary.functions.slice(0, top)) out.push(`| \`${f.key}\` | ${fmt(us(f.selfMs, p.served), 1)} | ${(f.share * 100).toFixed(1)} % |`);
  }
  return out.join('\n');
}

/** The project measured against one same-work peer in the same run. */
export interface PeerComparison {
  readonly peer: PeerScenario;
  /** e.g. `run start in memory ÷ Koa peer, req/s`. */
  readonly what: string;
  /** The project's figure over the peer's: throughput (> 1: the project is faster), or p50 latency (> 1: the project is slower). */
  readonly ratio: number | undefined;
  /** The figures, as text; or why there is no ratio. */
  readonly measured: string;
}

const PROJECT_NAMES: Partial<Record<ScenarioName, string>> = {
  'run-memory': 'run start in memory',
  'run-redis': 'run start on Redis',
  'insert-sqlserver': 'insert',
};

/**
 * The project's figure over each peer's, from the same run: throughput of the run start
 * in memory against the Koa and the Fastify peer, on Redis against the Redis peer, of the
 * insert against the insert peer; and the insert's p50 latency at concurrency 1 against
 * the insert peer's.
 */
export function peerComparisons(report: BenchReport): PeerComparison[] {
  const out: PeerComparison[] = [];
  for (const [peer, { project, name }] of Object.entries(PEERS) as [PeerScenario, (typeof PEERS)[PeerScenario]][]) {
    const ours = row(report, project);
    const theirs = row(report, peer);
    if (ours === undefined && theirs === undefined) continue;
    const a = ours?.result?.requestsPerSecond;
    const b = theirs?.result?.requestsPerSecond;
    out.push({
      peer,
      what: `${PROJECT_NAMES[project] ?? project} ÷ ${name}, req/s`,
      ratio: a !== undefined && b !== undefined && b > 0 ? a / b : undefined,
      measured: a !== undefined && b !== undefined ? `${fmt(a)} / ${fmt(b)} req/s` : `not measured: ${theirs?.skip ?? ours?.skip ?? 'not run'}`,
    });
    if (peer === 'peer-koa-insert') {
      const p = report.insertLatency?.api.p50Ms;
      const q = report.peerInsertLatency?.p50Ms;
      out.push({
        peer,
        what: `insert p50 latency at concurrency 1 ÷ ${name}'s`,
        ratio: p !== undefined && q !== undefined && q > 0 ? p / q : undefined,
        measured: p !== undefined && q !== undefined ? `${fmt(p, 3)} / ${fmt(q, 3)} ms` : `not measured: ${theirs?.skip ?? ours?.skip ?? 'not run'}`,
      });
    }
  }
  return out;
}

/** The peers as Markdown: throughput and CPU per request side by side, the checks, each ratio. */
export function formatPeers(report: BenchReport): string {
  const comparisons = peerComparisons(report);
  if (comparisons.length === 0) return '';
  const cpu = (scenario: ScenarioName) => fmt(row(report, scenario)?.result?.serverCpuUsPerRequest ?? NaN);
  const out = [
    'Same-work peers: hand-written servers doing the same wire work without the architecture, measured in this run (table above); project ÷ peer:',
    '',
    '| project scenario | peer | project req/s | peer req/s | project ÷ peer | project CPU µs/req | peer CPU µs/req |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const [peer, { project, name }] of Object.entries(PEERS) as [PeerScenario, (typeof PEERS)[PeerScenario]][]) {
    const ours = row(report, project);
    const theirs = row(report, peer);
    if (ours === undefined && theirs === undefined) continue;
    const ratioOf = comparisons.find((c) => c.peer === peer)?.ratio;
    out.push(
      theirs?.result === undefined
        ? `| ${PROJECT_NAMES[project] ?? project} | ${name} | ${fmt(ours?.result?.requestsPerSecond ?? NaN)} | skipped: ${theirs?.skip ?? 'not run'} | | ${cpu(project)} | |`
        : `| ${PROJECT_NAMES[project] ?? project} | ${name} | ${fmt(ours?.result?.requestsPerSecond ?? NaN)} | ${fmt(theirs.result.requestsPerSecond)} | ${ratio(ratioOf)} | ${cpu(project)} | ${cpu(peer)} |`,
    );
  }
  if (report.peerInsertLatency !== undefined && report.insertLatency !== undefined) {
    const { api } = report.insertLatency;
    const peer = report.peerInsertLatency;
    out.push(
      '',
      '| insert, one request at a time | requests | p50 ms | p99 ms | mean ms |',
      '|---|---:|---:|---:|---:|',
      `| project (API) | ${api.count} | ${fmt(api.p50Ms, 3)} | ${fmt(api.p99Ms, 3)} | ${fmt(api.meanMs, 3)} |`,
      `| ${PEERS['peer-koa-insert'].name} | ${peer.count} | ${fmt(peer.p50Ms, 3)} | ${fmt(peer.p99Ms, 3)} | ${fmt(peer.meanMs, 3)} |`,
    );
  }
  if (report.peerChecks !== undefined) {
    out.push('', `Checked before measuring, each against the project's answer to the same request: ${report.peerChecks.map((c) => `${PEERS[c.scenario].name} alike (${c.alike})`).join('; ')}.`);
  }
  out.push('', 'Ratios to the same-work peers (project ÷ peer; throughput: below 1 the project is slower; latency: above 1 the project is slower):', '');
  for (const c of comparisons) out.push(`- ${c.what}: ${c.ratio === undefined ? '–' : ratio(c.ratio)} (${c.measured})`);
  return out.join('\n');
}

/**
 * The targets of issue 11, each a ratio or a bound measured in the same run: index ≥ 0.9×
 * bare Koa; run start in memory ≥ 0.9× the Koa peer (our architecture costs at most
 * 10 %); run start on Redis ≥ 0.9× the Redis peer, with one round trip for the limits and
 * at most one for record + enqueue; insert p50 (concurrency 1) ≤ 1.1× the Koa insert
 * peer's; RSS idle ≤ 100 MB; spawn to listening ≤ 1.5 s (the in-memory, log-silent server).
 */
export function checkTargets(report: BenchReport): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const index = row(report, 'index');
  const sameBody = row(report, 'koa-index-body')?.result?.requestsPerSecond;
  const samePeer = row(report, 'koa-index-peer')?.result?.requestsPerSecond;
  const indexRps = index?.result?.requestsPerSecond;
  checks.push({
    target: 'index ≥ 0.9× bare Koa',
    measured:
      index?.ratio !== undefined && indexRps !== undefined
        ? `${ratio(index.ratio)} (${fmt(indexRps)} req/s)` +
          (sameBody !== undefined ? `; ${ratio(indexRps / sameBody)} of bare Koa answering the index's ${report.indexBodyBytes ?? '?'} bytes` : '') +
          (samePeer !== undefined ? `; ${ratio(indexRps / samePeer)} of the same-work peer (same bytes and headers)` : '')
        : (index?.skip ?? 'not run'),
    met: index?.ratio === undefined ? undefined : index.ratio >= 0.9,
  });
  const comparisons = peerComparisons(report);
  const peerRatio = (peer: PeerScenario, latency = false): PeerComparison | undefined =>
    comparisons.find((c) => c.peer === peer && c.what.includes('latency') === latency);
  const cpuOf = (scenario: ScenarioName): number | undefined => row(report, scenario)?.result?.serverCpuUsPerRequest;
  const cpuNote = (ours: ScenarioName, peer: PeerScenario): string => {
    const a = cpuOf(ours);
    const b = cpuOf(peer);
    return a !== undefined && b !== undefined ? `; CPU ${fmt(a)} / ${fmt(b)} µs per request` : '';
  };
  const mem = peerRatio('peer-koa-run-memory');
  checks.push({
    target: 'run start in memory ≥ 0.9× the Koa peer (req/s)',
    measured: mem === undefined ? 'not run' : `${mem.ratio === undefined ? '–' : ratio(mem.ratio)} (${mem.measured}${cpuNote('run-memory', 'peer-koa-run-memory')})`,
    met: mem?.ratio === undefined ? undefined : mem.ratio >= 0.9,
  });
  const redis = peerRatio('peer-koa-run-redis');
  const trips = report.redisRoundTrips;
  checks.push({
    target: 'run start on Redis ≥ 0.9× the Redis peer (req/s), 1 round trip for the limits, ≤ 1 for record + enqueue',
    measured:
      redis === undefined
        ? 'not run'
        : `${redis.ratio === undefined ? '–' : ratio(redis.ratio)} (${redis.measured}${cpuNote('run-redis', 'peer-koa-run-redis')}), ${trips === undefined ? '? round trips' : `${fmt(trips.limitsPerRequest, 2)} round trips for the limits + ${fmt(trips.othersPerRequest, 2)} other`}`,
    met:
      redis?.ratio === undefined || trips === undefined ? undefined : redis.ratio >= 0.9 && trips.limitsPerRequest <= 1 && trips.othersPerRequest <= 1,
  });
  const insert = peerRatio('peer-koa-insert', true);
  checks.push({
    target: "insert p50 at concurrency 1 ≤ 1.1× the Koa insert peer's",
    measured: insert === undefined ? 'not run' : `${insert.ratio === undefined ? '–' : ratio(insert.ratio)} (${insert.measured})`,
    met: insert?.ratio === undefined ? undefined : insert.ratio <= 1.1,
  });
  const server = report.servers.find((s) => s.scenario === 'run-memory') ?? report.servers[0];
  const origin = report.serverOrigin === 'source' ? ' (from source through tsx: inflated)' : '';
  checks.push({
    target: 'API server RSS idle ≤ 100 MB',
    measured: server !== undefined ? `${fmt(server.rssIdleBytes / MB, 1)} MB${origin}` : 'not run',
    met: server === undefined ? undefined : server.rssIdleBytes <= 100 * MB,
  });
  checks.push({
    target: 'API server spawn to listening ≤ 1.5 s',
    measured: server !== undefined ? `${fmt(server.startMs)} ms${origin}` : 'not run',
    met: server === undefined ? undefined : server.startMs <= 1500,
  });
  return checks;
}

/** The report as Markdown: tables of throughput, server processes, latencies, targets. */
export function formatReport(report: BenchReport): string {
  const { shape } = report;
  const out: string[] = [];
  out.push(
    `${shape.connections} connections, ${shape.warmupSeconds} s warm-up, ${shape.durationSeconds} s measured per scenario; ` +
      `servers from ${report.serverOrigin}; ${report.machine}; load average ${fmt(report.loadAverage.before, 2)} before, ${fmt(report.loadAverage.after, 2)} after.`,
    '',
    `| scenario | req/s | p50 ms | p99 ms | × ${SCENARIOS[BASELINE].replace(' (baseline)', '')} | non-2xx / errors | server CPU µs/req |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of report.rows) {
    if (r.result === undefined) {
      out.push(`| ${r.label} | skipped: ${r.skip ?? ''} | | | | | |`);
      continue;
    }
    const x = r.result;
    out.push(`| ${r.label} | ${fmt(x.requestsPerSecond)} | ${fmt(x.p50Ms)} | ${fmt(x.p99Ms)} | ${ratio(r.ratio)} | ${x.non2xx} / ${x.errors} | ${fmt(x.serverCpuUsPerRequest ?? NaN)} |`);
  }
  if (report.servers.length > 0) {
    out.push('', '| API server of scenario | spawn → listening ms | RSS idle MB | RSS after load MB |', '|---|---:|---:|---:|');
    for (const s of report.servers) out.push(`| ${s.scenario} | ${fmt(s.startMs)} | ${fmt(s.rssIdleBytes / MB, 1)} | ${fmt(s.rssAfterBytes / MB, 1)} |`);
  }
  if (report.insertLatency !== undefined) {
    const { api, apiRunStart, rawTedious } = report.insertLatency;
    out.push(
      '',
      'Insert latency, one request at a time (concurrency 1), same row, same scripted TDS server:',
      '',
      '| path | requests | p50 ms | p99 ms | mean ms | p50 × raw tedious |',
      '|---|---:|---:|---:|---:|---:|',
      `| API (HTTP, kept-alive socket) | ${api.count} | ${fmt(api.p50Ms, 3)} | ${fmt(api.p99Ms, 3)} | ${fmt(api.meanMs, 3)} | ${ratio(api.p50Ms / rawTedious.p50Ms)} |`,
      `| API run start, same server (HTTP path, no database) | ${apiRunStart.count} | ${fmt(apiRunStart.p50Ms, 3)} | ${fmt(apiRunStart.p99Ms, 3)} | ${fmt(apiRunStart.meanMs, 3)} | ${ratio(apiRunStart.p50Ms / rawTedious.p50Ms)} |`,
      `| raw tedious, one open connection | ${rawTedious.count} | ${fmt(rawTedious.p50Ms, 3)} | ${fmt(rawTedious.p99Ms, 3)} | ${fmt(rawTedious.meanMs, 3)} | 1.00× |`,
    );
  }
  if (report.redisRoundTrips !== undefined) {
    const t = report.redisRoundTrips;
    out.push(
      '',
      `Redis round trips per run start (MONITOR, ${t.requests} sequential requests): ${fmt(t.limitsPerRequest, 2)} for the limits, ` +
        `${fmt(t.othersPerRequest, 2)} other (commands: ${t.commands.join(', ') || 'none'}).`,
    );
  }
  const peers = formatPeers(report);
  if (peers !== '') out.push('', peers);
  out.push('', '| target | measured | met? |', '|---|---|---|');
  for (const c of checkTargets(report)) out.push(`| ${c.target} | ${c.measured} | ${c.met === undefined ? 'not measured' : c.met ? 'met' : '**missed**'} |`);
  if (report.profile !== undefined) out.push('', formatProfiles(report.profile));
  return out.join('\n');
}
