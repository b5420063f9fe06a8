/**
 * Preloaded into a server child (`node --import .../count-allocation.js`) by
 * `bench/src/instructions.ts`: turns V8's `--trace-gc-nvp` on when request
 * `SVC_BENCH_ALLOCATION_FROM` arrives and off when request `SVC_BENCH_ALLOCATION_TO`
 * arrives (diagnostics channel `http.server.request.start`, counted from 1), so that the
 * child's stdout holds one line per garbage collection of the requests in between, each
 * with `allocated=<bytes>`: the bytes the heap allocated since the previous collection
 * (every space). Their sum over the counted requests is what the requests allocated, to
 * within one collection's share at each end (a collection every ~300 run starts here).
 *
 * Why not the sampling heap profiler: it estimates the same total from samples, and its
 * hooks run on the allocation path; the collector's own count costs the requests nothing.
 */
import { subscribe } from 'node:diagnostics_channel';
import { setFlagsFromString } from 'node:v8';

const from = Number(process.env['SVC_BENCH_ALLOCATION_FROM']);
const to = Number(process.env['SVC_BENCH_ALLOCATION_TO']);
if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to <= from) {
  throw new Error('count-allocation: SVC_BENCH_ALLOCATION_FROM and SVC_BENCH_ALLOCATION_TO must be whole numbers, 1 ≤ FROM < TO');
}

let seen = 0;
subscribe('http.server.request.start', () => {
  seen += 1;
  if (seen === from) setFlagsFromString('--trace-gc-nvp');
  else if (seen === to) setFlagsFromString('--no-trace-gc-nvp');
});
