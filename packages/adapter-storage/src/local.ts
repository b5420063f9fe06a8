/**
 * `@svc/adapter-storage/local`: {@link LocalFileStore} and {@link assertFileKey} without
 * loading the AWS SDK (~3–11 MiB of RSS at start; bench/BENCHMARKS.md "RSS idle"). The same
 * symbols are exported from the package's main entry. Source: docs/CONTRACT.md "Files".
 */
export { assertFileKey } from './file-key.js';
export { LocalFileStore, type LocalFileStoreSettings } from './local-file-store.js';
