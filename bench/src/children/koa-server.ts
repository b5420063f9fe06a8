/**
 * Baseline: bare Koa (no router, no body parser) answering every request with the
 * run-start-sized JSON body, as the API server sends it (`ctx.body` a JSON string).
 * `node koa-server.js PORT [BODY_BYTES]`: with BODY_BYTES, a JSON body of that size
 * instead. `node koa-server.js PORT --answer FILE`: the same-work peer of the index: the
 * body and headers of FILE (`{body, headers}`, the project's answer), plus a fresh
 * `X-Request-Id` per request, as a competent engineer would serve a fixed document.
 * Stops on SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Koa from 'koa';
import { BASELINE_RESPONSE_BODY, jsonBodyOfSize } from '../fixtures.js';

const app = new Koa();
if (process.argv[3] === '--answer') {
  const answer = JSON.parse(readFileSync(process.argv[4] ?? '', 'utf8')) as { body: string; headers: Record<string, string> };
  const body = Buffer.from(answer.body);
  const headers = Object.entries(answer.headers);
  app.use((ctx) => {
    ctx.res.setHeader('X-Request-Id', randomUUID());
    for (const [name, value] of headers) ctx.res.setHeader(name, value);
    ctx.status = 200;
    ctx.body = body;
  });
} else {
  const size = process.argv[3];
  const body = size === undefined ? BASELINE_RESPONSE_BODY : jsonBodyOfSize(Number(size));
  app.use((ctx) => {
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = body;
  });
}
const server = createServer({ keepAliveTimeout: 5_000 }, app.callback());
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
