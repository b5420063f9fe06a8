import { expect } from 'chai';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { rawExchange, type RawAnswer, type RawExchange } from '../../../tools/test-support/raw-http.js';
import { addresses, AGENTS, e2eConfig, PG_A, SECRETS, SQL_A, type Addresses } from './support/fixture.js';
import { startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

// Issue 10 parts 4 and 6: the API server process, sent ≥ 10,000 generated hostile requests
// over raw sockets (what an HTTP client library refuses to send), answers every complete
// request with a documented 4xx/2xx — never a 5xx, never a reset — and stays healthy.

/** Requests to send, at least; each exchange carries 1–4. */
const REQUESTS = 10_000;
/** Connections in flight at once. */
const CONCURRENCY = 24;
/** Longest wait for one exchange's answers, in milliseconds. */
const EXCHANGE_TIMEOUT_MS = 10_000;
/** Seed of the generator: `HOSTILE_SEED=<n>` replays a run. */
const SEED = Number(process.env['HOSTILE_SEED'] ?? Date.now() % 2 ** 31);

/**
 * mulberry32: a seeded 32-bit PRNG, so a failing run can be replayed from its printed
 * seed; `Math.random` cannot be seeded, and the test needs nothing stronger.
 */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One generated request: its bytes, and whether it is a complete HTTP message. */
interface Generated {
  readonly method: string;
  readonly bytes: Buffer;
  /** False when the generator cut it short (the client closes mid-request). */
  readonly complete: boolean;
  readonly label: string;
}

let zipBomb: Buffer | undefined;

class Generator {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }

  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i += 1) out[i] = this.int(256);
    return out;
  }

  method(): string {
    return this.pick(['GET', 'GET', 'POST', 'POST', 'POST', 'PATCH', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'get', 'FOO', 'G@T', 'POST ', '', 'PROPFIND', 'M-SEARCH', 'PURGE', 'CONNECT']);
  }

  path(): string {
    const known = [
      '/api/v1',
      '/livez',
      '/readyz',
      '/openapi.yaml',
      '/llms.txt',
      `/api/v1/connections/${SQL_A}/records`,
      `/api/v1/connections/${PG_A}/records`,
      `/api/v1/connections/${SQL_A.toUpperCase()}/records`,
      `/v1/connections/${SQL_A}/records`,
      `/api/v1/agents/${AGENTS.main}/run`,
      `/api/v1/agents/${AGENTS.spare}/run`,
      '/api/v1/runs/run_0000000000',
    ];
    const junk = [
      '/nope',
      '/api/v1/../api/v1',
      '/api/v1/./agents/x/run',
      '/api/v1/connections/%2e%2e/records',
      '/api/v1/connections/%00/records',
      '/api/v1/connections/%ff%fe/records',
      '/api/v1/agents/%zz/run',
      '/api/v1/agents/%E2%9C%93/run',
      '/api/v1/runs/%252e',
      '//api//v1//',
      '*',
      'http://evil.example/api/v1',
      '/api/v1?x=1&x=2&%zz',
      '/api/v1#frag',
      `/api/v1/agents/${'a'.repeat(2000)}/run`,
      `/${'x/'.repeat(500)}`,
      `/api/v1/runs/${'%41'.repeat(300)}`,
      '/api/v1/connections/not-a-uuid/records',
      '/API/V1',
    ];
    const p = this.chance(0.55) ? this.pick(known) : this.pick(junk);
    return this.chance(0.1) ? `${p}?q=${encodeURIComponent(this.bytes(8).toString('latin1'))}` : p;
  }

  credential(): string[] {
    const valid = [SECRETS.keyA, SECRETS.keyA2, SECRETS.tokenWrite];
    switch (this.int(10)) {
      case 0:
        return [];
      case 1:
        return [`Authorization: Bearer ${this.pick(valid)}`, `Authorization: Bearer ${this.pick(valid)}`];
      case 2:
        return [`X-API-Key: ${this.pick(valid)}`, `X-API-Key: ${this.pick(valid)}`];
      case 3:
        return [`X-API-Key: ${SECRETS.keyA}`, `Authorization: Bearer ${this.pick(valid)}`];
      case 4:
        return [`Authorization: ${this.pick(['Basic dTpw', 'Bearer', 'bearer  ', 'Digest x', `Bearer ${'z'.repeat(600)}`, 'svc-raw'])}`];
      case 5:
        return [`X-API-Key: ${this.pick(['', ' ', 'svc-unknown', SECRETS.tokenWrite, SECRETS.tokenExpired, `svc-${'k'.repeat(700)}`])}`];
      case 6:
        return [`Authorization: Bearer ${this.pick([SECRETS.tokenWrite, SECRETS.tokenNoScope, SECRETS.tokenExpired])}`];
      default:
        return [`X-API-Key: ${SECRETS.keyA}`];
    }
  }

  extraHeaders(): string[] {
    const out: string[] = [];
    if (this.chance(0.15)) out.push(`X-Svc-Egress: ${this.pick(['true', 'false', 'TRUE', 'yes', '', '1', 'true, false', 'tr\tue'])}`);
    if (this.chance(0.15)) out.push(`X-Request-Id: ${this.pick(['abc', '', ' ', 'a b', 'x'.repeat(200), 'ünïcode', '../../etc', 'id;drop', 'ok-id_1.2~:@/+='])}`);
    if (this.chance(0.05)) out.push(`X-Big: ${'b'.repeat(this.pick([8_000, 17_000, 40_000]))}`);
    if (this.chance(0.05)) out.push(this.pick(['X-Bad\u0001Name: v', 'X-Bad: v\u0000v', 'X Space: v', ': empty-name', 'NoColon', 'X-Obs:\r\n folded', 'X-Ctl: \u007f']));
    if (this.chance(0.03)) out.push(...Array.from({ length: 200 }, (_, i) => `X-Many-${i}: ${i}`));
    if (this.chance(0.08)) out.push(`Expect: ${this.pick(['100-continue', '100-Continue', '200-ok', '', 'foo=bar', '100-continue, 100-continue'])}`);
    if (this.chance(0.05)) out.push(`Accept-Encoding: ${this.pick(['gzip', 'br;q=0', '*', 'x'.repeat(100)])}`);
    return out;
  }

  contentType(): string[] {
    return this.pick([
      ['Content-Type: application/json'],
      ['Content-Type: application/json'],
      ['Content-Type: application/json; charset=utf-8'],
      ['Content-Type: application/merge-patch+json'],
      ['Content-Type: application/json; charset=latin1'],
      ['Content-Type: text/plain'],
      ['Content-Type: multipart/form-data; boundary=x'],
      ['Content-Type: application/x-www-form-urlencoded'],
      ['Content-Type: '],
      ['Content-Type: ;;;'],
      [],
    ]);
  }

  body(method: string, path: string): Buffer {
    const good = path.includes('/run')
      ? { message: 'x', files: [{ file_key: 'uploads/a.pdf', file_name: 'a.pdf', content_type: 'application/pdf' }] }
      : method === 'PATCH'
        ? { entity: 'dbo.orders', key_column: 'id', key_value: this.int(3), values: { status: 'paid' } }
        : { entity: 'dbo.orders', values: { id: 10_000 + this.int(1_000_000), sku: 'FUZZ', qty: this.int(9) } };
    switch (this.int(14)) {
      case 0:
        return this.bytes(this.int(300));
      case 1: {
        const text = JSON.stringify(good);
        return Buffer.from(text.slice(0, this.int(text.length)));
      }
      case 2:
        return Buffer.from(`${'['.repeat(5000)}${']'.repeat(5000)}`);
      case 3:
        return Buffer.from(`{"entity":"dbo.orders","values":{"qty":${this.pick(['9007199254740993', '1e999', '-1e999', '12345678901234567890.123456789', '1'.repeat(400), '0.' + '0'.repeat(400) + '1', 'NaN', '-0'])}}}`);
      case 4:
        return Buffer.from('{"entity":"dbo.orders","entity":"dbo.x","values":{"a":1,"a":2}}');
      case 5:
        return Buffer.from(JSON.stringify({ entity: 'dbo.orders', values: { __proto__: 1, constructor: 2, toString: 3 } }).replace('{}', '{"__proto__":{"x":1}}'));
      case 6:
        return Buffer.from('');
      case 7:
        return Buffer.from('null');
      case 8:
        return Buffer.from(JSON.stringify({ entity: 'dbo.orders', values: Object.fromEntries(Array.from({ length: 2200 }, (_, i) => [`c${i}`, i])) }));
      case 9:
        return Buffer.from(JSON.stringify({ ...good, extra: 'x'.repeat(this.int(5000)) }));
      case 10:
        return Buffer.from('\uFEFF' + JSON.stringify(good));
      default:
        return Buffer.from(JSON.stringify(good));
    }
  }

  /** Content-Encoding cases: gzip / deflate / br, unknown or stacked codings, a zip bomb, corrupt data. */
  encoded(body: Buffer): { headers: string[]; body: Buffer } {
    switch (this.int(6)) {
      case 0:
        return { headers: ['Content-Encoding: gzip'], body: gzipSync(body) };
      case 1:
        return { headers: ['Content-Encoding: deflate'], body: deflateSync(body) };
      case 2:
        return { headers: ['Content-Encoding: br'], body: brotliCompressSync(body) };
      case 3:
        return { headers: [`Content-Encoding: ${this.pick(['compress', 'zstd', 'identity', 'gzip, gzip', 'x-junk'])}`], body };
      case 4:
        // A zip bomb: 64 MiB of zeros in about 64 KiB, compressed once.
        zipBomb ??= gzipSync(Buffer.alloc(64 * 1024 * 1024));
        return { headers: ['Content-Encoding: gzip'], body: zipBomb };
      default:
        return { headers: ['Content-Encoding: gzip'], body: this.bytes(50) };
    }
  }

  request(): Generated {
    const method = this.method();
    const path = this.path();
    const version = this.chance(0.03) ? this.pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', 'http/1.1', '']) : 'HTTP/1.1';
    const headers = ['Host: 127.0.0.1', ...this.credential(), ...this.extraHeaders()];
    let body: Buffer | undefined;
    if (['POST', 'PATCH', 'PUT'].includes(method) || this.chance(0.05)) {
      body = this.body(method, path);
      headers.push(...this.contentType());
      if (this.chance(0.1)) {
        const encoded = this.encoded(body);
        headers.push(...encoded.headers);
        body = encoded.body;
      }
    }
    let bodyBytes: Buffer = Buffer.alloc(0);
    let label = 'plain';
    if (body !== undefined) {
      const framing = this.int(20);
      if (framing === 0) {
        label = 'chunked-bad';
        headers.push('Transfer-Encoding: chunked');
        bodyBytes = Buffer.concat([Buffer.from(`${this.pick(['zz', '-1', 'fffffffffffffffff', '5;x=' + 'e'.repeat(20_000), '', '0x10'])}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      } else if (framing <= 2) {
        label = 'chunked';
        headers.push('Transfer-Encoding: chunked');
        const half = this.int(body.length + 1);
        const parts = [body.subarray(0, half), body.subarray(half)].filter((p) => p.length > 0);
        bodyBytes = Buffer.concat([...parts.flatMap((p) => [Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]), Buffer.from('0\r\n\r\n')]);
      } else if (framing === 3) {
        label = 'content-length-bad';
        headers.push(this.pick([`Content-Length: ${body.length}x`, 'Content-Length: -1', `Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}`, 'Content-Length: 99999999999999999999999', `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked`]));
        bodyBytes = body;
      } else if (framing === 4 && body.length > 0) {
        label = 'content-length-short';
        // Announces more than it sends: the client closes mid-request.
        headers.push(`Content-Length: ${body.length + 10}`);
        bodyBytes = body;
        return { method, bytes: this.frame(method, path, version, headers, bodyBytes), complete: false, label };
      } else {
        headers.push(`Content-Length: ${body.length}`);
        bodyBytes = body;
      }
    }
    const bytes = this.frame(method, path, version, headers, bodyBytes);
    if (this.chance(0.03)) {
      // Closed mid-request: cut anywhere.
      return { method, bytes: bytes.subarray(0, this.int(bytes.length)), complete: false, label: 'cut' };
    }
    return { method, bytes, complete: true, label };
  }

  private frame(method: string, path: string, version: string, headers: string[], body: Buffer): Buffer {
    const line = this.chance(0.01) ? this.pick([`${method}  ${path} ${version}`, `${method} ${path}`, `${method}\t${path} ${version}`, `${method} ${path} ${version} extra`]) : `${method} ${path} ${version}`;
    return Buffer.concat([Buffer.from(`${line}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
  }
}

/** One exchange: the requests written on one socket, and what came back. */
interface Outcome {
  readonly requests: readonly Generated[];
  readonly exchange: RawExchange;
}

interface Finding {
  readonly why: string;
  readonly request: string;
  readonly answer?: string;
}

function describeRequest(requests: readonly Generated[]): string {
  const text = Buffer.concat(requests.map((r) => r.bytes)).toString('latin1');
  return JSON.stringify(text.length > 600 ? `${text.slice(0, 600)}…(${text.length} bytes)` : text);
}

function describeAnswer(answer: RawAnswer): string {
  return JSON.stringify(`${answer.status} ${[...answer.headers].map(([k, v]) => `${k}: ${v.join(',')}`).join('; ')} ${answer.body.toString('utf8').slice(0, 300)}`);
}

/** Checks one exchange against the promises; returns what broke them. */
function check(outcome: Outcome): Finding[] {
  const { requests, exchange } = outcome;
  const findings: Finding[] = [];
  const request = describeRequest(requests);
  for (const [i, answer] of exchange.answers.entries()) {
    const problem = (why: string): void => {
      findings.push({ why, request, answer: describeAnswer(answer) });
    };
    if (answer.version !== 'HTTP/1.1') problem(`answer ${i} is ${answer.version}`);
    if (answer.status >= 500) problem(`answer ${i} is a ${answer.status}`);
    if (answer.headers.get('x-request-id')?.[0] === undefined) problem(`answer ${i} has no X-Request-Id`);
    if (answer.status >= 400) {
      if (!/^application\/problem\+json/u.test(answer.headers.get('content-type')?.[0] ?? '')) problem(`answer ${i} (${answer.status}) is not application/problem+json`);
      else if (requests[i]?.method !== 'HEAD') {
        try {
          const body = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
          if (body['status'] !== answer.status || typeof body['code'] !== 'string' || typeof body['detail'] !== 'string') problem(`answer ${i} lacks status/code/detail`);
        } catch {
          problem(`answer ${i} body is not JSON`);
        }
      }
    }
  }
  if (exchange.malformed !== undefined) findings.push({ why: `unreadable answer: ${exchange.malformed}`, request });
  const complete = requests.every((r) => r.complete);
  if (complete) {
    if (exchange.reset) findings.push({ why: 'connection reset while every request was complete', request });
    if (exchange.timedOut) findings.push({ why: `no answer within ${EXCHANGE_TIMEOUT_MS} ms`, request });
    if (exchange.answers.length === 0) findings.push({ why: 'closed without an answer', request });
    else if (exchange.answers.length < requests.length) {
      const last = exchange.answers.at(-1);
      // Fewer answers than requests is right only when the last one closed the connection.
      if (last !== undefined && !(last.headers.get('connection') ?? []).some((v) => /close/iu.test(v))) {
        findings.push({ why: `${exchange.answers.length} answers to ${requests.length} requests, the last without Connection: close`, request, answer: describeAnswer(last) });
      }
    }
  }
  return findings;
}

describe('hostile HTTP over raw sockets (API server process)', function () {
  this.timeout(90_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let at: Addresses;
  let server: ServerProcess;

  before(async function () {
    dir = await tempDir();
    at = await addresses();
    // Limits far above the traffic, so that requests reach the operations instead of 429.
    const config = e2eConfig(at, {
      rate_limits: { credential: { requests: 1_000_000, window_seconds: 60 }, agent: { requests: 1_000_000, window_seconds: 60 } },
      log_level: 'warn',
    });
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl);
  });

  after(async function () {
    await server?.kill();
    await dir?.remove();
  });

  it(`answers ≥ ${REQUESTS} generated requests with no 5xx, no reset, problem details on every 4xx, and stays healthy`, async function () {
    console.log(`      seed ${SEED} (replay: HOSTILE_SEED=${SEED})`);
    const gen = new Generator(SEED);
    const started = Date.now();
    let sent = 0;
    const outcomes: Outcome[] = [];
    const findings: Finding[] = [];

    const one = async (): Promise<void> => {
      const count = gen.chance(0.15) ? 2 + gen.int(3) : 1;
      const requests = Array.from({ length: count }, () => gen.request());
      // A cut request can only be the last one on its socket.
      const cut = requests.findIndex((r) => !r.complete);
      const sentRequests = cut >= 0 ? requests.slice(0, cut + 1) : requests;
      sent += sentRequests.length;
      const complete = sentRequests.every((r) => r.complete);
      const port = gen.chance(0.1) ? at.egressPort : at.port;
      const exchange = await rawExchange(port, Buffer.concat(sentRequests.map((r) => r.bytes)), {
        timeoutMs: EXCHANGE_TIMEOUT_MS,
        methods: sentRequests.map((r) => r.method),
        // Complete requests: stop at the last answer instead of waiting for keep-alive
        // to close. A cut one: the client goes away (half the time at once).
        ...(complete ? { expectAnswers: sentRequests.length } : gen.chance(0.5) ? { destroyAfterWrite: true } : { endAfterWrite: true }),
      });
      const outcome = { requests: sentRequests, exchange };
      outcomes.push(outcome);
      findings.push(...check(outcome));
    };

    const workers = Array.from({ length: CONCURRENCY }, async () => {
      while (sent < REQUESTS) await one();
    });
    await Promise.all(workers);
    const elapsedMs = Date.now() - started;

    const byStatus = new Map<number, number>();
    let slowest = 0;
    for (const { exchange } of outcomes) {
      for (const answer of exchange.answers) {
        byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
        slowest = Math.max(slowest, answer.elapsedMs);
      }
    }
    const resets = outcomes.filter((o) => o.exchange.reset).length;
    const resetsComplete = outcomes.filter((o) => o.exchange.reset && o.requests.every((r) => r.complete)).length;
    console.log(`      ${sent} requests on ${outcomes.length} connections in ${elapsedMs} ms`);
    console.log('      status  answers');
    for (const [status, n] of [...byStatus].sort((a, b) => a[0] - b[0])) console.log(`      ${String(status).padEnd(7)} ${n}`);
    console.log(`      slowest answer ${slowest.toFixed(1)} ms; resets ${resets} (${resetsComplete} with every request complete)`);
    for (const f of findings.slice(0, 10)) console.log(`      FINDING ${f.why}\n        request ${f.request}${f.answer !== undefined ? `\n        answer  ${f.answer}` : ''}`);

    expect(sent).to.be.at.least(REQUESTS);
    expect(findings.map((f) => f.why)).to.deep.equal([]);
    expect([...byStatus.keys()].filter((s) => s >= 500)).to.deep.equal([]);

    const live = await fetch(`${at.url}/livez`);
    expect(live.status).to.equal(200);
    await live.arrayBuffer();
    expect(server.hasExited()).to.equal(false);
    // No secret reaches the log, whatever was sent.
    for (const secret of Object.values(SECRETS)) expect(server.stdout() + server.stderr()).to.not.include(secret);
  });
});
