import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a {@link Receiver} got. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** When it arrived (ms since the epoch). */
  readonly at: number;
}

/** A webhook receiver on loopback: answers each request with the next status of its script (then 200). */
export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  close(): Promise<void>;
}

/**
 * Starts a receiver on 127.0.0.1 (a free port).
 * @param statuses - the statuses of the first answers, in order; 200 after them.
 */
export async function startReceiver(statuses: readonly number[] = [], path = '/hooks/svc'): Promise<Receiver> {
  const received: Received[] = [];
  const script = [...statuses];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body, at: Date.now() });
      res.statusCode = script.shift() ?? 200;
      res.end('x'.repeat(10_000));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}?token=query-secret-value`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fresh Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
}
