import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** One answer a test server sent, as a client saw it. */
export interface ObservedAnswer {
  /** Which app answered: the main address or the egress address. */
  readonly listener: 'main' | 'egress';
  readonly method: string;
  /** The request path, without the query. */
  readonly path: string;
  readonly status: number;
  /** The media type of the body (`application/json`, `application/problem+json`, …), `''` when none. */
  readonly mediaType: string;
  /** The parsed JSON body, `undefined` when it is not JSON (or longer than {@link MAX_BODY_BYTES}). */
  readonly body: unknown;
}

/** Every answer of the apps `startApps` served during this mocha run (see `declared-statuses.test.ts`). */
export const OBSERVED_ANSWERS: ObservedAnswer[] = [];

// Bodies of the answers checked against the document are small; a long one (a 1 MiB echo)
// is recorded without its body.
const MAX_BODY_BYTES = 256 * 1024;

/**
 * Wraps a Node request listener so that each answer it sends is appended to
 * {@link OBSERVED_ANSWERS} once sent: status, media type and JSON body (copied from what
 * is written on the response, so answers written on the raw response, like the MCP
 * door's, are seen too).
 */
export function recordingAnswers(listener: ObservedAnswer['listener'], handle: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (chunk: unknown): void => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > MAX_BODY_BYTES) return;
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      size += buffer.length;
      chunks.push(buffer);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((...args: unknown[]) => {
      keep(args[0]);
      return write(...args);
    }) as ServerResponse['write'];
    res.end = ((...args: unknown[]) => {
      keep(args[0]);
      return end(...args);
    }) as ServerResponse['end'];
    res.once('finish', () => {
      const mediaType = String(res.getHeader('content-type') ?? '').split(';')[0]?.trim() ?? '';
      let body: unknown;
      if (size <= MAX_BODY_BYTES && mediaType.endsWith('json')) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined;
        }
      }
      OBSERVED_ANSWERS.push({ listener, method: req.method ?? '', path: (req.url ?? '').split('?')[0] ?? '', status: res.statusCode, mediaType, body });
    });
    handle(req, res);
  };
}
