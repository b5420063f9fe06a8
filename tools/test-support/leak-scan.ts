// The leak scan of the end-to-end suite (issue 18, item 3): every response the tests read
// and every log line a server process writes is scanned for the sensitive values the tests
// configured or sent (docs/CONTRACT.md "Isolation between accounts" and "Envelope and
// errors": no secret, host, user name, password or e-mail address in a response; likewise
// in a log line, docs/decisions.md "Log fields"). A hit fails the test it happened in
// (tools/test-support/leak-scan-hooks.ts, a mocha root hook plugin), naming the place and
// what kind of value leaked, never the value itself.
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

/**
 * Values shorter than this many characters are not registered: a 5-character user name or
 * database name (`sales`, `sa`) is a common word that answers and logs hold for other
 * reasons, and a real secret is far longer.
 */
export const MIN_LENGTH = 6;

/**
 * A credential taken from a request (`X-API-Key`, `Authorization: Bearer`) is registered
 * only with at least this many characters: every key or token the server could hold is
 * 40 or more, while the hostile tests also send junk and cut-off keys (`svcpt_`, the
 * token prefix every index document shows, is what a key cut mid-header leaves).
 */
export const MIN_SENT_CREDENTIAL_LENGTH = 16;

/**
 * Values too generic to mean anything when found (compared case-insensitively): default
 * user names that are also product words (`postgres` is in `postgresql`, a connection
 * type every connection list shows) and the loopback names every base URL of the suite
 * holds.
 */
export const GENERIC_VALUES: ReadonlySet<string> = new Set([
  'postgres', 'postgresql', 'localhost', 'admin', 'administrator', 'root', 'default', 'public', 'master', 'sqlserver', 'redis', 'password', 'secret', 'changeme',
]);

/**
 * Hosts that are never secret in this suite: every server under test listens on them and
 * names them in its own URLs (`base_url`). A connection host meant to be scanned for must
 * be another loopback address (sqlserver-e2e.test.ts uses 127.0.0.3).
 */
export const PUBLIC_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0'];

/** The name of a default environment variable of the API server, and what its value is. */
const DEFAULT_ENV_LABELS: readonly (readonly [string, string])[] = [
  ['SVC_CATALOG_URL', 'catalog database URL'],
  ['SVC_SMTP_PASSWORD', 'SMTP password'],
];

/** Environment variables handed to a child whose value is sensitive whatever a configuration says. */
const SENSITIVE_ENV_NAME = /PASSWORD|SECRET|TOKEN|CREDENTIAL/iu;

/**
 * What an e-mail address is to the leak scan (RFC 5322 simplified: local@domain.tld), as a
 * regular expression: the reference {@link emailAddresses} finds the same matches as,
 * without using it. Matched with `matchAll` it takes time quadratic in the length of a run
 * of local-part characters before an `@` (each start in the run is tried, and each scans
 * to the run's end): a hostile request's 40,000-byte header cost seconds.
 */
export const EMAIL_PATTERN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/gu;

/** True for a character of an address's local part: `[A-Za-z0-9._%+-]`. */
function isLocalChar(code: number): boolean {
  return isLabelChar(code) || code === 0x2e /* . */ || code === 0x5f /* _ */ || code === 0x25 /* % */ || code === 0x2b /* + */;
}

/** True for a character of a domain label: `[A-Za-z0-9-]`. */
function isLabelChar(code: number): boolean {
  return isLetter(code) || (code >= 0x30 && code <= 0x39) || code === 0x2d /* - */;
}

/** True for `[A-Za-z]`. */
function isLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/**
 * Where the domain part of an address starting at `from` (just after its `@`) ends, as
 * {@link EMAIL_PATTERN}'s `[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}` matches it:
 * after the run of letters (two or more) that starts the last label but the first of the
 * dot-separated chain of non-empty labels. -1 when it matches nothing there.
 */
function domainEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length && isLabelChar(text.charCodeAt(at))) at += 1;
  if (at === from) return -1;
  let end = -1;
  while (at < text.length && text.charCodeAt(at) === 0x2e /* . */) {
    const label = at + 1;
    let letters = label;
    while (letters < text.length && isLetter(text.charCodeAt(letters))) letters += 1;
    if (letters - label >= 2) end = letters;
    at = letters;
    while (at < text.length && isLabelChar(text.charCodeAt(at))) at += 1;
    // An empty label ends the chain; the pattern's last `\.` cannot be followed by letters there.
    if (at === label) break;
  }
  return end;
}

/**
 * Every e-mail address in `text`, in order: the matches of `text.matchAll(EMAIL_PATTERN)`
 * ({@link EMAIL_PATTERN}), leftmost and not overlapping, found in time linear in the
 * length of `text` (each character is looked at a bounded number of times), where the
 * pattern itself is quadratic on long runs of local-part characters.
 */
export function emailAddresses(text: string): string[] {
  const found: string[] = [];
  // Where the previous match ended: the next one starts there or later (`lastIndex`).
  let from = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    // The local part is the run of local-part characters before this `@` (an `@` is none),
    // cut at `from`; at least one character.
    if (at <= from || !isLocalChar(text.charCodeAt(at - 1))) continue;
    const end = domainEnd(text, at + 1);
    if (end === -1) continue;
    let start = at - 1;
    while (start > from && isLocalChar(text.charCodeAt(start - 1))) start -= 1;
    found.push(text.slice(start, end));
    from = end;
  }
  return found;
}

/** One sensitive value found where no one may see it. */
export interface Hit {
  /** Where: `response GET http://127.0.0.1:P/api/v1 200 body`, `log line 17 of src/main.ts pid N (stdout)`. */
  readonly place: string;
  /** What kind of value: `API key secret`, `SQL Server password`, `e-mail address`. */
  readonly label: string;
  /** The value masked: its first two characters and its length, never the value. */
  readonly masked: string;
  /** The test (full title) running when the hit was recorded, or `outside any test`. */
  readonly during: string;
}

/** What a scanned response holds. */
export interface ScannedResponse {
  /** e.g. `HTTP/1.1 401 Unauthorized`. */
  readonly statusLine: string;
  /** Every header, in order; a repeated header may come once per value. */
  readonly headers: Iterable<readonly [string, string]>;
  /** The body as text, when it was read. */
  readonly body?: string;
}

/** Figures of a scan so far. */
export interface LeakScanFigures {
  readonly responses: number;
  readonly logLines: number;
  /** Sensitive values registered (a value's JSON-escaped form and digest not counted apart). */
  readonly values: number;
  /** Values offered but not registered: too short, generic or public. */
  readonly skipped: number;
  /** Every hit recorded so far, reported or not. */
  readonly hits: number;
}

/** `ab…[15 chars]`: enough to tell two values apart in a report, never the value. */
export function mask(value: string): string {
  return `${value.slice(0, 2)}…[${value.length} chars]`;
}

/** The lower-case hex SHA-256 digest of a secret, as configurations hold it. */
function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The host of a URL, or undefined when `value` is no absolute URL. */
function hostOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return new URL(value).hostname;
  } catch {
    return undefined;
  }
}

/** Configuration keys whose subtree describes a connection to a database, a catalog or a mail server. */
const CONNECTION_CONTEXT = /^(connections|catalog|sqlserver|postgres|postgresql|redis|database|db|smtp)$/u;

/**
 * A registry of sensitive values and the hits found by scanning text for them.
 *
 * Registration rules (what a test need not think about): a value shorter than
 * {@link MIN_LENGTH}, listed in {@link GENERIC_VALUES}, or declared public (the
 * {@link PUBLIC_HOSTS}, and the hosts a configuration names for its own listeners and
 * URLs) is skipped; a value is matched as a substring, as it is and JSON-escaped (how a
 * pino line would hold it).
 */
export class LeakScan {
  /** Every form scanned for, to the label of the value it stands for. */
  private readonly forms = new Map<string, string>();
  private readonly canonical = new Set<string>();
  private readonly skippedValues = new Set<string>();
  private readonly publicValues = new Set<string>(PUBLIC_HOSTS);
  private readonly envLabels = new Map<string, string>(DEFAULT_ENV_LABELS);
  private readonly pending = new Set<Promise<unknown>>();
  private unreported: Hit[] = [];
  private hitCount = 0;
  private responseCount = 0;
  private lineCount = 0;
  private liveProcesses = 0;
  private inScopeTest = false;
  private during = 'outside any test (a before or after hook)';

  /**
   * True while responses are to be captured: a watched server process is alive, or a test
   * of the end-to-end suite runs. Capturing code asks this first, so that it costs nothing
   * to the rest of the mocha run.
   */
  get capturing(): boolean {
    return this.liveProcesses > 0 || this.inScopeTest;
  }

  /**
   * Registers `value` as sensitive under `label` (what it is, e.g. `connection password`).
   * @returns false when the value was skipped (not a string, too short, generic or public) or already registered.
   */
  register(value: unknown, label: string): boolean {
    if (typeof value !== 'string') return false;
    if (value.length < MIN_LENGTH || /^\d+$/u.test(value) || GENERIC_VALUES.has(value.toLowerCase()) || this.publicValues.has(value)) {
      this.skippedValues.add(value);
      return false;
    }
    if (this.canonical.has(value)) return false;
    this.canonical.add(value);
    for (const form of [value, JSON.stringify(value).slice(1, -1)]) if (!this.forms.has(form)) this.forms.set(form, label);
    return true;
  }

  /** Registers an API key or token secret, and its SHA-256 digest (what a configuration holds of it). */
  registerCredential(secret: string, label: string): void {
    if (this.register(secret, label)) this.register(sha256Hex(secret), `SHA-256 digest of the ${label}`);
  }

  /**
   * Declares values that are shown by design (a listener's host, an egress source address):
   * they are never registered afterwards. Declare before registering.
   */
  declarePublic(...values: readonly unknown[]): void {
    for (const value of values) if (typeof value === 'string' && value !== '') this.publicValues.add(value);
  }

  /**
   * Registers the parts of a connection URL: the user, the password, the host, and the
   * whole URL when it holds a user or password (a connection string).
   */
  registerUrl(url: string, label: string): void {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      this.register(url, label);
      return;
    }
    const user = decodeURIComponent(parsed.username);
    const password = decodeURIComponent(parsed.password);
    this.register(user, `${label}: user name`);
    this.register(password, `${label}: password`);
    this.register(parsed.hostname, `${label}: host`);
    if (user !== '' || password !== '') this.register(url, `${label} (connection string)`);
  }

  /**
   * Walks a configuration as writeConfig writes it: the listeners' hosts and the hosts of
   * `base_url`, `egress.url` and `egress.source_address` are public (customers are shown
   * them); every `sha256` is a credential digest; in a connection or catalog subtree,
   * `host`, `user`, `password`, `database` and URLs are sensitive; every `*_env` key names
   * an environment variable whose value is sensitive once a child process gets it
   * ({@link LeakScan.registerEnv}), but for `access_key_id_env` (an S3 access key id is in
   * every presigned URL the server hands out, by design).
   */
  registerConfig(config: unknown): void {
    if (!isRecord(config)) return;
    const egress = isRecord(config['egress']) ? config['egress'] : {};
    const listeners = [config['listen'], egress['listen'], config['admin_listen']].filter(isRecord);
    this.declarePublic(hostOf(config['base_url']), hostOf(egress['url']), egress['source_address'], ...listeners.map((l) => l['host']));
    this.walk(config, false, []);
  }

  private walk(node: unknown, inConnection: boolean, path: readonly string[]): void {
    if (Array.isArray(node)) {
      for (const item of node) this.walk(item, inConnection, path);
      return;
    }
    if (!isRecord(node)) return;
    for (const [key, value] of Object.entries(node)) {
      const where = [...path, key].join('.');
      const connection = inConnection || CONNECTION_CONTEXT.test(key);
      if (typeof value === 'string') {
        if (key === 'sha256') {
          // A test's deliberately invalid digest (`not-a-digest`) is no one's secret.
          if (/^[0-9a-f]{64}$/iu.test(value)) this.register(value, `credential SHA-256 digest (${where})`);
        }
        // An S3 access key id is shown by design in every presigned upload URL (X-Amz-Credential): it names the key, the secret key signs.
        else if (key === 'access_key_id_env') continue;
        else if (key.endsWith('_env')) this.envLabels.set(value, `value of ${value} (${where})`);
        else if (/(^|_)(password|secret|token)$/u.test(key)) this.register(value, `password or secret (${where})`);
        else if (connection && /^(user|username|user_name|login)$/u.test(key)) this.register(value, `connection user name (${where})`);
        else if (connection && /^(host|hostname|server)$/u.test(key)) this.register(value, `connection host (${where})`);
        else if (connection && key === 'database') this.register(value, `connection database name (${where})`);
        else if (/(^|_)url$/u.test(key) && /^[a-z][a-z0-9+.-]*:\/\/[^/]*@/iu.test(value)) this.registerUrl(value, `URL with credentials (${where})`);
      } else {
        this.walk(value, connection, [...path, key]);
      }
    }
  }

  /**
   * Registers the values of a child's environment that are sensitive: a variable a written
   * configuration names through a `*_env` key, the server's default `SVC_CATALOG_URL`,
   * and, among `given` (what the test hands the child), any whose name says password,
   * secret, token or credential. `inherited` is searched only for the named variables.
   */
  registerEnv(given: NodeJS.ProcessEnv, inherited: NodeJS.ProcessEnv = {}): void {
    const names = new Set([...this.envLabels.keys(), ...Object.keys(given).filter((n) => SENSITIVE_ENV_NAME.test(n))]);
    for (const name of names) {
      const value = given[name] ?? (this.envLabels.has(name) ? inherited[name] : undefined);
      if (value === undefined || value === '') continue;
      const label = this.envLabels.get(name) ?? `value of ${name}`;
      if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(value)) this.registerUrl(value, label);
      else this.register(value, label);
    }
  }

  /**
   * Registers what a request carries: the credential of `X-API-Key` or of
   * `Authorization: Bearer` (and its digest), and every e-mail address in its body (a
   * `notification_email` is never to be echoed).
   */
  registerRequest(headers: Iterable<readonly [string, string]>, body?: string): void {
    for (const [name, value] of headers) {
      const lower = name.toLowerCase();
      const credential = lower === 'x-api-key' ? value.trim() : lower === 'authorization' ? /^bearer\s+(\S+)/iu.exec(value.trim())?.[1] : undefined;
      if (credential !== undefined && credential.length >= MIN_SENT_CREDENTIAL_LENGTH) {
        this.registerCredential(credential, lower === 'x-api-key' ? 'API key sent in X-API-Key' : 'credential sent as a bearer token');
      }
    }
    if (body !== undefined) for (const email of emailAddresses(body)) this.register(email, 'e-mail address sent in a request body');
  }

  /**
   * Scans `text` for every registered value and records a hit per value found, with
   * `place`. Counts nothing: {@link LeakScan.scanResponse} and the log scanner count.
   * @returns the number of hits found in `text`.
   */
  scan(place: string, text: string): number {
    let found = 0;
    const seen = new Set<string>();
    for (const [form, label] of this.forms) {
      if (!text.includes(form)) continue;
      const key = `${label}\u0000${place}`;
      if (seen.has(key)) continue;
      seen.add(key);
      found += 1;
      this.hitCount += 1;
      this.unreported.push({ place, label, masked: mask(form), during: this.during });
    }
    return found;
  }

  /** Scans one response: its status line, each header (`name: value`) and its body; `place` names the request. */
  scanResponse(place: string, response: ScannedResponse): number {
    this.responseCount += 1;
    let found = this.scan(`${place} status line`, response.statusLine);
    for (const [name, value] of response.headers) found += this.scan(`${place} header ${name}`, `${name}: ${value}`);
    if (response.body !== undefined) found += this.scan(`${place} body`, response.body);
    return found;
  }

  /** Scans one log line (the n-th of its source, counted from 1). */
  scanLogLine(source: string, n: number, line: string): number {
    this.lineCount += 1;
    return this.scan(`log line ${n} of ${source}`, line);
  }

  /**
   * Scans `stream` line by line as it is written (a last line without a newline at its
   * end), the lines named `log line n of {source}`.
   */
  watchStream(stream: Readable, source: string): void {
    let partial = '';
    let n = 0;
    stream.on('data', (chunk: Buffer | string) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.scanLogLine(source, ++n, line);
    });
    stream.once('end', () => {
      if (partial !== '') this.scanLogLine(source, ++n, partial);
      partial = '';
    });
  }

  /**
   * Watches a server process: registers the sensitive values of its environment, scans
   * its stdout and stderr line by line, and keeps {@link LeakScan.capturing} on while it
   * runs. `name` says what it is (`src/main.ts`).
   */
  watchProcess(child: ChildProcess, name: string, env: NodeJS.ProcessEnv = {}): void {
    this.registerEnv(env, process.env);
    this.liveProcesses += 1;
    // 'exit' only: a listener of 'error' would swallow a failed spawn the caller must see.
    child.once('exit', () => (this.liveProcesses -= 1));
    const source = `${name} pid ${child.pid ?? '?'}`;
    if (child.stdout !== null) this.watchStream(child.stdout, `${source} (stdout)`);
    if (child.stderr !== null) this.watchStream(child.stderr, `${source} (stderr)`);
  }

  /** Keeps `work` (a body being read, then scanned) until {@link LeakScan.settle}. */
  track(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  /** True while a tracked body is still being read. */
  get busy(): boolean {
    return this.pending.size > 0;
  }

  /** Resolves when every tracked body is scanned, or after `deadlineMs`, whichever comes first. */
  async settle(deadlineMs: number): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.pending]), new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs)))]);
    clearTimeout(timer);
  }

  /** Marks the start of a test (its full title; `inScope`: a test of the end-to-end suite). */
  enterTest(title: string, inScope: boolean): void {
    this.during = title;
    this.inScopeTest = inScope;
  }

  /** Marks the end of the test entered last. */
  leaveTest(): void {
    this.during = `after "${this.during}"`;
    this.inScopeTest = false;
  }

  /** The hits recorded since the last call, removed from the registry. */
  takeHits(): Hit[] {
    const hits = this.unreported;
    this.unreported = [];
    return hits;
  }

  /** True when hits wait to be taken. */
  get hasHits(): boolean {
    return this.unreported.length > 0;
  }

  /** Every registered value as `label: masked`, in the order registered (for `LEAK_SCAN_VERBOSE=1`). */
  registered(): string[] {
    const labels = new Map([...this.forms].filter(([form]) => this.canonical.has(form)));
    return [...this.canonical].map((value) => `${labels.get(value) ?? '?'}: ${mask(value)}`);
  }

  /** The figures so far. */
  figures(): LeakScanFigures {
    return { responses: this.responseCount, logLines: this.lineCount, values: this.canonical.size, skipped: this.skippedValues.size, hits: this.hitCount };
  }

  /** `leak scan: 0 hits in N responses and M log lines, K values (S skipped as short, generic or public)`. */
  summary(): string {
    const f = this.figures();
    return `leak scan: ${f.hits} hits in ${f.responses} responses and ${f.logLines} log lines, ${f.values} values (${f.skipped} skipped as short, generic or public)`;
  }
}

/** How many hits a {@link LeakError} message lists (all are in its `hits`). */
const LISTED_HITS = 20;

/** The error a test fails with when hits were found: each hit's place, label and masked value (the first 20 listed). */
export class LeakError extends Error {
  constructor(readonly hits: readonly Hit[]) {
    super(
      [
        `leak scan: ${hits.length} hit${hits.length === 1 ? '' : 's'}: a configured or sent secret, host, user name, password or e-mail address was seen`,
        ...hits.slice(0, LISTED_HITS).map((h, i) => `  ${i + 1}. ${h.label} (${h.masked}) in ${h.place} (during ${JSON.stringify(h.during)})`),
        ...(hits.length > LISTED_HITS ? [`  … and ${hits.length - LISTED_HITS} more`] : []),
      ].join('\n'),
    );
    this.name = 'LeakError';
  }
}

/**
 * A `fetch` that hands what it sends to `registry` (credentials, e-mail addresses) and
 * scans every response it gets (status line, headers and, read from a clone, the body;
 * an event stream's body is left alone) while `registry.capturing`; otherwise it is
 * `inner` itself.
 */
export function capturingFetch(registry: LeakScan, inner: typeof fetch): typeof fetch {
  return async function fetchWithLeakScan(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    if (!registry.capturing) return inner(input, init);
    const request = input instanceof Request ? input : undefined;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const url = request?.url ?? String(input);
    const body = init?.body;
    const text = typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body).toString('utf8') : undefined;
    registry.registerRequest(new Headers(init?.headers ?? request?.headers), text);
    const response = await inner(input, init);
    const place = `response ${method} ${url} ${response.status}`;
    const head = { statusLine: `HTTP ${response.status} ${response.statusText}`, headers: [...response.headers] };
    if (response.body === null || /^text\/event-stream/iu.test(response.headers.get('content-type') ?? '')) registry.scanResponse(place, head);
    else {
      registry.track(
        response
          .clone()
          .text()
          .then(
            (read) => registry.scanResponse(place, { ...head, body: read }),
            () => registry.scanResponse(`${place} (body not read whole)`, head),
          ),
      );
    }
    return response;
  };
}

const GLOBAL_KEY = Symbol.for('svc.test-support.leakScan');

/**
 * The registry of the mocha run (one per process, kept on `globalThis` so that a module
 * loaded twice, through `require` and `import`, still shares it). The end-to-end support
 * (examples/api-server/test/support) registers into it; the root hook plugin reports from it.
 */
export const leakScan: LeakScan = ((globalThis as Record<symbol, unknown>)[GLOBAL_KEY] as LeakScan | undefined) ?? ((globalThis as Record<symbol, unknown>)[GLOBAL_KEY] = new LeakScan());
