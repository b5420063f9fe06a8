import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { DependencyUnavailableError } from '../domain/errors.js';
import type { Page, PageRequest } from '../domain/page.js';
import { fileListKey, MAX_FILE_RUN_IDS, type FileStatus, type StoredFile } from '../domain/stored-file.js';
import type { FileCatalog, FileListFilter } from '../ports/file-catalog.js';
import { FILE_HEAD_BYTES, type FileContentFacts, type FileStore, type FileWriteOutcome } from '../ports/file-store.js';

/**
 * File records in this process's memory: the embedded default and the fake of tests.
 * Not shared between processes (several instances need adapter-queue's
 * `RedisFileCatalog`). Passes `fileCatalogContract`. Source: docs/CONTRACT.md "Files".
 */
export class InMemoryFileCatalog implements FileCatalog {
  private readonly files = new Map<string, StoredFile>();

  /** Files held now, whatever their status. */
  get size(): number {
    return this.files.size;
  }

  create(file: StoredFile): Promise<void> {
    if (this.files.has(file.fileKey)) return Promise.reject(new Error('a file with this key exists'));
    this.files.set(file.fileKey, file);
    return Promise.resolve();
  }

  get(fileKey: string): Promise<StoredFile | undefined> {
    return Promise.resolve(this.files.get(fileKey));
  }

  replace(file: StoredFile, expected: FileStatus): Promise<{ readonly applied: boolean; readonly file: StoredFile | undefined }> {
    const current = this.files.get(file.fileKey);
    if (current?.status !== expected) return Promise.resolve({ applied: false, file: current });
    const next = { ...file, runIds: current.runIds };
    this.files.set(file.fileKey, next);
    return Promise.resolve({ applied: true, file: next });
  }

  addRun(fileKey: string, runId: string, expiresAt: Date): Promise<StoredFile | undefined> {
    const current = this.files.get(fileKey);
    if (current?.status !== 'ready') return Promise.resolve(undefined);
    const next: StoredFile = {
      ...current,
      runIds: [...current.runIds, runId].slice(-MAX_FILE_RUN_IDS),
      expiresAt: expiresAt > current.expiresAt ? expiresAt : current.expiresAt,
    };
    this.files.set(fileKey, next);
    return Promise.resolve(next);
  }

  list(accountId: string, filter: FileListFilter, page: PageRequest): Promise<Page<StoredFile>> {
    const sorted = [...this.files.values()]
      .filter((file) => file.accountId === accountId && (filter.status === undefined || file.status === filter.status))
      .map((file) => ({ key: fileListKey(file), file }))
      .filter(({ key }) => page.after === undefined || Buffer.compare(Buffer.from(key), Buffer.from(page.after)) > 0)
      .sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
    const items = sorted.slice(0, page.limit);
    const last = items.at(-1);
    return Promise.resolve(sorted.length > page.limit && last !== undefined ? { items: items.map((i) => i.file), next: last.key } : { items: items.map((i) => i.file) });
  }

  remove(fileKey: string): Promise<void> {
    this.files.delete(fileKey);
    return Promise.resolve();
  }

  due(now: Date, limit: number): Promise<readonly StoredFile[]> {
    const due = [...this.files.values()]
      .filter((file) => (file.status === 'pending' || file.status === 'ready') && file.expiresAt <= now)
      .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime());
    return Promise.resolve(due.slice(0, limit));
  }
}

interface Held {
  uploaded?: Buffer;
  committed?: Buffer;
}

/**
 * File bytes in this process's memory: the fake of tests and of embedders who keep few,
 * small files (every byte is held in memory; the API server uses adapter-storage's
 * `LocalFileStore` or `S3FileStore`). Uploads go through the API (`presignUpload` is
 * absent). `unavailable = true` makes every call reject with
 * `DependencyUnavailableError('file_storage')`, as a lost storage does. Passes
 * `fileStoreContract`.
 */
export class InMemoryFileStore implements FileStore {
  private readonly held = new Map<string, Held>();
  /** When true, every call rejects as an unreachable storage does. */
  unavailable = false;

  async write(fileKey: string, body: AsyncIterable<Uint8Array>, sizeBytes: number, signal?: AbortSignal): Promise<FileWriteOutcome> {
    this.check();
    const chunks: Buffer[] = [];
    let received = 0;
    for await (const chunk of body) {
      signal?.throwIfAborted();
      if (received + chunk.length > sizeBytes) return { kind: 'too_large' };
      received += chunk.length;
      chunks.push(Buffer.from(chunk));
    }
    signal?.throwIfAborted();
    if (received < sizeBytes) return { kind: 'too_short' };
    const bytes = Buffer.concat(chunks);
    this.held.set(fileKey, { ...this.held.get(fileKey), uploaded: bytes });
    return { kind: 'stored', facts: factsOf(bytes) };
  }

  async examine(fileKey: string): Promise<FileContentFacts | undefined> {
    this.check();
    const held = this.held.get(fileKey);
    const bytes = held?.uploaded ?? held?.committed;
    return bytes === undefined ? undefined : factsOf(bytes);
  }

  async commit(fileKey: string): Promise<void> {
    this.check();
    const held = this.held.get(fileKey);
    if (held?.uploaded === undefined) {
      if (held?.committed !== undefined) return;
      throw new Error('nothing was uploaded for this file');
    }
    this.held.set(fileKey, { committed: held.uploaded });
  }

  async open(fileKey: string): Promise<Readable | undefined> {
    this.check();
    const bytes = this.held.get(fileKey)?.committed;
    return bytes === undefined ? undefined : Readable.from([bytes]);
  }

  async remove(fileKey: string): Promise<void> {
    this.check();
    this.held.delete(fileKey);
  }

  private check(): void {
    if (this.unavailable) throw new DependencyUnavailableError('file_storage');
  }
}

function factsOf(bytes: Buffer): FileContentFacts {
  return { sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), head: new Uint8Array(bytes.subarray(0, FILE_HEAD_BYTES)) };
}
