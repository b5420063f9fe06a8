/**
 * `@svc/adapter-storage`: the core `FileStore` port. {@link LocalFileStore} keeps files in a
 * local directory (the embedded default; uploads come through the API); {@link S3FileStore}
 * keeps them in S3 or an S3-compatible bucket, and clients PUT their bytes to it through
 * presigned URLs. Both pass `fileStoreContract` of `@svc/core/testing`. Source:
 * docs/CONTRACT.md "Files". `@svc/adapter-storage/local` exports the local store without the
 * AWS SDK.
 */
export * from './local.js';
export { S3_DEFAULT_TIMEOUTS, S3_MAX_PUT_BYTES, S3FileStore, type S3FileStoreSettings } from './s3-file-store.js';
