import { connect } from 'node:net';
import { leakScan } from './leak-scan.js';

/** One HTTP/1.1 answer read from a raw socket. Header names are lower-case. */
export interface RawAnswer {
  /** The status line's version, e.g. `HTTP/1.1`. */
  readonly version: string;
  readonly status: number;
  /** Every header line, in order (a repeated header keeps every value). */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body: Buffer;
  /** Milliseconds from the first byte written to the answer's last byte read. */
  readonly elapsedMs: number;
}

/** What happened on one raw connection. */
export interface RawExchange {
  /** Final answers (1xx interim answers are left out), in order. */
  readonly answers: readonly RawAnswer[];
  /** How many 1xx interim answers arrived. */
  readonly interim: number;
  /** The socket saw ECONNRESET (or EPIPE) from the server. */
  readonly reset: boolean;
  /** The bytes after the last complete answer could not be read as HTTP/1.1, if so. */
  readonly malformed?: string;
  /** The deadline passed before the server closed or answered everything expected. */
  readonly timedOut: boolean;
}

/** Options of {@link rawExchange}. */
export interface RawExchangeOptions {
  /** Methods of the requests sent, in order: a `HEAD` answer has no body. */
  readonly methods?: readonly string[];
  /** Stop once this many final answers arrived; default: wait for the server to close. */
  readonly expectAnswers?: number;
  /** Give up after this many milliseconds (counted as {@link RawExchange.timedOut}). */
  readonly timeoutMs: number;
  /** Half-close after writing (FIN), as a client that has nothing more to send. */
  readonly endAfterWrite?: boolean;
  /** Destroy the socket right after writing: a client gone mid-request. */
  readonly destroyAfterWrite?: boolean;
}

const HEAD_END = Buffer.from('\r\n\r\n');

type Parsed = { kind: 'answer'; answer: Omit<RawAnswer, 'elapsedMs'>; used: number } | { kind: 'more' } | { kind: 'bad'; why: string };

/**
 * Reads one HTTP/1.1 answer from the start of `buffer` (RFC 9112 §6.3 message length).
 * Hand-written because Node exposes no parser for a response read from a raw socket, and
 * the tests need raw sockets to send what every HTTP client library refuses to.
 */
function parseAnswer(buffer: Buffer, method: string | undefined, closed: boolean): Parsed {
  const end = buffer.indexOf(HEAD_END);
  if (end < 0) return buffer.length > 64 * 1024 ? { kind: 'bad', why: 'head over 64 KiB' } : { kind: 'more' };
  const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^(HTTP\/1\.[01]) ([1-5]\d\d)(?: .*)?$/u.exec(lines[0] ?? '');
  if (status === null) return { kind: 'bad', why: `status line ${JSON.stringify((lines[0] ?? '').slice(0, 80))}` };
  const headers = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { kind: 'bad', why: `header line ${JSON.stringify(line.slice(0, 80))}` };
    const name = line.slice(0, colon).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  const code = Number(status[2]);
  const start = end + HEAD_END.length;
  const answer = (body: Buffer, used: number): Parsed => ({ kind: 'answer', answer: { version: status[1] ?? '', status: code, headers, body }, used });
  if (method === 'HEAD' && code >= 200 && (headers.get('connection') ?? []).some((v) => /close/iu.test(v))) {
    // A HEAD the parser could not read is answered like any refused request, with a
    // body: that one closes the connection, so the close tells which it is.
    if (!closed) return { kind: 'more' };
    const length = Number(headers.get('content-length')?.[0] ?? 0);
    return answer(buffer.subarray(start, buffer.length - start === length ? start + length : start), buffer.length - start === length ? start + length : start);
  }
  if (code < 200 || code === 204 || code === 304 || method === 'HEAD') return answer(Buffer.alloc(0), start);
  if ((headers.get('transfer-encoding') ?? []).some((v) => /chunked/iu.test(v))) {
    const chunks: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd < 0) return { kind: 'more' };
      const size = Number.parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size)) return { kind: 'bad', why: 'chunk size' };
      if (size === 0) {
        const trailerEnd = buffer.indexOf('\r\n', lineEnd + 2);
        if (trailerEnd < 0) return { kind: 'more' };
        return answer(Buffer.concat(chunks), trailerEnd + 2);
      }
      if (buffer.length < lineEnd + 2 + size + 2) return { kind: 'more' };
      chunks.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers.get('content-length')?.[0];
  if (length !== undefined) {
    const n = Number(length);
    if (!Number.isSafeInteger(n) || n < 0) return { kind: 'bad', why: 'content-length' };
    return buffer.length < start + n ? { kind: 'more' } : answer(buffer.subarray(start, start + n), start + n);
  }
  // Delimited by the close of the connection.
  return closed ? answer(buffer.subarray(start), buffer.length) : { kind: 'more' };
}

/**
 * The `Name: value` lines of raw request bytes (of every request in them), for the leak
 * scan; a last line with no CRLF after it (a request cut short) is left out, as a cut
 * value is no credential.
 */
function headerLines(text: string): [string, string][] {
  return text.split('\r\n').slice(0, -1).flatMap((line) => {
    const header = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*)$/u.exec(line);
    return header === null ? [] : [[header[1]!, header[2]!] as [string, string]];
  });
}

/**
 * Opens a TCP connection to `127.0.0.1:port`, writes `request` as is, and reads every
 * answer until the server closes, the expected number arrived, or the deadline passed.
 * Never rejects: a reset or a malformed answer is reported in the result. While the leak
 * scan captures (tools/test-support/leak-scan.ts), the credentials and e-mail addresses
 * of `request` are registered and every answer read is scanned.
 */
export function rawExchange(port: number, request: Buffer | string, options: RawExchangeOptions): Promise<RawExchange> {
  const scanned = leakScan.capturing;
  if (scanned) {
    const text = typeof request === 'string' ? request : request.toString('latin1');
    leakScan.registerRequest(headerLines(text), text);
  }
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const answers: RawAnswer[] = [];
    let interim = 0;
    let buffer = Buffer.alloc(0);
    let reset = false;
    let malformed: string | undefined;
    let done = false;
    let started = 0n;
    const finish = (timedOut: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (scanned) {
        answers.forEach((a, i) => {
          const headers = [...a.headers].flatMap(([name, values]) => values.map((v) => [name, v] as const));
          leakScan.scanResponse(`raw answer ${i + 1} from 127.0.0.1:${port} ${a.status}`, { statusLine: `${a.version} ${a.status}`, headers, body: a.body.toString('utf8') });
        });
        if (buffer.length > 0) leakScan.scan(`raw bytes after answer ${answers.length} from 127.0.0.1:${port}`, buffer.toString('latin1'));
      }
      resolve({ answers, interim, reset, timedOut, ...(malformed !== undefined ? { malformed } : {}) });
    };
    const timer = setTimeout(() => finish(true), options.timeoutMs);
    const drain = (closed: boolean): void => {
      while (malformed === undefined && buffer.length > 0) {
        const parsed = parseAnswer(buffer, options.methods?.[answers.length], closed);
        if (parsed.kind === 'more') {
          if (closed) malformed = `truncated answer (${buffer.length} bytes)`;
          break;
        }
        if (parsed.kind === 'bad') {
          malformed = parsed.why;
          break;
        }
        buffer = buffer.subarray(parsed.used);
        if (parsed.answer.status < 200) interim += 1;
        else answers.push({ ...parsed.answer, elapsedMs: Number(process.hrtime.bigint() - started) / 1e6 });
      }
      if (options.expectAnswers !== undefined && answers.length >= options.expectAnswers) finish(false);
    };
    socket.on('connect', () => {
      started = process.hrtime.bigint();
      socket.write(request);
      if (options.destroyAfterWrite === true) finish(false);
      else if (options.endAfterWrite === true) socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      drain(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') reset = true;
    });
    socket.on('close', () => {
      drain(true);
      finish(false);
    });
  });
}
