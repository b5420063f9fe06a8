/**
 * Baseline: bare `node:http` answering every request with the run-start-sized JSON body.
 * `node node-http-server.js PORT`; stops on SIGTERM.
 */
import { createServer } from 'node:http';
import { BASELINE_RESPONSE_BODY } from '../fixtures.js';

const body = Buffer.from(BASELINE_RESPONSE_BODY);
const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
  req.resume();
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
