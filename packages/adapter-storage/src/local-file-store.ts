import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DependencyUnavailableError, type FileContentFacts, type FileStore, type FileWriteOutcome } from '@svc/core';
import { untilDoneOrAborted } from './abort.js';
import { assertFileKey, assertSizeBytes } from './file-key.js';
import { BodyReadError, BodySizeError, ContentMeter, measuredBody } from './measured-body.js';

/** Settings of a {@link LocalFileStore}. */
export interface LocalFileStoreSettings {
  /**
   * The directory that holds the files (made at first use, with `uploads/` and `files/`
   * inside). Keep it on one filesystem: renames between its folders must be atomic.
   */
  readonly directory: string;
}

/**
 * The facts of a file, kept beside it (`<key>.json`), with the identity of the file they
 * were measured of: a file that is not that one (a crash between two renames, an earlier
 * upload's leftovers) is measured again instead of being believed.
 */
interface Sidecar {
  readonly sizeBytes: number;
  readonly sha256: string;
  /** The head, base64. */
  readonly head: string;
  /** Inode number, as a decimal string. */
  readonly ino: string;
  /** Last modification, nanoseconds since the epoch, as a decimal string (kept by a rename). */
  readonly mtimeNs: string;
}

/** The error codes that mean "not there" rather than "the storage is in trouble". */
const ABSENT = new Set(['ENOENT']);

/**
 * The core `FileStore` on a local directory: the embedded default (one machine, or a
 * directory every instance mounts). Uploads come through the API, which calls
 * {@link LocalFileStore.write} (`presignUpload` is absent).
 *
 * Layout: `uploads/<key>` (the uploaded bytes) and `files/<key>` (the committed ones), each
 * with a `<key>.json` sidecar of its facts; a write in progress is
 * `uploads/<key>.<random>.part`. A write streams to its part file (never holding the body),
 * hashing as it goes; the part is fsynced and renamed over `uploads/<key>` only when it
 * holds exactly the declared size, so a reader sees the old upload or the new one, never
 * half of one. `commit` is a rename into `files/`. File keys are checked against
 * `file_` + 32 hex digits before they touch a path.
 *
 * Errors: a full disk, a permission or an I/O error (any system error but "no such file")
 * rejects with core `DependencyUnavailableError('file_storage')`, its `cause` the `fs`
 * error, and leaves no part file behind. Local calls need no timeout. Part files of a
 * process that died mid-write stay in `uploads/` (names ending `.part`); they are never
 * read and can be deleted by age. Passes `fileStoreContract`. Source: docs/CONTRACT.md "Files".
 */
export class LocalFileStore implements FileStore {
  private readonly uploads: string;
  private readonly files: string;
  private made: Promise<void> | undefined;

  /** @param settings - where the files live ({@link LocalFileStoreSettings}). */
  constructor(settings: LocalFileStoreSettings) {
    const root = resolve(settings.directory);
    this.uploads = join(root, 'uploads');
    this.files = join(root, 'files');
  }

  /**
   * Streams `body` to a part file and keeps it as the upload of `fileKey` when it holds
   * exactly `sizeBytes` bytes (see the class's doc).
   *
   * @returns `stored` with the facts, or `too_large` / `too_short` (nothing kept; an earlier upload stays).
   * @throws RangeError for a malformed key or size; `signal.reason` when aborted; what
   *   `body` throws, as it is; DependencyUnavailableError when the disk is full or failing.
   */
  async write(fileKey: string, body: AsyncIterable<Uint8Array>, sizeBytes: number, signal?: AbortSignal): Promise<FileWriteOutcome> {
    assertFileKey(fileKey);
    assertSizeBytes(sizeBytes);
    signal?.throwIfAborted();
    const part = join(this.uploads, `${fileKey}.${randomBytes(8).toString('hex')}.part`);
    const sidecarPart = `${part}.json`;
    let out: WriteStream | undefined;
    try {
      await this.ensureFolders();
      const meter = new ContentMeter();
      // flush: the bytes are on disk (fsync) before the rename makes them the upload.
      out = createWriteStream(part, { flags: 'wx', flush: true });
      await untilDoneOrAborted(pipeline(measuredBody(body, sizeBytes, meter), out, signal === undefined ? {} : { signal }), signal);
      signal?.throwIfAborted();
      const facts = meter.facts();
      await writeSidecar(sidecarPart, part, facts);
      // The data first: a moment with the new data and the old sidecar is caught by the
      // sidecar's inode check (examine measures the file again), never believed.
      await rename(part, join(this.uploads, fileKey));
      await rename(sidecarPart, join(this.uploads, `${fileKey}.json`));
      await syncDirectory(this.uploads);
      return { kind: 'stored', facts };
    } catch (error) {
      // The part file may still be opening: delete it once its stream has closed.
      if (out !== undefined && !out.closed) {
        const closing = out;
        await new Promise<void>((resolve) => {
          closing.once('close', () => resolve());
          closing.destroy();
        });
      }
      await Promise.all([rm(part, { force: true }), rm(sidecarPart, { force: true })]).catch(() => undefined);
      if (error instanceof BodySizeError) return { kind: error.kind };
      if (signal?.aborted === true) throw signal.reason;
      if (error instanceof BodyReadError) throw error.cause;
      throw storageError(error);
    }
  }

  /**
   * Reads the facts of the uploaded (else the committed) bytes from their sidecar; measures
   * the file again when the sidecar is missing or describes another file.
   *
   * @returns the facts, or `undefined` when there are no bytes.
   * @throws RangeError for a malformed key; DependencyUnavailableError when the disk fails.
   */
  async examine(fileKey: string): Promise<FileContentFacts | undefined> {
    assertFileKey(fileKey);
    try {
      return (await factsOf(this.uploads, fileKey)) ?? (await factsOf(this.files, fileKey));
    } catch (error) {
      throw storageError(error);
    }
  }

  /**
   * Renames the upload (and its sidecar) into `files/`, atomically replacing what was
   * committed. A second commit finds nothing uploaded and the bytes committed: harmless.
   *
   * @throws Error when nothing was uploaded or committed; RangeError for a malformed key;
   *   DependencyUnavailableError when the disk fails.
   */
  async commit(fileKey: string): Promise<void> {
    assertFileKey(fileKey);
    try {
      await this.ensureFolders();
      try {
        await rename(join(this.uploads, fileKey), join(this.files, fileKey));
      } catch (error) {
        if (!isCode(error, ABSENT)) throw error;
        if (!(await exists(join(this.files, fileKey)))) throw new Error('nothing was uploaded for this file');
      }
      // The sidecar follows its file (its inode check tells examine when it lags behind).
      await rename(join(this.uploads, `${fileKey}.json`), join(this.files, `${fileKey}.json`)).catch((error: unknown) => {
        if (!isCode(error, ABSENT)) throw error;
      });
      await syncDirectory(this.files);
    } catch (error) {
      throw storageError(error);
    }
  }

  /**
   * @returns the committed bytes as a stream (opened before returning: removing or
   *   replacing the file later does not cut a reader short), or `undefined` when there are
   *   none. A read error mid-stream destroys it with DependencyUnavailableError.
   * @throws RangeError for a malformed key; DependencyUnavailableError when the disk fails.
   */
  async open(fileKey: string): Promise<Readable | undefined> {
    assertFileKey(fileKey);
    let handle;
    try {
      handle = await open(join(this.files, fileKey), 'r');
    } catch (error) {
      if (isCode(error, ABSENT)) return undefined;
      throw storageError(error);
    }
    return mapStreamErrors(handle.createReadStream());
  }

  /**
   * Deletes the uploaded and the committed bytes and their sidecars; what is not there is skipped.
   *
   * @throws RangeError for a malformed key; DependencyUnavailableError when the disk fails.
   */
  async remove(fileKey: string): Promise<void> {
    assertFileKey(fileKey);
    try {
      for (const dir of [this.uploads, this.files]) {
        await rm(join(dir, fileKey), { force: true });
        await rm(join(dir, `${fileKey}.json`), { force: true });
      }
    } catch (error) {
      throw storageError(error);
    }
  }

  private ensureFolders(): Promise<void> {
    this.made ??= (async () => {
      await mkdir(this.uploads, { recursive: true });
      await mkdir(this.files, { recursive: true });
    })();
    // A failure (a disk not mounted yet) is tried again by the next call.
    return this.made.catch((error: unknown) => {
      this.made = undefined;
      throw error;
    });
  }
}

/** The facts of `dir/<key>`, from its sidecar when it describes that very file; `undefined` when there is no file. */
async function factsOf(dir: string, fileKey: string): Promise<FileContentFacts | undefined> {
  const path = join(dir, fileKey);
  let identity;
  try {
    identity = await stat(path, { bigint: true });
  } catch (error) {
    if (isCode(error, ABSENT)) return undefined;
    throw error;
  }
  const sidecar = await readSidecar(join(dir, `${fileKey}.json`));
  if (sidecar !== undefined && sidecar.ino === identity.ino.toString() && sidecar.mtimeNs === identity.mtimeNs.toString() && BigInt(sidecar.sizeBytes) === identity.size) {
    return { sizeBytes: sidecar.sizeBytes, sha256: sidecar.sha256, head: new Uint8Array(Buffer.from(sidecar.head, 'base64')) };
  }
  // No sidecar of this file (a crash between renames): measure it, streaming.
  const meter = new ContentMeter();
  try {
    for await (const chunk of createReadStream(path)) meter.update(chunk as Buffer);
  } catch (error) {
    if (isCode(error, ABSENT)) return undefined;
    throw error;
  }
  return meter.facts();
}

/** The sidecar at `path`, or `undefined` when it is missing or unreadable as one. */
async function readSidecar(path: string): Promise<Sidecar | undefined> {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isCode(error, ABSENT)) return undefined;
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<Sidecar>;
    return typeof value.sha256 === 'string' && typeof value.sizeBytes === 'number' && typeof value.head === 'string' && typeof value.ino === 'string' && typeof value.mtimeNs === 'string'
      ? (value as Sidecar)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the sidecar of the file at `of` to `path` (a temporary name; the caller renames it into place). */
async function writeSidecar(path: string, of: string, facts: FileContentFacts): Promise<void> {
  const identity = await stat(of, { bigint: true });
  const sidecar: Sidecar = {
    sizeBytes: facts.sizeBytes,
    sha256: facts.sha256,
    head: Buffer.from(facts.head).toString('base64'),
    ino: identity.ino.toString(),
    mtimeNs: identity.mtimeNs.toString(),
  };
  await writeFile(path, JSON.stringify(sidecar), { flag: 'wx', flush: true });
}

/** fsync of a directory, so that a rename in it survives a power loss. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isCode(error, ABSENT)) return false;
    throw error;
  }
}

function isCode(error: unknown, codes: ReadonlySet<string>): boolean {
  return error instanceof Error && codes.has((error as NodeJS.ErrnoException).code ?? '');
}

/**
 * A system error of the filesystem (ENOSPC, EDQUOT, EACCES, EPERM, EIO, EROFS, EMFILE, ...)
 * as the core's DependencyUnavailableError; anything else (a bug, our own Error) as it is.
 */
function storageError(error: unknown): unknown {
  if (error instanceof DependencyUnavailableError) return error;
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return typeof code === 'string' && /^E[A-Z]+$/u.test(code) ? new DependencyUnavailableError('file_storage', { cause: error }) : error;
}

/** `source` through a PassThrough that turns a read error into DependencyUnavailableError. */
function mapStreamErrors(source: Readable): Readable {
  const out = new PassThrough();
  source.on('error', (error) => out.destroy(storageError(error) as Error));
  out.on('close', () => source.destroy());
  source.pipe(out);
  return out;
}
