/**
 * Preloaded into a server child (`node --import .../count-allocation.js`) by
 * `bench/src/instructions.ts`: when request `SVC_BENCH_ALLOCATION_FROM` arrives
 * (diagnostics channel `http.server.request.start`, counted from 1) it collects garbage,
 * then turns V8's `--trace-gc-nvp` on; when request `SVC_BENCH_ALLOCATION_TO` arrives it
 * collects again and turns the trace off. The child's stdout then holds one line per
 * collection of the requests in between, each with `allocated=<bytes>`: the bytes the heap
 * allocated since the previous collection (every space). Their sum is what those requests
 * allocated, exactly: the collections at both ends close the window. Without them the sum
 * counts whole collections only (one every ~300 run starts here, ~13 MB), and moved by
 * 1.3 KiB a request at 10 000 requests when one more or one fewer fell inside.
 *
 * Why not the sampling heap profiler: it estimates the same total from samples, and its
 * hooks run on the allocation path; the collector's own count costs the requests nothing.
 */
import { subscribe } from 'node:diagnostics_channel';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const from = Number(process.env['SVC_BENCH_ALLOCATION_FROM']);
const to = Number(process.env['SVC_BENCH_ALLOCATION_TO']);
if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to <= from) {
  throw new Error('count-allocation: SVC_BENCH_ALLOCATION_FROM and SVC_BENCH_ALLOCATION_TO must be whole numbers, 1 ≤ FROM < TO');
}

// V8's `gc` function, without starting the child with --expose-gc (the flag must be set
// before a context is made: a new one gets it).
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

let seen = 0;
subscribe('http.server.request.start', () => {
  seen += 1;
  if (seen === from) {
    collect();
    setFlagsFromString('--trace-gc-nvp');
  } else if (seen === to) {
    collect();
    setFlagsFromString('--no-trace-gc-nvp');
  }
});
