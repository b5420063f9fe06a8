import type { IncomingMessage } from 'node:http';
import type { Context, Middleware, Next } from 'koa';

/**
 * Longest wait in ms for the rest of a body the answer did not need: a client sending at
 * loopback or LAN speed finishes a 1 MiB body well within it; a slower one gets its answer
 * anyway after it (and may then see the connection closed over unread bytes).
 */
export const UNREAD_BODY_WAIT_MS = 2_000;

/** Resolves once `req` has been read to its end (its bytes discarded), failed, or after `ms`. */
function readToEnd(req: IncomingMessage, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      req.off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    req.on('end', done).on('close', done).on('error', done);
    req.resume();
  });
}

/**
 * Reads the rest of a request body that was answered without being read (a 401 before the
 * body, a 404, a 415) before the answer goes out, when it is at most `limitBytes` long.
 * Closing a connection (HTTP/1.0, `Connection: close`) over request bytes still unread
 * makes the kernel reset it, and the client may lose the answer it was about to read
 * (docs/CONTRACT.md "Request bodies and headers": never a reset). A request whose body was
 * read costs one property check. A longer body is left to Node (it discards what it can).
 */
export function unreadBody(limitBytes: number): Middleware {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } finally {
      // Checked here first: a read body (nearly every request) costs no promise round.
      if (!ctx.req.complete && !ctx.req.destroyed) await discardUnreadBody(ctx.req, limitBytes);
    }
  };
}

/**
 * Reads what is left of `req`'s body, bytes discarded, when its declared length is at most
 * `limitBytes` (a chunked body: bounded by the wait instead), for at most
 * {@link UNREAD_BODY_WAIT_MS}; at once when nothing is left. See {@link unreadBody}.
 */
export async function discardUnreadBody(req: IncomingMessage, limitBytes: number): Promise<void> {
  if (req.complete || req.destroyed) return;
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (!(declared > limitBytes)) await readToEnd(req, UNREAD_BODY_WAIT_MS);
}
