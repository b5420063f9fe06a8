import type { IncomingMessage } from 'node:http';

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
 * Reads what is left of `req`'s body, bytes discarded, when its declared length is at most
 * `limitBytes` (a chunked body: bounded by the wait instead), for at most
 * {@link UNREAD_BODY_WAIT_MS}; at once when nothing is left. For a request answered without
 * its body being read (a 401 before the body, a 404, a 415), before the answer goes out
 * (pipeline/request-context.ts): closing a connection (HTTP/1.0, `Connection: close`) over
 * request bytes still unread makes the kernel reset it, and the client may lose the answer
 * it was about to read (docs/CONTRACT.md "Request bodies and headers": never a reset). A
 * longer body is left to Node (it discards what it can).
 */
export async function discardUnreadBody(req: IncomingMessage, limitBytes: number): Promise<void> {
  if (req.complete || req.destroyed) return;
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (!(declared > limitBytes)) await readToEnd(req, UNREAD_BODY_WAIT_MS);
}
