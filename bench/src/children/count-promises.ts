/**
 * Preloaded into a server child (`node --import .../count-promises.js`) by
 * `bench/src/instructions.ts`: counts the promises the process creates (async_hooks
 * `PROMISE` inits: every `new Promise`, `then`, async function call and `await`) and the
 * HTTP requests it receives (diagnostics channel `http.server.request.start`), from the
 * `SVC_BENCH_PROMISE_WARMUP`-th request on (default 0), and writes
 * `{"requests": n, "promises": n}` to the file `SVC_BENCH_PROMISE_FILE` when the process exits.
 * A promise hook slows every promise down, so a counted server is never timed.
 */
import { createHook } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';

const file = process.env['SVC_BENCH_PROMISE_FILE'];
const warmup = Number(process.env['SVC_BENCH_PROMISE_WARMUP'] ?? '0');
if (file === undefined) throw new Error('count-promises: SVC_BENCH_PROMISE_FILE is not set');

let seen = 0;
let requests = 0;
let promises = 0;
subscribe('http.server.request.start', () => {
  seen += 1;
  if (seen > warmup) requests += 1;
});
createHook({
  init(_id, type) {
    if (type === 'PROMISE' && seen > warmup) promises += 1;
  },
}).enable();
process.once('exit', () => {
  writeFileSync(file, JSON.stringify({ requests, promises }));
});
