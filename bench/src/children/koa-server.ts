/**
 * Baseline: bare Koa (no router, no body parser) answering every request with the
 * run-start-sized JSON body, as the API server sends it (`ctx.body` a JSON string).
 * `node koa-server.js PORT [BODY_BYTES]`: with BODY_BYTES, a JSON body of that size
 * instead. Stops on SIGTERM.
 */
import { createServer } from 'node:http';
import Koa from 'koa';
import { BASELINE_RESPONSE_BODY, jsonBodyOfSize } from '../fixtures.js';

const size = process.argv[3];
const body = size === undefined ? BASELINE_RESPONSE_BODY : jsonBodyOfSize(Number(size));
const app = new Koa();
app.use((ctx) => {
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = body;
});
const server = createServer({ keepAliveTimeout: 5_000 }, app.callback());
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
