import { createHmac, timingSafeEqual } from 'node:crypto';

/** What {@link UploadAddresses.check} found: `valid`, or why not. */
export type UploadAddressCheck = 'valid' | 'invalid' | 'expired';

/**
 * The API's own signed upload addresses (the filesystem store's `upload_url`):
 * `{base_url}/api/v1/files/{file_key}/upload?expires={unix seconds}&signature={base64url}`,
 * the signature HMAC-SHA256 (RFC 2104) of `svc-upload`, the key and the expiry, like a
 * presigned URL: it needs no credential, works for that one file until it expires, and
 * any change of the key or expiry breaks it. Source: docs/CONTRACT.md "Files".
 */
export class UploadAddresses {
  private readonly key: Buffer;
  private readonly baseUrl: string;

  /**
   * @param key - the signing key, at least 32 bytes, the same on every instance (else an
   *   address one instance made is refused by another).
   * @param baseUrl - `{base_url}` without a trailing slash.
   * @throws RangeError when the key is shorter than 32 bytes.
   */
  constructor(key: Uint8Array, baseUrl: string) {
    this.key = Buffer.from(key);
    if (this.key.length < 32) throw new RangeError('the upload address signing key must be at least 32 bytes');
    this.baseUrl = baseUrl;
  }

  /** The address of `fileKey` that works until `expiresAt` (rounded down to the second). */
  addressOf(fileKey: string, expiresAt: Date): string {
    const expires = Math.floor(expiresAt.getTime() / 1000).toString();
    return `${this.baseUrl}/api/v1/files/${encodeURIComponent(fileKey)}/upload?expires=${expires}&signature=${this.signature(fileKey, expires)}`;
  }

  /**
   * Checks the `expires` and `signature` query parameters of an upload to `fileKey` at `now`.
   * @returns `valid`; `invalid` (missing, malformed or not this key's signature); `expired` (signed, but past its expiry).
   */
  check(fileKey: string, expires: string | undefined, signature: string | undefined, now: Date): UploadAddressCheck {
    if (expires === undefined || signature === undefined || !/^[0-9]{1,12}$/u.test(expires)) return 'invalid';
    const expected = Buffer.from(this.signature(fileKey, expires), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) * 1000 <= now.getTime() ? 'expired' : 'valid';
  }

  private signature(fileKey: string, expires: string): string {
    return createHmac('sha256', this.key).update(`svc-upload\n${fileKey}\n${expires}`).digest('base64url');
  }
}
