/**
 * Where the API server and its workers keep files (docs/CONTRACT.md "Files"; docs/decisions.md
 * "File storage"): the records in Redis when `redis_url` is set (shared by every instance),
 * in memory otherwise; the bytes in `files.storage` (a local directory by default, or an
 * S3-compatible bucket; the AWS SDK is imported only then).
 */
import { InMemoryFileCatalog, type FileCatalog, type FileStore, type Logger } from '@svc/core';
import { LocalFileStore } from '@svc/adapter-storage/local';
import type { ServerSettings } from './settings.js';

/** The file catalog and store of a process, and how to close them. */
export interface FileStorage {
  readonly catalog: FileCatalog;
  readonly store: FileStore;
  /** Closes the Redis client of the catalog and the S3 client; bounded by the catalog's QUIT timeout. */
  close(): Promise<void>;
}

/**
 * Opens the file storage `settings` name.
 * @param catalogTimeoutMs - bound of each Redis call of the catalog, ms (the runs' share of `dependency_timeout_ms`).
 * @throws Error when Redis does not answer at start.
 */
export async function openFileStorage(settings: ServerSettings, logger: Logger, catalogTimeoutMs: number): Promise<FileStorage> {
  const storage = settings.files.storage;
  const store =
    storage.kind === 'local'
      ? new LocalFileStore({ directory: storage.directory })
      : new (await import('@svc/adapter-storage')).S3FileStore({
          ...(storage.endpoint !== undefined ? { endpoint: storage.endpoint } : {}),
          region: storage.region,
          bucket: storage.bucket,
          keyPrefix: storage.keyPrefix,
          forcePathStyle: storage.forcePathStyle,
          ...(storage.credentials !== undefined ? { credentials: storage.credentials } : {}),
        });
  const closeStore = async (): Promise<void> => {
    if (!(store instanceof LocalFileStore)) await store.close();
  };
  if (settings.redisUrl === undefined) return { catalog: new InMemoryFileCatalog(), store, close: closeStore };
  const { RedisFileCatalog } = await import('@svc/adapter-queue');
  let catalog: Awaited<ReturnType<typeof RedisFileCatalog.connect>>;
  try {
    catalog = await RedisFileCatalog.connect(settings.redisUrl, { prefix: settings.redisPrefix, operationTimeoutMs: catalogTimeoutMs, logger });
  } catch (error) {
    await closeStore();
    throw error;
  }
  return {
    catalog,
    store,
    close: async () => {
      await Promise.all([catalog.close(), closeStore()]);
    },
  };
}
