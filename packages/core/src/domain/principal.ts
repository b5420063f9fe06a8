/**
 * Kinds of credential. Source: docs/api-spec.md "Authentication" (API key `svc-…`, OAuth
 * access token `svcpt_…`).
 */
export type CredentialKind = 'api_key' | 'oauth';

/** Prefix of every API key. Source: docs/api-spec.md "Authentication" item 2. */
export const API_KEY_PREFIX = 'svc-';
/** Prefix of every OAuth access token. Source: docs/api-spec.md "Authentication" item 3. */
export const ACCESS_TOKEN_PREFIX = 'svcpt_';

/** OAuth scope needed to start a run. Source: docs/api-spec.md "Authentication" item 5. */
export const SCOPE_RUNS_WRITE = 'runs:write';
/** OAuth scope needed to read a run. Source: docs/CONTRACT.md "Authentication". */
export const SCOPE_RUNS_READ = 'runs:read';
/** OAuth scope needed for every file operation (prepare, complete, get, list, delete). Source: docs/CONTRACT.md "Files". */
export const SCOPE_FILES_WRITE = 'files:write';
/** Every OAuth scope this service knows, as listed in the index. */
export const SUPPORTED_SCOPES = [SCOPE_RUNS_WRITE, SCOPE_RUNS_READ, SCOPE_FILES_WRITE] as const;

/**
 * The authenticated caller of one request.
 * Source: docs/CONTRACT.md "Authentication" (every credential belongs to one account).
 */
export interface Principal {
  /** Account the credential belongs to. */
  readonly accountId: string;
  /** Stable, non-secret identifier of the credential (rate-limit key, logs). */
  readonly credentialId: string;
  /** API key or OAuth access token; `in_process` for a caller inside the process (core `inProcessPrincipal`). */
  readonly kind: CredentialKind | 'in_process';
  /** OAuth scopes granted; empty for API keys, which are not scoped. */
  readonly scopes: ReadonlySet<string>;
  /** End of validity, absent when the credential does not expire. */
  readonly expiresAt?: Date;
}
