import { RunFailedError } from '../domain/errors.js';
import type { Run } from '../domain/run.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import type { FileStore } from '../ports/file-store.js';
import type { OpenedRunFile, RunFiles, RunFileSource } from '../ports/run-processor.js';

function fileKeysOf(run: Run): ReadonlySet<string> {
  if (run.request.kind !== 'files') return new Set();
  return new Set([...run.request.files, ...run.request.backgroundFiles].map((file) => file.file_key));
}

/**
 * The files of runs, read from a file catalog and store: what the worker gives each
 * processor as `context.files`. A processor opens only its run's files (named in its
 * request), of its run's account, `ready`. Source: docs/CONTRACT.md "Files".
 */
export class StoredRunFiles implements RunFileSource {
  constructor(private readonly ports: { readonly catalog: FileCatalog; readonly store: FileStore }) {}

  /** The files of `run`. */
  forRun(run: Run): RunFiles {
    const keys = fileKeysOf(run);
    return {
      open: async (fileKey: string): Promise<OpenedRunFile> => {
        if (!keys.has(fileKey)) throw new RunFailedError(`The file ${fileKey} is not one of this run's files.`);
        const file = await this.ports.catalog.get(fileKey);
        if (file?.accountId !== run.accountId || file.status !== 'ready' || file.sha256 === undefined) throw new RunFailedError(`The file ${fileKey} is no longer available.`);
        const stream = await this.ports.store.open(fileKey);
        if (stream === undefined) throw new RunFailedError(`The file ${fileKey} is no longer available.`);
        return { fileKey, fileName: file.fileName, contentType: file.contentType, sizeBytes: file.sizeBytes, sha256: file.sha256, stream };
      },
    };
  }
}

/** The files of a worker that was given no file storage: every `open` fails the run, saying so. */
export const NO_RUN_FILES: RunFileSource = {
  forRun: () => ({ open: (fileKey) => Promise.reject(new RunFailedError(`The file ${fileKey} cannot be read: this worker has no file storage.`)) }),
};
