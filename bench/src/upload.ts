/**
 * The pieces of the upload scenario (`upload-local`): a file of random bytes on disk, its
 * PUT streamed from disk, the `cp` baselines, the server's peak RSS, the filesystem a
 * directory is on. `bench.ts` puts them together around an API server child.
 */
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { open, readFile, realpath, statfs, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createHash, randomFillSync } from 'node:crypto';
import { promisify } from 'node:util';
import type { HttpAnswer } from './load.js';

const execFileAsync = promisify(execFile);

/** 1 MiB. */
export const MIB = 1024 * 1024;

/** The file's first bytes: text that `file-type` sniffs as nothing, so `application/octet-stream` is never contradicted by a chance signature in random bytes. */
const HEAD = Buffer.from('svc-bench upload: random bytes follow\n', 'latin1');

/**
 * Writes `sizeBytes` bytes (a short text head, then random bytes) to `path`, 1 MiB at a
 * time, and fsyncs it, so that no dirty page of it is written back during a measure.
 *
 * @returns the SHA-256 of the bytes, lowercase hex (what the server and the peer must report).
 */
export async function writeRandomFile(path: string, sizeBytes: number): Promise<string> {
  const handle = await open(path, 'wx');
  const hash = createHash('sha256');
  try {
    const chunk = Buffer.allocUnsafe(MIB);
    for (let at = 0; at < sizeBytes; at += chunk.length) {
      const n = Math.min(chunk.length, sizeBytes - at);
      randomFillSync(chunk, 0, n);
      if (at === 0) HEAD.copy(chunk, 0, 0, Math.min(HEAD.length, n));
      hash.update(chunk.subarray(0, n));
      await handle.write(chunk, 0, n, at);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/** Bytes free for this user on the filesystem of `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/**
 * `ext4 on /dev/vda`: the type and source of the mount `dir` is on (the longest mount
 * point of `/proc/self/mounts` that holds it); `unknown` off Linux.
 */
export async function filesystemOf(dir: string): Promise<string> {
  try {
    const real = await realpath(dir);
    const mounts = (await readFile('/proc/self/mounts', 'utf8')).split('\n').map((line) => line.split(' '));
    let best: string[] | undefined;
    for (const m of mounts) {
      const point = m[1]?.replace(/\\040/gu, ' ');
      if (point === undefined || !(real === point || real.startsWith(point.endsWith('/') ? point : `${point}/`))) continue;
      if (best === undefined || point.length > (best[1]?.length ?? 0)) best = m;
    }
    return best === undefined ? 'unknown' : `${best[2] ?? '?'} on ${best[0] ?? '?'}`;
  } catch {
    return 'unknown';
  }
}

/** How the `cp` baseline copies. */
export type CopyMode = 'userspace' | 'kernel';

/**
 * `cp SRC DST` then `sync DST DIR` (coreutils: `fsync` of the copy, then of the directory
 * that holds it, as the server fsyncs its part file and then its folders), timed together
 * in milliseconds. `userspace`: `cp --reflink=never`, which reads and writes 128 KiB at a
 * time through the process (as the server must, from a socket); `kernel`: plain `cp`,
 * which coreutils ≥ 9 turns into `copy_file_range` (an in-kernel copy on ext4, a clone
 * on filesystems with reflinks).
 *
 * @throws Error when `cp` or `sync` fails or is missing.
 */
export async function timedCopy(source: string, destination: string, directory: string, mode: CopyMode): Promise<number> {
  const t0 = performance.now();
  await execFileAsync('cp', mode === 'userspace' ? ['--reflink=never', source, destination] : [source, destination]);
  await execFileAsync('sync', [destination, directory]);
  return performance.now() - t0;
}

/** `sync -f DIR`: writes back the whole filesystem of `dir` (between measures, untimed). */
export async function syncFilesystem(dir: string): Promise<void> {
  await execFileAsync('sync', ['-f', dir]);
}

/**
 * PUTs the file at `path` to `url`, streamed from disk (a read stream piped into the
 * request, `Content-Length` set: nothing is buffered on this side either).
 */
export function putFile(url: string, headers: Readonly<Record<string, string>>, path: string, sizeBytes: number): Promise<HttpAnswer> {
  const target = new URL(url);
  return new Promise<HttpAnswer>((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: 'PUT', headers: { ...headers, 'content-length': String(sizeBytes) }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    const file = createReadStream(path);
    file.once('error', (error) => req.destroy(error));
    file.pipe(req);
  });
}

/** A `kB` field of `/proc/PID/status` in bytes, or `undefined` (not Linux, process gone). */
async function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'mu').exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** The peak RSS {@link watchPeakRss} saw, and how. */
export interface PeakRss {
  readonly peakBytes: number;
  /** `VmHWM` (reset before, read after) and `VmRSS` every 50 ms; or the samples alone when the reset was refused. */
  readonly source: 'VmHWM' | 'VmRSS samples';
  readonly samples: number;
}

/**
 * Watches a process's resident set size until `stop()`: resets its high-water mark
 * (`echo 5 > /proc/PID/clear_refs`, Linux ≥ 4.0, same user) so that `VmHWM` afterwards is
 * the peak of this window alone (not of the process's start-up), and samples `VmRSS`
 * every `intervalMs` as a cross-check; the peak is the larger of the two.
 */
export async function watchPeakRss(pid: number, intervalMs = 50): Promise<{ stop(): Promise<PeakRss> }> {
  let reset = true;
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
  } catch {
    reset = false;
  }
  let peak = (await statusField(pid, 'VmRSS')) ?? 0;
  let samples = 1;
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    void statusField(pid, 'VmRSS').then((rss) => {
      reading = false;
      if (rss === undefined) return;
      samples++;
      peak = Math.max(peak, rss);
    });
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      const rss = await statusField(pid, 'VmRSS');
      if (rss !== undefined) peak = Math.max(peak, rss);
      const hwm = reset ? await statusField(pid, 'VmHWM') : undefined;
      return { peakBytes: Math.max(peak, hwm ?? 0), source: hwm !== undefined ? 'VmHWM' : 'VmRSS samples', samples };
    },
  };
}

/** The median of `values` (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? Number.NaN) + (sorted[mid] ?? Number.NaN)) / 2;
}
