import type { CredentialKind } from '../domain/principal.js';

/**
 * A credential as stored: never the secret, only its SHA-256 digest.
 * Source: docs/CONTRACT.md "Authentication" (secrets stored and compared as SHA-256 digests).
 */
export interface StoredCredential {
  /** Stable, non-secret identifier (used in logs and rate-limit keys). */
  readonly credentialId: string;
  /** Account the credential belongs to. */
  readonly accountId: string;
  /** API key or OAuth access token. */
  readonly kind: CredentialKind;
  /** Lower-case hex SHA-256 digest of the whole secret, prefix included. */
  readonly sha256: string;
  /** OAuth scopes; empty for API keys. */
  readonly scopes: readonly string[];
  /** End of validity; absent when it never expires. */
  readonly expiresAt?: Date;
}

/**
 * Looks credentials up by the digest of their secret.
 *
 * Contract: `findByDigest` resolves `undefined` for an unknown digest (never throws for
 * it); it rejects only when the store itself is unreachable. Revoked credentials are
 * simply absent.
 */
export interface CredentialStore {
  /**
   * @param sha256 - lower-case hex SHA-256 digest of the presented secret.
   * @returns the stored credential, or `undefined` when none has that digest.
   */
  findByDigest(sha256: string): Promise<StoredCredential | undefined>;
}
