import { hash } from 'node:crypto';
import { domainError, type DomainError } from '../domain/errors.js';
import {
  ACCESS_TOKEN_PREFIX,
  API_KEY_PREFIX,
  SCOPE_FILES_WRITE,
  SCOPE_RUNS_READ,
  SCOPE_RUNS_WRITE,
  type CredentialKind,
  type Principal,
} from '../domain/principal.js';
import type { Building } from '../domain/building.js';
import { err, ok, type Result } from '../domain/result.js';
import type { Clock } from '../ports/clock.js';
import type { CredentialStore } from '../ports/credential-store.js';

/** The operations that need a credential. */
export type OperationId =
  | 'insertRecord'
  | 'updateRecord'
  | 'startRun'
  | 'getRun'
  | 'cancelRun'
  | 'streamRunEvents'
  | 'listRuns'
  | 'listAgents'
  | 'getAgent'
  | 'listConnections'
  | 'getConnection'
  | 'prepareFile'
  | 'completeFile'
  | 'getFile'
  | 'listFiles'
  | 'deleteFile';

/**
 * Which operations accept OAuth access tokens, and with which scope.
 * Source: docs/api-spec.md "Authentication" items 5 and 9; docs/CONTRACT.md "Authentication"
 * (run creation with `runs:write`, run status with `runs:read`, nothing else), "Runs
 * lifecycle" (cancel as run creation, `runs:write`; the events stream as the run status,
 * `runs:read`) and
 * "Discovery" (listing runs with `runs:read`; agents and connections take API keys only),
 * "Files" (every file operation with `files:write`).
 */
export const OAUTH_SCOPE_BY_OPERATION: Readonly<Record<OperationId, string | undefined>> = {
  insertRecord: undefined,
  updateRecord: undefined,
  startRun: SCOPE_RUNS_WRITE,
  getRun: SCOPE_RUNS_READ,
  cancelRun: SCOPE_RUNS_WRITE,
  streamRunEvents: SCOPE_RUNS_READ,
  listRuns: SCOPE_RUNS_READ,
  listAgents: undefined,
  getAgent: undefined,
  listConnections: undefined,
  getConnection: undefined,
  prepareFile: SCOPE_FILES_WRITE,
  completeFile: SCOPE_FILES_WRITE,
  getFile: SCOPE_FILES_WRITE,
  listFiles: SCOPE_FILES_WRITE,
  deleteFile: SCOPE_FILES_WRITE,
};

/**
 * Input of {@link Authenticate}: every value of the two credential headers, in the order
 * received, each header line a separate value (not joined with commas); an empty list
 * when the header is absent. Every value is needed because two credentials that disagree
 * are refused (docs/CONTRACT.md "Request bodies and headers").
 */
export interface AuthenticateInput {
  /** Every `X-API-Key` header value. */
  readonly apiKeys: readonly string[];
  /** Every `Authorization` header value. */
  readonly authorizations: readonly string[];
  /**
   * The operation being called: an OAuth token must be accepted by it and carry its scope.
   * Absent: the credential is only identified (valid, known, not expired), for a door that
   * authorizes each call later with the call's operation (the MCP endpoint, whose tools
   * are different operations; docs/decisions.md "MCP").
   */
  readonly operation?: OperationId;
}

/** Codes {@link Authenticate} can produce. */
export type AuthenticateErrorCode =
  | 'missing_credential'
  | 'invalid_credential'
  | 'expired_credential'
  | 'unsupported_credential'
  | 'insufficient_scope';

const NO_SCOPES: ReadonlySet<string> = new Set();

/** An Authorization value: its scheme (RFC 9110 §11.1 token) and what follows it. */
const BEARER = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+(.*))?$/u;

// Longer than any credential we mint; hashing megabytes for nothing is a cheap DoS.
const MAX_CREDENTIAL_LENGTH = 512;

/**
 * Lower-case hex SHA-256 digest of a secret (its UTF-8 bytes), as stored by the
 * {@link CredentialStore}. Node's one-shot `crypto.hash` (Node ≥ 20.12), not a `Hash`
 * object: 0.26 against 0.72 µs a 47-character key, measured in one process.
 */
export function sha256Hex(secret: string): string {
  return hash('sha256', secret, 'hex');
}

function kindOf(secret: string): CredentialKind | undefined {
  if (secret.startsWith(ACCESS_TOKEN_PREFIX)) return 'oauth';
  if (secret.startsWith(API_KEY_PREFIX)) return 'api_key';
  return undefined;
}

/**
 * Turns the raw credential headers of a request into a {@link Principal}.
 *
 * Rules (docs/api-spec.md "Authentication", docs/CONTRACT.md "Authentication"):
 * - no credential → `missing_credential`;
 * - two credentials that differ — two `Authorization` values, two `X-API-Key` values, or
 *   `X-API-Key` and a bearer token — → `invalid_credential`; the same secret sent more
 *   than once is one credential (docs/CONTRACT.md "Request bodies and headers");
 * - an `Authorization` scheme other than Bearer, or an access token in `X-API-Key` →
 *   `unsupported_credential`;
 * - unknown prefix, unknown secret → `invalid_credential`;
 * - past `expires_at` → `expired_credential`;
 * - an access token on an operation that takes none → `unsupported_credential`;
 * - an access token without the operation's scope → `insufficient_scope` (403, RFC 6750);
 *   both only when `input.operation` is given.
 * Secrets are compared only as SHA-256 digests and never appear in an error.
 */
export class Authenticate {
  constructor(
    private readonly credentials: CredentialStore,
    private readonly clock: Clock,
  ) {}

  /** @returns the principal, or one of {@link AuthenticateErrorCode}. */
  async execute(input: AuthenticateInput): Promise<Result<Principal, DomainError<AuthenticateErrorCode>>> {
    const presented = this.presentedSecret(input);
    if (!presented.ok) return presented;
    const { secret, viaApiKeyHeader } = presented.value;

    const kind = kindOf(secret);
    if (kind === undefined || secret.length > MAX_CREDENTIAL_LENGTH) {
      return err(domainError('invalid_credential', 'The credential is not valid.'));
    }
    if (kind === 'oauth' && viaApiKeyHeader) {
      return err(
        domainError('unsupported_credential', 'An OAuth access token must be sent as Authorization: Bearer, not in X-API-Key.'),
      );
    }
    const stored = await this.credentials.findByDigest(sha256Hex(secret));
    if (stored === undefined || stored.kind !== kind) {
      return err(domainError('invalid_credential', 'The credential is not valid.'));
    }
    if (stored.expiresAt !== undefined && stored.expiresAt.getTime() <= this.clock.now().getTime()) {
      return err(domainError('expired_credential', 'The credential has expired.'));
    }
    if (kind === 'oauth' && input.operation !== undefined) {
      const scope = OAUTH_SCOPE_BY_OPERATION[input.operation];
      if (scope === undefined) {
        return err(domainError('unsupported_credential', 'This operation does not accept OAuth access tokens; use an API key.'));
      }
      if (!stored.scopes.includes(scope)) {
        return err(
          domainError('insufficient_scope', `The access token lacks the scope ${scope} this operation needs.`, {
            requiredScope: scope,
          }),
        );
      }
    }
    const principal: Building<Principal> = {
      accountId: stored.accountId,
      credentialId: stored.credentialId,
      kind,
      // API keys carry no scope: one shared empty set, not a new one a request.
      scopes: stored.scopes.length === 0 ? NO_SCOPES : new Set(stored.scopes),
    };
    // Assigned, not a conditional spread: a spread copies the object (docs/ARCHITECTURE.md "Style to follow").
    if (stored.expiresAt !== undefined) principal.expiresAt = stored.expiresAt;
    return ok(principal);
  }

  private presentedSecret(
    input: AuthenticateInput,
  ): Result<{ secret: string; viaApiKeyHeader: boolean }, DomainError<AuthenticateErrorCode>> {
    // One pass over the lines (blank ones ignored), no arrays, closures or set: the rule
    // was map/filter/Set over every line, ~0.3 KiB of heap on every request.
    // Every non-blank line's secret (an Authorization value's bearer token, a non-Bearer
    // value as a whole) must be the same one, decided before any scheme is judged: with two
    // credentials there is no telling which one the client meant.
    let secret: string | undefined;
    let disagree = false;
    let viaApiKeyHeader = false;
    for (const line of input.apiKeys) {
      const value = line.trim();
      if (value === '') continue;
      viaApiKeyHeader = true;
      if (secret === undefined) secret = value;
      else if (value !== secret) disagree = true;
    }
    // The first non-blank Authorization value decides the scheme: Bearer, and not empty.
    let first: { readonly isBearer: boolean; readonly secret: string } | undefined;
    for (const line of input.authorizations) {
      const value = line.trim();
      if (value === '') continue;
      const match = BEARER.exec(value);
      const isBearer = match !== null && match[1]?.toLowerCase() === 'bearer';
      const carried = isBearer ? (match[2]?.trim() ?? '') : value;
      first ??= { isBearer, secret: carried };
      if (secret === undefined) secret = carried;
      else if (carried !== secret) disagree = true;
    }
    if (disagree) return err(domainError('invalid_credential', 'Two different credentials were sent; send exactly one.'));
    if (first !== undefined) {
      if (!first.isBearer) return err(domainError('unsupported_credential', 'Only the Bearer authorization scheme is supported.'));
      if (first.secret === '') return err(domainError('invalid_credential', 'The bearer token is empty.'));
      // An access token also copied into X-API-Key is still an access token in X-API-Key.
      return ok({ secret: first.secret, viaApiKeyHeader });
    }
    if (secret !== undefined) return ok({ secret, viaApiKeyHeader: true });
    return err(domainError('missing_credential', 'A credential is required: send X-API-Key or Authorization: Bearer.'));
  }
}
