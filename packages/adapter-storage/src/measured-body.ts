import { createHash, type Hash } from 'node:crypto';
import { FILE_HEAD_BYTES, type FileContentFacts } from '@svc/core';

/** What a body that is not exactly the declared size turned out to be. */
export class BodySizeError extends Error {
  override readonly name = 'BodySizeError';

  /** @param kind - `too_large` (a byte past the declared size arrived) or `too_short` (the body ended early). */
  constructor(readonly kind: 'too_large' | 'too_short') {
    super(kind === 'too_large' ? 'the body is longer than declared' : 'the body is shorter than declared');
  }
}

/** What the body itself threw (the client went away): passed on as it is, never taken for a storage failure. */
export class BodyReadError extends Error {
  override readonly name = 'BodyReadError';

  /** @param cause - what the body threw. */
  constructor(cause: unknown) {
    super('reading the body failed', { cause });
  }
}

/** Measures bytes as they pass: size, SHA-256 and the first {@link FILE_HEAD_BYTES} bytes. */
export class ContentMeter {
  private readonly hash: Hash = createHash('sha256');
  private readonly headChunks: Buffer[] = [];
  private headBytes = 0;
  /** Bytes seen so far. */
  sizeBytes = 0;

  /** Counts `chunk` in. */
  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.sizeBytes += chunk.length;
    if (this.headBytes < FILE_HEAD_BYTES) {
      const take = Buffer.from(chunk.subarray(0, FILE_HEAD_BYTES - this.headBytes));
      this.headChunks.push(take);
      this.headBytes += take.length;
    }
  }

  /** The facts of every byte seen; call once, after the last. */
  facts(): FileContentFacts {
    return { sizeBytes: this.sizeBytes, sha256: this.hash.digest('hex'), head: new Uint8Array(Buffer.concat(this.headChunks)) };
  }
}

/**
 * `body`, measured by `meter`, as long as it holds at most `sizeBytes` bytes: the chunk
 * that would carry it past `sizeBytes` is never yielded (so nothing past the declared
 * size is ever written), and reading stops there.
 *
 * @throws BodySizeError `too_large` at the first chunk past `sizeBytes`, `too_short` when
 *   `body` ends before `sizeBytes` bytes; BodyReadError with what `body` threw as `cause`.
 */
export async function* measuredBody(body: AsyncIterable<Uint8Array>, sizeBytes: number, meter: ContentMeter): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) {
      if (chunk.length === 0) continue;
      if (meter.sizeBytes + chunk.length > sizeBytes) throw new BodySizeError('too_large');
      meter.update(chunk);
      yield chunk;
    }
  } catch (error) {
    throw error instanceof BodySizeError ? error : new BodyReadError(error);
  }
  if (meter.sizeBytes < sizeBytes) throw new BodySizeError('too_short');
}
