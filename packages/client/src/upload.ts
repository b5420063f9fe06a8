/**
 * The bytes of an upload (docs/CONTRACT.md "Files"): a file on disk read twice (a digest
 * pass, then the PUT), a stream spooled to a temporary file first (when its size is not
 * given), or a stream sent once as it comes. Never held whole in memory.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { lookup } from 'mime-types';

/**
 * What {@link SvcClient.uploadFile} sends: the path of a regular file, or a stream of bytes
 * (a `Readable`, or any async iterable of `Uint8Array`; string chunks are sent as UTF-8).
 */
export type UploadSource = string | Readable | AsyncIterable<Uint8Array | string>;

/** The media type declared when neither the caller nor the file name's extension tells one. */
export const FALLBACK_CONTENT_TYPE = 'application/octet-stream';

/**
 * The media type of a file name by its extension (the `mime-types` package, on the
 * mime-db database): `invoice.pdf` → `application/pdf`, `orders.csv` → `text/csv`; an
 * unknown or missing extension → {@link FALLBACK_CONTENT_TYPE}.
 */
export function contentTypeOf(fileName: string): string {
  const type = lookup(fileName);
  return type === false ? FALLBACK_CONTENT_TYPE : type;
}

/** Bytes ready to send: their size (and digest, when known) and how to read them. */
export interface UploadBytes {
  /** Exactly how many bytes {@link UploadBytes.open} yields. */
  readonly sizeBytes: number;
  /** SHA-256 of the bytes, 64 lowercase hex digits, when known before the upload. */
  readonly sha256: string | undefined;
  /** Whether {@link UploadBytes.open} can be called again, so that a failed PUT can be sent again. */
  readonly repeatable: boolean;
  /** The bytes from the start. @throws Error on a second call when not {@link UploadBytes.repeatable}. */
  open(): AsyncIterable<Uint8Array | string>;
  /** Removes what was written for the upload (the spool file); a no-op otherwise. */
  dispose(): Promise<void>;
}

/** SHA-256 (lowercase hex) of the file at `path`, read once as a stream. */
async function digestOfPath(path: string, signal: AbortSignal | undefined): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, signal === undefined ? {} : { signal })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The file at `path`: its size from `stat`, its digest from one streaming pass unless
 * `sha256` is given; read again from the start for each PUT.
 *
 * @throws the `stat` error (`ENOENT`, `EACCES`, ...); TypeError when `path` is not a regular file.
 */
export async function bytesOfPath(path: string, sha256: string | undefined, signal: AbortSignal | undefined): Promise<UploadBytes> {
  const info = await stat(path);
  if (!info.isFile()) throw new TypeError(`${path} is not a regular file`);
  const digest = sha256 ?? (await digestOfPath(path, signal));
  return { sizeBytes: info.size, sha256: digest, repeatable: true, open: () => createReadStream(path), dispose: async () => undefined };
}

/**
 * A stream of unknown size, written to a temporary file (in `os.tmpdir()`, a directory of
 * mode 0700 of its own) while its size and SHA-256 are counted; removed by `dispose`. The
 * disk holds one copy of the upload for as long as it takes.
 *
 * @param sha256 - the caller's declared digest; declared instead of the counted one, so the server checks the caller's claim.
 */
export async function spooledBytes(source: AsyncIterable<Uint8Array | string>, sha256: string | undefined, signal: AbortSignal | undefined): Promise<UploadBytes> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-upload-'));
  const path = join(dir, 'bytes');
  const hash = createHash('sha256');
  let size = 0;
  const dispose = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    await pipeline(
      source,
      async function* count(chunks: AsyncIterable<Uint8Array | string>) {
        for await (const chunk of chunks) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          hash.update(bytes);
          size += bytes.length;
          yield bytes;
        }
      },
      createWriteStream(path, { mode: 0o600 }),
      signal === undefined ? {} : { signal },
    );
  } catch (error) {
    await dispose();
    throw error;
  }
  return { sizeBytes: size, sha256: sha256 ?? hash.digest('hex'), repeatable: true, open: () => createReadStream(path), dispose };
}

/** A stream whose size the caller gave: sent as it comes, once (a failed PUT cannot be sent again). */
export function streamedBytes(source: AsyncIterable<Uint8Array | string>, sizeBytes: number, sha256: string | undefined): UploadBytes {
  let read = false;
  return {
    sizeBytes,
    sha256,
    repeatable: false,
    open() {
      if (read) throw new Error('the upload stream was already read; it cannot be sent again');
      read = true;
      return source;
    },
    dispose: async () => undefined,
  };
}

/**
 * `chunks` as a web stream for `fetch`'s body, pulled only as fast as the connection takes
 * them; `onChunk` is called at each pull (the upload's sign of progress).
 */
export function requestBody(chunks: AsyncIterable<Uint8Array | string>, onChunk: () => void): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      onChunk();
      if (next.done === true) controller.close();
      else controller.enqueue(typeof next.value === 'string' ? Buffer.from(next.value) : next.value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
