import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@svc/core';
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
 * framing headers a client got wrong are `invalid_header` (CONTRACT.md "Envelope and
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
};

/** A full HTTP/1.1 problem details answer that closes the connection. */
function rawProblem(code: HttpErrorCode, requestId: string): string {
  const body = JSON.stringify(problemOf(code, DETAILS[code] ?? 'The request could not be read.', { requestId }));
  const status = problemOf(code, '').status;
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

// Node's clientError may fire more than once for one socket (each later chunk re-runs
// the failed parser); one answer per socket.
const answered = new WeakSet<Duplex>();

/**
 * Gives every request Node's HTTP parser refuses a problem details answer with an
 * `X-Request-Id` (CONTRACT.md "Request bodies and headers"), instead of Node's bare
 * `400 Bad Request` with no body:
 * - `clientError`: malformed request line or header, bad `Content-Length` or
 *   `Transfer-Encoding`, bad chunk → 400 `bad_request` / `invalid_header`; header
 *   section over `maxHeaderSize` → 431 `request_header_fields_too_large`; chunk
 *   extensions too large → 413 `payload_too_large`; `headersTimeout` /
 *   `requestTimeout` passed → 408 `request_timeout`. Written as a raw HTTP/1.1 answer
 *   with `Connection: close`, only when the socket is writable and no answer of an
 *   earlier pipelined request has begun (the bytes would corrupt it); the socket is then
 *   half-closed and destroyed after {@link LINGER_MS} at the latest.
 * - `checkExpectation`: an `Expect` other than `100-continue` → 417
 *   `expectation_failed` (RFC 9110 §10.1.1), with `Connection: close`.
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
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && (inFlight === undefined || inFlight === null || !inFlight.headersSent)) {
      socket.end(rawProblem(code, requestId));
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
      // Read and drop what the client still sends, so that closing does not reset the
      // connection over unread bytes before the client read the answer.
      socket.resume();
    } else {
      socket.destroy();
    }
    logger.warn({ request_id: requestId, status: problemOf(code, '').status, code, error_code: error.code }, 'request refused by the HTTP parser');
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const requestId = randomUUID();
    const body = JSON.stringify(
      problemOf('expectation_failed', 'Only Expect: 100-continue is supported.', { requestId }),
    );
    res.writeHead(417, {
      'Content-Type': PROBLEM_CONTENT_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': requestId,
      Connection: 'close',
    });
    res.end(body);
    logger.warn({ request_id: requestId, status: 417, code: 'expectation_failed', method: req.method }, 'request refused: unsupported Expect');
  });
}
