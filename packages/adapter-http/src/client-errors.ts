import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DEFAULT_BODY_LIMIT_BYTES, type Logger } from '@svc/core';
import { CODED_SLACK_BYTES } from './pipeline/json-body.js';
import { discardUnreadBody } from './pipeline/unread-body.js';
import { PROBLEM_CONTENT_TYPE, problemOf, type HttpErrorCode } from './problem.js';

/**
 * How long a socket whose request was refused may stay half-closed after the answer, in
 * milliseconds, for the client to read it and close first. Destroying at once resets a
 * connection whose unread request bytes are still in the kernel's buffer, and the client
 * may then lose the answer; 1 s is far more than a loopback or LAN client needs to read
 * a few hundred bytes, and bounds what a slow client can hold.
 */
const LINGER_MS = 1_000;

/**
 * The answer to each parser error code (llhttp `HPE_*`, Node `ERR_HTTP_*`). Header and
 * framing headers a client got wrong are `invalid_header` (docs/CONTRACT.md "Envelope and
 * errors"); anything else unreadable is `bad_request`.
 */
function codeOf(errorCode: string | undefined): HttpErrorCode {
  switch (errorCode) {
    case 'HPE_HEADER_OVERFLOW':
      return 'request_header_fields_too_large';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'payload_too_large';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request_timeout';
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return 'invalid_header';
    default:
      return 'bad_request';
  }
}

const DETAILS: Partial<Record<HttpErrorCode, string>> = {
  request_header_fields_too_large: 'The request header section is too large.',
  payload_too_large: 'The chunk extensions of the request body are too large.',
  request_timeout: 'The request was not received completely in time.',
  invalid_header: 'A request header is malformed or its framing (Content-Length, Transfer-Encoding) is invalid.',
  bad_request: 'The request is not valid HTTP/1.1.',
  method_not_allowed: 'CONNECT is not supported by this server.',
};

/** Every method some path of this API serves: the `Allow` of a 405 to `CONNECT` (RFC 9110 §15.5.6). */
const ALLOW_ANY_PATH = 'Allow: GET, HEAD, POST, PATCH, PUT, DELETE, OPTIONS';

/** A full HTTP/1.1 problem details answer that closes the connection. */
function rawProblem(code: HttpErrorCode, requestId: string, extraHeaders: readonly string[] = []): string {
  const body = JSON.stringify(problemOf(code, DETAILS[code] ?? 'The request could not be read.', { requestId }));
  const status = problemOf(code, '').status;
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...extraHeaders,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Longest wait, in milliseconds, for the answers of requests read before a refused one
 * on the same connection; then the connection is cut. As long as the longest operation
 * (a database write waits at most request_timeout_ms plus connect_timeout_ms) with room.
 */
const IN_FLIGHT_MAX_MS = 60_000;

/** Runs `then` once no answer of this connection is pending (`socket._httpMessage`, Node's own). */
function afterInFlight(socket: Duplex, then: () => void): void {
  const cut = setTimeout(() => socket.destroy(), IN_FLIGHT_MAX_MS);
  cut.unref();
  const check = (): void => {
    const pending = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (pending === undefined || pending === null || socket.destroyed) {
      clearTimeout(cut);
      then();
      return;
    }
    // The pending answer is the broken request's own (its body could not be read): the
    // refusal replaces it, unless it has begun, when only cutting the connection is left.
    if (!pending.req.complete) {
      clearTimeout(cut);
      if (pending.headersSent) socket.destroy();
      else then();
      return;
    }
    const next = (): void => {
      pending.off('finish', next);
      pending.off('close', next);
      // Node hands the socket to the next queued answer in its own 'finish' listener.
      setImmediate(check);
    };
    pending.once('finish', next);
    pending.once('close', next);
  };
  check();
}

// Node's clientError may fire more than once for one socket (each later chunk re-runs
// the failed parser); one answer per socket.
const answered = new WeakSet<Duplex>();

/**
 * Gives every request Node's HTTP parser refuses a problem details answer with an
 * `X-Request-Id` (docs/CONTRACT.md "Request bodies and headers"), instead of Node's bare
 * `400 Bad Request` with no body:
 * - `clientError`: malformed request line or header, bad `Content-Length` or
 *   `Transfer-Encoding`, bad chunk → 400 `bad_request` / `invalid_header`; header
 *   section over `maxHeaderSize` → 431 `request_header_fields_too_large`; chunk
 *   extensions too large → 413 `payload_too_large`; `headersTimeout` /
 *   `requestTimeout` passed → 408 `request_timeout`. Written as a raw HTTP/1.1 answer
 *   with `Connection: close` once the answers of earlier pipelined requests are sent
 *   (at most {@link IN_FLIGHT_MAX_MS}), and only while the socket is writable; the socket
 *   is then half-closed and destroyed after {@link LINGER_MS} at the latest.
 * - `connect` (a `CONNECT` request, which Node otherwise drops without a word) → 405
 *   `method_not_allowed`, the same way.
 * - `checkExpectation`: an `Expect` other than `100-continue` → 417
 *   `expectation_failed` (RFC 9110 §10.1.1) once its body is read; the connection stays
 *   open for the requests pipelined after it (closing over their unread bytes would reset
 *   it, hostile-HTTP seed 217035973), unless the body could not be read
 *   (`Connection: close`).
 * - `checkContinue`: `100 Continue` is sent when the request's turn comes on a pipelined
 *   connection, never inside an earlier answer; then the request is served as usual.
 *
 * One `warn` line per refusal, with the request id, status, code and Node's error code;
 * never the request's bytes (they may hold credentials).
 */
export function handleClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    // The peer is gone: there is nobody to answer.
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    const code = codeOf(error.code);
    const requestId = randomUUID();
    // Requests read before the broken one are answered first, in order: writing now
    // would put this answer before theirs, or into the middle of one being written.
    afterInFlight(socket, () => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(rawProblem(code, requestId));
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
      // Read and drop what the client still sends, so that closing does not reset the
      // connection over unread bytes before the client read the answer.
      socket.resume();
    });
    logger.warn({ request_id: requestId, status: problemOf(code, '').status, code, error_code: error.code }, 'request refused by the HTTP parser');
  });

  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const requestId = randomUUID();
    socket.on('error', () => undefined);
    if (socket.writable) {
      socket.end(rawProblem('method_not_allowed', requestId, [ALLOW_ANY_PATH]));
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
      socket.resume();
    } else {
      socket.destroy();
    }
    logger.warn({ request_id: requestId, status: 405, code: 'method_not_allowed', method: 'CONNECT' }, 'request refused: CONNECT');
  });

  // Node's own 100-continue handling writes `100 Continue` at once, also for a pipelined
  // request whose answer is still queued behind an earlier one; the interim answer then
  // lands inside the answer written before it when the queue flushes (measured on Node
  // 20.20: `HTTP/1.1 100 Continue` between a 200's head and its body). It is written
  // here only while nothing of this request's answer exists, when its turn comes.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as Duplex & { _httpMessage?: ServerResponse | null };
    if (socket._httpMessage === res) res.writeContinue();
    else {
      res.once('socket', () => {
        if (!res.headersSent) res.writeContinue();
      });
    }
    server.emit('request', req, res);
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    // Its body is read first, as for any answer that did not need it (`discardUnreadBody`):
    // closing over unread bytes resets the connection (hostile-HTTP seed 188613387).
    void discardUnreadBody(req, DEFAULT_BODY_LIMIT_BYTES + CODED_SLACK_BYTES).then(() => answerExpectationFailed(req, res, logger));
  });
}

/** The 417 of an `Expect` other than `100-continue`; `Connection: close` only when its body was not read to the end. */
function answerExpectationFailed(req: IncomingMessage, res: ServerResponse, logger: Logger): void {
  const requestId = randomUUID();
  const body = JSON.stringify(
    problemOf('expectation_failed', 'Only Expect: 100-continue is supported.', { requestId }),
  );
  res.writeHead(417, {
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': requestId,
    ...(req.complete ? {} : { Connection: 'close' }),
  });
  res.end(body);
  logger.warn({ request_id: requestId, status: 417, code: 'expectation_failed', method: req.method }, 'request refused: unsupported Expect');
}

