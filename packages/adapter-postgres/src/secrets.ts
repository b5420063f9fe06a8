import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ACCESS_TOKEN_PREFIX, API_KEY_PREFIX } from '@svc/core';
import { CatalogError } from './errors.js';

/**
 * A fresh secret: `prefix` and 32 random bytes (256 bits) in base64url (43 characters),
 * as the API server's development account makes them. Source: docs/api-spec.md
 * "Authentication" (`svc-…` API keys, `svcpt_…` access tokens).
 */
export function newSecret(prefix: typeof API_KEY_PREFIX | typeof ACCESS_TOKEN_PREFIX): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** The environment variable the encryption key of connection passwords is read from by default. */
export const CATALOG_KEY_ENV = 'SVC_CATALOG_KEY';

/** Version tag of the stored ciphertext format (`v1:` + base64 of IV ‖ tag ‖ ciphertext). */
const FORMAT = 'v1';
/** AES-256-GCM: 96-bit IV (NIST SP 800-38D's recommended length), 128-bit tag. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Where the key comes from: the key itself (32 bytes, or their base64), or the name of the
 * environment variable holding its base64 (read when first needed).
 */
export type EncryptionKeySource = { readonly key: Uint8Array | string } | { readonly env: string };

/**
 * Encrypts and decrypts connection passwords and webhook signing secrets with AES-256-GCM
 * (node:crypto). The connection's (or endpoint's) id is the additional authenticated data,
 * so that a ciphertext copied to another row does not open there.
 */
export class PasswordCipher {
  private key: Buffer | undefined;

  /** @param source - the key, or the environment variable holding it (default `SVC_CATALOG_KEY`). */
  constructor(private readonly source: EncryptionKeySource = { env: CATALOG_KEY_ENV }) {}

  private keyBytes(): Buffer {
    if (this.key !== undefined) return this.key;
    const where = 'env' in this.source ? `environment variable ${this.source.env}` : 'the encryption key given';
    const raw = 'env' in this.source ? process.env[this.source.env] : this.source.key;
    if (raw === undefined || raw === '') throw new CatalogError('key', `${where} is not set: it must hold 32 random bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
    const bytes = typeof raw === 'string' ? Buffer.from(raw, 'base64') : Buffer.from(raw);
    if (bytes.length !== 32) throw new CatalogError('key', `${where} must hold exactly 32 bytes in base64 (it holds ${bytes.length})`);
    this.key = bytes;
    return bytes;
  }

  /** Checks that the key is there and well formed. @throws CatalogError (`key`) when not. */
  check(): void {
    this.keyBytes();
  }

  /**
   * @param password - the clear password.
   * @param connectionId - the connection's UUID, lower-case (bound as additional data).
   * @returns `v1:` + base64(IV ‖ tag ‖ ciphertext).
   * @throws CatalogError (`key`) when the key is missing or malformed.
   */
  encrypt(password: string, connectionId: string): string {
    return this.seal(password, connectionId.toLowerCase());
  }

  /**
   * @param stored - what {@link encrypt} returned for `connectionId`.
   * @throws CatalogError (`key`) when the key is missing or malformed; (`secret_unavailable`)
   *   when the ciphertext does not open with it (another key, another connection, tampered).
   */
  decrypt(stored: string, connectionId: string): string {
    return this.open(stored, connectionId.toLowerCase(), `the password of connection ${connectionId}`);
  }

  /**
   * Encrypts a webhook endpoint's signing secret; the endpoint id (as it is, ids are
   * case-sensitive) is the additional authenticated data. Source: docs/decisions.md
   * "Webhooks" (endpoints in the PostgreSQL catalog).
   * @returns `v1:` + base64(IV ‖ tag ‖ ciphertext).
   * @throws CatalogError (`key`) when the key is missing or malformed.
   */
  encryptWebhookSecret(secret: string, endpointId: string): string {
    return this.seal(secret, endpointId);
  }

  /**
   * @param stored - what {@link encryptWebhookSecret} returned for `endpointId`.
   * @throws CatalogError (`key`) when the key is missing or malformed; (`secret_unavailable`)
   *   when the ciphertext does not open with it (another key, another endpoint, tampered).
   */
  decryptWebhookSecret(stored: string, endpointId: string): string {
    return this.open(stored, endpointId, `the secret of webhook endpoint ${endpointId}`);
  }

  private seal(clear: string, aad: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keyBytes(), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
    return `${FORMAT}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** @param what - names the secret in errors (ids only). */
  private open(stored: string, aad: string, what: string): string {
    const key = this.keyBytes();
    const [format, payload] = stored.split(':', 2);
    const bytes = Buffer.from(payload ?? '', 'base64');
    if (format !== FORMAT || bytes.length < IV_BYTES + TAG_BYTES) throw new CatalogError('secret_unavailable', `${what} is not in a known encrypted format`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new CatalogError('secret_unavailable', `${what} does not decrypt with the catalog key (another key, or a changed row)`);
    }
  }
}
