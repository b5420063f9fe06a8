import type { IncomingMessage, ServerResponse } from 'node:http';
// Imported, as in observe-request.ts.
import { performance } from 'node:perf_hooks';
import type { Logger } from '@svc/core';
import { noneMatch, type FixedAnswer } from './fixed-answer.js';
import type { AccessLogFields, ObservedExchange, RequestObserver } from './observe-request.js';
import { logRequest, requestIdOf } from './request-context.js';

/**
 * Answers a request with a fixed answer before Koa sees it, or declines: `true` when it
 * answered, `false` when the request is not one it answers (then the Koa app does, with
 * the same result for a fixed answer).
 */
export type FixedListener = (req: IncomingMessage, res: ServerResponse) => boolean;

/** What {@link fixedListener} does besides the answer: the request context stage's parts. */
export interface FixedListenerOptions {
  readonly logger: Logger;
  /** The access log line's fields beyond the request's own (`accessLogFields`). */
  readonly logFields?: AccessLogFields;
  /** The request's span and metrics (`requestObserver`). */
  readonly observer?: RequestObserver;
}

interface Prepared {
  readonly answer: FixedAnswer;
  /** `Content-Length` of the body, bytes. */
  readonly length: string;
}

/**
 * The fixed answers of a listener (the index, the OpenAPI document, llms.txt, the docs
 * site, the OAuth metadata, `/livez`: `GET` and `HEAD` of a path in `answers`) served
 * straight on Node's request and response, without Koa's context and middleware: the
 * same status, headers in the same order, body, request id, access log line, span and
 * metrics as the Koa app's request context stage and `sendFixed` give them
 * (test/fixed-listener.test.ts compares both on every fixed path).
 *
 * Why: Koa's context and `respond` are about a quarter of a fixed answer's CPU (`pnpm
 * bench`, 2026-11-28: bare `node:http` 15 µs a request, bare Koa 20 µs), and the index
 * target is a ratio to bare Koa (bench/BENCHMARKS.md, issue 11).
 *
 * It declines, leaving the request to Koa, for anything else: another method or path, a
 * request with a body (`Content-Length` other than 0, or `Transfer-Encoding`: Koa's stage
 * reads and drops it), or a throw of the logger or the observer before the answer is
 * written (the headers it set are removed first; those set before it stay). A listener
 * with CORS origins does not use it (`@koa/cors` adds `Vary` and its headers to every
 * answer).
 */
export function fixedListener(answers: ReadonlyMap<string, FixedAnswer>, options: FixedListenerOptions): FixedListener {
  const prepared = new Map<string, Prepared>();
  for (const [path, answer] of answers) prepared.set(path, { answer, length: String(Buffer.byteLength(answer.body)) });
  const { logger, logFields, observer } = options;
  return (req, res) => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const entry = prepared.get(path);
    if (entry === undefined) return false;
    const headers = req.headers;
    const length = headers['content-length'];
    if ((length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined) return false;
    const { answer } = entry;
    let status: 200 | 304;
    try {
      status = answer.etag !== undefined && noneMatch(req, answer.etag) ? 304 : 200;
      const requestId = requestIdOf(req);
      const state: { requestId: string; operation?: string } = { requestId };
      if (answer.operation !== undefined) state.operation = answer.operation;
      const exchange: ObservedExchange = { req, method, path, status, state };
      const observation = observer?.begin(exchange);
      const started = observation?.started ?? performance.now();
      res.setHeader('X-Request-Id', requestId);
      for (const [name, value] of answer.headers) res.setHeader(name, value);
      if (status === 200) {
        res.setHeader('Content-Type', answer.contentType);
        res.setHeader('Content-Length', entry.length);
      }
      logRequest(logger, exchange, requestId, started, logFields, observation?.span);
      if (observation !== undefined) observer?.end(exchange, observation);
    } catch {
      // Nothing is written yet: the Koa app answers afresh (its error boundary, if it throws
      // again), with what the server's own listener set before (`Connection: close` while draining).
      for (const name of ['X-Request-Id', ...answer.headers.map(([header]) => header), 'Content-Type', 'Content-Length']) res.removeHeader(name);
      return false;
    }
    res.statusCode = status;
    if (status === 304 || method === 'HEAD') res.end();
    else res.end(answer.body);
    return true;
  };
}
