import { PassThrough, Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DependencyUnavailableError, type FileContentFacts, type FileStore, type FileWriteOutcome, type UploadTarget } from '@svc/core';
import { untilDoneOrAborted } from './abort.js';
import { assertFileKey, assertSizeBytes } from './file-key.js';
import { BodyReadError, BodySizeError, ContentMeter, measuredBody } from './measured-body.js';

/** The largest object one PUT (a presigned upload, or the one part of {@link S3FileStore.write}) may hold: 5 GiB. */
export const S3_MAX_PUT_BYTES = 5 * 1024 ** 3;

/** The longest a SigV4 presigned URL may live: 7 days, in seconds. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/** How many examined versions (file key → ETag) {@link S3FileStore} remembers for `commit`. */
const PINNED_MAX = 10_000;

/** A logger that drops everything the SDK would log. */
const SILENT_LOGGER = { debug: (): void => undefined, info: (): void => undefined, warn: (): void => undefined, error: (): void => undefined };

/** Settings of an {@link S3FileStore}. */
export interface S3FileStoreSettings {
  /**
   * Endpoint URL of an S3-compatible service (MinIO, R2, s3rver: `http://127.0.0.1:4568`);
   * absent: AWS S3 of `region`.
   */
  readonly endpoint?: string;
  /** Region the requests are signed for (`us-east-1` for most S3-compatible services). */
  readonly region: string;
  /** Bucket of the files (it must exist). */
  readonly bucket: string;
  /** Access key; absent: the SDK's default chain (environment, profile, instance role). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
  /** Prepended to every object name, e.g. `svc/` (default none): objects are `<prefix>uploads/<key>` and `<prefix>files/<key>`. */
  readonly keyPrefix?: string;
  /** Addresses the bucket as `endpoint/bucket/key` instead of `bucket.endpoint/key` (MinIO, s3rver); default false. */
  readonly forcePathStyle?: boolean;
  /** Milliseconds a TCP (and TLS) connection may take to open; default {@link S3_DEFAULT_TIMEOUTS}. */
  readonly connectTimeoutMs?: number;
  /**
   * Milliseconds from sending a request to its response's headers; default
   * {@link S3_DEFAULT_TIMEOUTS}. Not applied to the streamed part of `write`, whose
   * duration is the uploading client's (the idle timeout bounds it).
   */
  readonly requestTimeoutMs?: number;
  /** Milliseconds a connection may stay silent mid-request or mid-body (a stalled download); default {@link S3_DEFAULT_TIMEOUTS}. */
  readonly idleTimeoutMs?: number;
  /** Attempts of each request, the first included (a streamed part is never sent twice); default 2. */
  readonly maxAttempts?: number;
}

/**
 * Default timeouts of {@link S3FileStore}, in milliseconds. Connecting: 5 s, where a
 * reachable endpoint answers in milliseconds, so 5 s means it is down or filtered. Response
 * headers: 10 s, well above S3's first-byte latency (tens of milliseconds, a second or two
 * at its worst) and below what a client of the API waits for `complete` (with one retry, a
 * lost store answers 503 in about 20 s). Idle: 10 s of silence on a connection mid-body.
 */
export const S3_DEFAULT_TIMEOUTS = { connectTimeoutMs: 5_000, requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 } as const;

/**
 * The core `FileStore` on S3 or an S3-compatible service, with the AWS SDK v3: clients PUT
 * their bytes straight to the bucket through {@link S3FileStore.presignUpload}.
 *
 * Objects: `<prefix>uploads/<key>` (uploaded, unchecked) and `<prefix>files/<key>`
 * (committed). `write` (bytes that come through the API after all) is one multipart upload
 * of one streamed part: nothing is visible until it completes, so a too long, too short or
 * aborted body leaves the earlier upload as it was, on S3 and on services whose single PUT
 * is not atomic. `examine` reads the object as a stream and measures it (never holding it):
 * a client may PUT again through its URL until it expires, so facts cached beside an object
 * could describe other bytes; `examine` runs once per file (on `complete`). `commit` is a
 * CopyObject (server side, up to 5 GiB) + DeleteObject; it copies only the version that
 * `examine` (or `write`) of this store measured (`CopySourceIfMatch` on its ETag), so bytes
 * PUT again between the check and the commit are never committed unchecked.
 *
 * Errors: unreachable, timed out, 5xx, throttled, or refused (access denied, no such
 * bucket) reject with core `DependencyUnavailableError('file_storage')`, whose `cause`
 * names the operation, the error's name, code and HTTP status, never a host or a key;
 * a missing object answers `undefined`. Call {@link S3FileStore.close} at shutdown.
 * Passes `fileStoreContract` (against s3rver, and a real bucket). Source: docs/CONTRACT.md "Files".
 */
export class S3FileStore implements FileStore {
  private readonly client: S3Client;
  /** One attempt only: a streamed body cannot be sent a second time. */
  private readonly streamingClient: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  /** ETag of the upload `examine` or `write` measured last, by file key. */
  private readonly pinned = new Map<string, string>();

  /**
   * @param settings - where the bucket is and the timeouts ({@link S3FileStoreSettings}).
   * @throws RangeError for an empty bucket or region, a key prefix starting with `/`, or a
   *   timeout or attempt count that is not a positive integer.
   */
  constructor(settings: S3FileStoreSettings) {
    if (settings.bucket.length === 0 || settings.region.length === 0) throw new RangeError('an S3 file store needs a bucket and a region');
    const prefix = settings.keyPrefix ?? '';
    if (prefix.startsWith('/')) throw new RangeError('keyPrefix must not start with /');
    const timeouts = { ...S3_DEFAULT_TIMEOUTS, ...definedOnly(settings) };
    const maxAttempts = settings.maxAttempts ?? 2;
    for (const value of [timeouts.connectTimeoutMs, timeouts.requestTimeoutMs, timeouts.idleTimeoutMs, maxAttempts]) {
      if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError('S3 timeouts and maxAttempts are positive integers');
    }
    this.bucket = settings.bucket;
    this.prefix = prefix;
    const config = (attempts: number): S3ClientConfig => ({
      region: settings.region,
      ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
      ...(settings.credentials === undefined ? {} : { credentials: { ...settings.credentials } }),
      forcePathStyle: settings.forcePathStyle ?? false,
      maxAttempts: attempts,
      // Failures reach the caller as errors; without a logger the SDK writes some to the console.
      logger: SILENT_LOGGER,
      // Checksums only where S3 requires them: otherwise presigned URLs carry a checksum
      // of an empty body, and streamed bodies go out aws-chunked, which S3-compatible
      // services (s3rver, older MinIO) do not read. The SHA-256 is ours anyway.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: {
        connectionTimeout: timeouts.connectTimeoutMs,
        requestTimeout: timeouts.requestTimeoutMs,
        throwOnRequestTimeout: true,
        socketTimeout: timeouts.idleTimeoutMs,
      },
    });
    this.client = new S3Client(config(maxAttempts));
    this.streamingClient = new S3Client(config(1));
  }

  /**
   * Presigns a PutObject of `<prefix>uploads/<key>` that S3 accepts only with exactly
   * these `Content-Type` and `Content-Length` headers (both are signed), until `expiresAt`.
   * No request is sent.
   *
   * @param expiresAt - when the URL stops working: 1 s to 7 days from now (SigV4's limit).
   * @returns the URL and the headers the client must send as they are.
   * @throws RangeError for a malformed key, a content type with control characters, a size
   *   over {@link S3_MAX_PUT_BYTES}, or an expiry out of range; DependencyUnavailableError
   *   when the credentials cannot be had.
   */
  readonly presignUpload = async (file: { readonly fileKey: string; readonly contentType: string; readonly sizeBytes: number }, expiresAt: Date): Promise<UploadTarget> => {
    assertFileKey(file.fileKey);
    assertSizeBytes(file.sizeBytes);
    if (file.sizeBytes > S3_MAX_PUT_BYTES) throw new RangeError('one S3 PUT holds at most 5 GiB');
    if (file.contentType.length === 0 || /[\u0000-\u001f\u007f]/u.test(file.contentType)) throw new RangeError('a content type is a non-empty header value');
    const expiresIn = Math.ceil((expiresAt.getTime() - Date.now()) / 1000);
    if (!(expiresIn >= 1 && expiresIn <= MAX_PRESIGN_SECONDS)) throw new RangeError('an upload URL expires 1 s to 7 days from now');
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: this.uploadKey(file.fileKey), ContentType: file.contentType, ContentLength: file.sizeBytes });
    try {
      const url = await getSignedUrl(this.client, command, { expiresIn, signableHeaders: new Set(['content-type', 'content-length']) });
      return { url, method: 'PUT', headers: { 'Content-Type': file.contentType, 'Content-Length': String(file.sizeBytes) } };
    } catch (error) {
      throw unavailable('presign PutObject', error);
    }
  };

  /**
   * Streams `body` as the one part of a multipart upload of `<prefix>uploads/<key>`, and
   * completes it only when it held exactly `sizeBytes` bytes (else aborts it). Not
   * retried: a streamed body cannot be sent twice. A body that sends nothing for
   * `idleTimeoutMs` fails the part as a silent S3 would: bound slow uploads below that
   * in the layer that reads the request (it aborts through `signal`).
   *
   * @returns `stored` with the facts, or `too_large` / `too_short` (nothing kept; an earlier upload stays).
   * @throws RangeError for a malformed key, or a size over {@link S3_MAX_PUT_BYTES};
   *   `signal.reason` when aborted; what `body` throws, as it is;
   *   DependencyUnavailableError when S3 fails.
   */
  async write(fileKey: string, body: AsyncIterable<Uint8Array>, sizeBytes: number, signal?: AbortSignal): Promise<FileWriteOutcome> {
    assertFileKey(fileKey);
    assertSizeBytes(sizeBytes);
    if (sizeBytes > S3_MAX_PUT_BYTES) throw new RangeError('one S3 part holds at most 5 GiB');
    signal?.throwIfAborted();
    const Key = this.uploadKey(fileKey);
    let uploadId: string | undefined;
    try {
      uploadId = (await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key }), signalOption(signal))).UploadId;
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      throw unavailable('CreateMultipartUpload', error);
    }
    if (uploadId === undefined) throw unavailable('CreateMultipartUpload', new Error('no UploadId'));

    const meter = new ContentMeter();
    const stop = new AbortController();
    let bodyFailure: unknown;
    let bodySettled!: () => void;
    const settled = new Promise<void>((resolve) => (bodySettled = resolve));
    async function* tracked(): AsyncGenerator<Uint8Array> {
      try {
        yield* measuredBody(body, sizeBytes, meter);
      } catch (error) {
        bodyFailure = error;
        // The request promised sizeBytes bytes: cut it rather than let it wait for them.
        stop.abort(error);
        throw error;
      } finally {
        bodySettled();
      }
    }
    const source = Readable.from(tracked(), { objectMode: false });
    // The SDK pipes the body without listening for its errors: they are bodyFailure's.
    source.on('error', () => undefined);
    try {
      const part = await this.streamingClient.send(
        new UploadPartCommand({ Bucket: this.bucket, Key, UploadId: uploadId, PartNumber: 1, Body: source, ContentLength: sizeBytes }),
        // No response-time bound: the part takes as long as the client takes to send it.
        { abortSignal: signal === undefined ? stop.signal : AbortSignal.any([stop.signal, signal]), requestTimeout: 0 },
      );
      // S3 may answer once it has sizeBytes bytes: whether more followed is the body's to tell.
      await untilDoneOrAborted(settled, signal);
      if (bodyFailure !== undefined) throw bodyFailure;
      signal?.throwIfAborted();
      const done = await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] } }),
        signalOption(signal),
      );
      if (done.ETag !== undefined) this.pin(fileKey, done.ETag);
      return { kind: 'stored', facts: meter.facts() };
    } catch (error) {
      source.destroy();
      await this.abandon(Key, uploadId);
      const failure = bodyFailure ?? error;
      if (failure instanceof BodySizeError) return { kind: failure.kind };
      if (signal?.aborted === true) throw signal.reason;
      if (failure instanceof BodyReadError) throw failure.cause;
      throw unavailable('multipart upload', failure);
    }
  }

  /**
   * Measures the uploaded (else the committed) object, streaming it through SHA-256 (one
   * GET of the whole object; nothing is cached: see the class's doc).
   *
   * @returns the facts, or `undefined` when neither object exists.
   * @throws RangeError for a malformed key; DependencyUnavailableError when S3 fails.
   */
  async examine(fileKey: string): Promise<FileContentFacts | undefined> {
    assertFileKey(fileKey);
    const uploaded = await this.measure(this.uploadKey(fileKey));
    if (uploaded !== undefined) {
      if (uploaded.etag !== undefined) this.pin(fileKey, uploaded.etag);
      return uploaded.facts;
    }
    return (await this.measure(this.fileKey(fileKey)))?.facts;
  }

  /**
   * Copies the upload over `<prefix>files/<key>` (atomic: a reader gets the old object or
   * the new) and deletes the upload. A second commit finds no upload and the file: harmless.
   *
   * @throws Error when nothing was uploaded or committed, or when the upload was replaced
   *   after this store last measured it (examine it again); RangeError for a malformed key;
   *   DependencyUnavailableError when S3 fails.
   */
  async commit(fileKey: string): Promise<void> {
    assertFileKey(fileKey);
    const source = this.uploadKey(fileKey);
    const etag = this.pinned.get(fileKey);
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: this.fileKey(fileKey),
          CopySource: `${this.bucket}/${source.split('/').map(encodeURIComponent).join('/')}`,
          ...(etag === undefined ? {} : { CopySourceIfMatch: etag }),
        }),
      );
    } catch (error) {
      if (isAbsent(error)) {
        if (await this.exists(this.fileKey(fileKey))) return;
        throw new Error('nothing was uploaded for this file');
      }
      if (statusOf(error) === 412) throw new Error('the upload was replaced after it was examined: examine it again');
      throw unavailable('CopyObject', error);
    }
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: source }));
    } catch (error) {
      throw unavailable('DeleteObject', error);
    }
    this.pinned.delete(fileKey);
  }

  /**
   * @returns the committed object as a stream (a failure mid-body destroys it with
   *   DependencyUnavailableError), or `undefined` when there is none.
   * @throws RangeError for a malformed key; DependencyUnavailableError when S3 fails.
   */
  async open(fileKey: string): Promise<Readable | undefined> {
    assertFileKey(fileKey);
    const object = await this.get(this.fileKey(fileKey));
    return object === undefined ? undefined : mapStreamErrors(object.body);
  }

  /**
   * Deletes both objects (S3 answers a delete of a missing object with success).
   *
   * @throws RangeError for a malformed key; DependencyUnavailableError when S3 fails.
   */
  async remove(fileKey: string): Promise<void> {
    assertFileKey(fileKey);
    this.pinned.delete(fileKey);
    try {
      for (const Key of [this.uploadKey(fileKey), this.fileKey(fileKey)]) await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }));
    } catch (error) {
      throw unavailable('DeleteObject', error);
    }
  }

  /** Closes the connections to S3 (at shutdown; the store is unusable after). */
  close(): Promise<void> {
    this.client.destroy();
    this.streamingClient.destroy();
    return Promise.resolve();
  }

  private uploadKey(fileKey: string): string {
    return `${this.prefix}uploads/${fileKey}`;
  }

  private fileKey(fileKey: string): string {
    return `${this.prefix}files/${fileKey}`;
  }

  private pin(fileKey: string, etag: string): void {
    this.pinned.delete(fileKey);
    this.pinned.set(fileKey, etag);
    if (this.pinned.size > PINNED_MAX) {
      const oldest = this.pinned.keys().next();
      if (oldest.done !== true) this.pinned.delete(oldest.value);
    }
  }

  /** GetObject; `undefined` for a missing object. */
  private async get(Key: string): Promise<{ body: Readable; etag: string | undefined } | undefined> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
      if (!(answer.Body instanceof Readable)) throw new TypeError('GetObject answered no Node.js stream');
      return { body: answer.Body, etag: answer.ETag };
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw unavailable('GetObject', error);
    }
  }

  /** The facts of one object, measured as it streams, and its ETag; `undefined` for a missing object. */
  private async measure(Key: string): Promise<{ facts: FileContentFacts; etag: string | undefined } | undefined> {
    const object = await this.get(Key);
    if (object === undefined) return undefined;
    const meter = new ContentMeter();
    try {
      for await (const chunk of object.body) meter.update(chunk as Uint8Array);
    } catch (error) {
      throw unavailable('GetObject (body)', error);
    }
    return { facts: meter.facts(), etag: object.etag };
  }

  private async exists(Key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
      return true;
    } catch (error) {
      if (isAbsent(error)) return false;
      throw unavailable('HeadObject', error);
    }
  }

  /** Aborts a multipart upload, best effort: a lost store keeps it until the bucket's lifecycle rule removes it. */
  private async abandon(Key: string, UploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }));
    } catch {
      // The outcome stands either way; see the README ("Bucket setup").
    }
  }
}

/** The timeouts `settings` sets, without the members left undefined. */
function definedOnly(settings: S3FileStoreSettings): Partial<Record<keyof typeof S3_DEFAULT_TIMEOUTS, number>> {
  const out: Partial<Record<keyof typeof S3_DEFAULT_TIMEOUTS, number>> = {};
  for (const key of Object.keys(S3_DEFAULT_TIMEOUTS) as (keyof typeof S3_DEFAULT_TIMEOUTS)[]) {
    const value = settings[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function signalOption(signal: AbortSignal | undefined): { abortSignal?: AbortSignal } {
  return signal === undefined ? {} : { abortSignal: signal };
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/** A missing object (not a missing bucket: that is a store that cannot serve). */
function isAbsent(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return name === 'NoSuchKey' || name === 'NotFound' || (statusOf(error) === 404 && name !== 'NoSuchBucket');
}

/**
 * The core's DependencyUnavailableError for a failed S3 call. Its cause says what failed
 * (`S3 GetObject failed: TimeoutError ETIMEDOUT`, `... AccessDenied HTTP 403`) and nothing
 * more: the SDK's and Node's messages name hosts and object keys.
 */
function unavailable(operation: string, error: unknown): DependencyUnavailableError {
  if (error instanceof DependencyUnavailableError) return error;
  const name = error instanceof Error ? error.name : typeof error;
  const code = (error as { code?: unknown } | undefined)?.code;
  const status = statusOf(error);
  const detail = [name, typeof code === 'string' ? code : undefined, status === undefined ? undefined : `HTTP ${status}`].filter((part) => part !== undefined).join(' ');
  return new DependencyUnavailableError('file_storage', { cause: new Error(`S3 ${operation} failed: ${detail}`) });
}

/** `source` through a PassThrough that turns a failure mid-body into DependencyUnavailableError. */
function mapStreamErrors(source: Readable): Readable {
  const out = new PassThrough();
  source.on('error', (error) => out.destroy(unavailable('GetObject (body)', error)));
  out.on('close', () => source.destroy());
  source.pipe(out);
  return out;
}
