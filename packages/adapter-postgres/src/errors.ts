import { DependencyUnavailableError } from '@svc/core';

/** The short name every {@link DependencyUnavailableError} of this package carries. */
export const CATALOG_DEPENDENCY = 'catalog';

/**
 * What a {@link CatalogError} is about, so that a caller (the admin CLI) can map it to an
 * exit code without parsing messages:
 * - `not_found`: no entry with that id (of that kind);
 * - `duplicate`: an id or digest already in the catalog (ids are unique across the whole
 *   catalog, docs/CONTRACT.md "Isolation between accounts");
 * - `in_use`: an account that still owns agents, connections or live credentials;
 * - `invalid`: an argument the catalog refuses (unknown scope, past expiry, bad id, ...);
 * - `not_migrated` / `schema_too_new`: the schema is behind or ahead of this package;
 * - `key`: the encryption key of connection passwords is missing or malformed;
 * - `secret_unavailable`: a connection password or a webhook endpoint's signing secret
 *   cannot be resolved (its environment variable is unset, or its ciphertext does not
 *   open with the key).
 */
export type CatalogErrorCode = 'not_found' | 'duplicate' | 'in_use' | 'invalid' | 'not_migrated' | 'schema_too_new' | 'key' | 'secret_unavailable';

/**
 * An expected refusal of the catalog. Its `message` is one line, safe to print and log:
 * ids, kinds and environment variable names only, never a secret, password, host or user.
 */
export class CatalogError extends Error {
  override readonly name: string = 'CatalogError';
  /** @param code - see {@link CatalogErrorCode}. @param message - safe, one line. */
  constructor(
    readonly code: CatalogErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The kinds of entry a catalog holds. */
export type CatalogEntity = 'account' | 'api_key' | 'access_token' | 'agent' | 'connection' | 'webhook_endpoint';

/** Thrown when an id names no entry of the expected kind (`code` `not_found`). */
export class CatalogNotFoundError extends CatalogError {
  override readonly name = 'CatalogNotFoundError';
  /** @param entity - what was looked for. @param id - the id asked for. */
  constructor(
    readonly entity: CatalogEntity,
    readonly id: string,
  ) {
    super('not_found', `no ${entity.replaceAll('_', ' ')} with id "${id}"`);
  }
}

/** Who holds an id or digest already (for {@link CatalogDuplicateError}). */
export interface CatalogOwner {
  /** Kind of the entry that holds it. */
  readonly entity: CatalogEntity;
  /** Id of that entry. */
  readonly id: string;
  /** Account of that entry (its own id for an account). */
  readonly accountId: string;
}

/**
 * Thrown when an id or a digest is already in the catalog (`code` `duplicate`): nothing
 * was changed. `existing` names the entry and account that hold it — no silent last-wins.
 * Source: docs/CONTRACT.md "Isolation between accounts" (ids of accounts, API keys, access
 * tokens, agents and connections are unique across the whole catalog; so are digests).
 */
export class CatalogDuplicateError extends CatalogError {
  override readonly name = 'CatalogDuplicateError';
  /**
   * @param what - `id` or `digest` (SHA-256 of a secret).
   * @param value - the id (for `digest`, the digest: not a secret).
   * @param existing - the entry that already holds it; absent only if it vanished meanwhile.
   */
  constructor(
    readonly what: 'id' | 'digest',
    readonly value: string,
    readonly existing: CatalogOwner | undefined,
  ) {
    const subject = what === 'id' ? `id "${value}"` : 'this secret (its SHA-256 digest)';
    const holder = existing === undefined ? 'another entry' : `${existing.entity.replaceAll('_', ' ')} "${existing.id}" of account "${existing.accountId}"`;
    super('duplicate', `${subject} is already used by ${holder}`);
  }
}

/** How many live entries of each kind an account owns (for {@link CatalogInUseError}). */
export interface OwnedEntries {
  readonly credentials: number;
  readonly agents: number;
  readonly connections: number;
  readonly webhookEndpoints: number;
}

/** Thrown when an account that owns things is removed without `cascade` (`code` `in_use`). */
export class CatalogInUseError extends CatalogError {
  override readonly name = 'CatalogInUseError';
  /** @param accountId - the account. @param owned - how many live entries of each kind it owns. */
  constructor(
    readonly accountId: string,
    readonly owned: OwnedEntries,
  ) {
    super(
      'in_use',
      `account "${accountId}" still owns ${owned.credentials} live credential(s), ${owned.agents} agent(s), ${owned.connections} connection(s) ` +
        `and ${owned.webhookEndpoints} webhook endpoint(s); remove them first, or remove the account with cascade`,
    );
  }
}

/** Thrown for an argument the catalog refuses (`code` `invalid`); `field` names it. */
export class CatalogInvalidError extends CatalogError {
  override readonly name = 'CatalogInvalidError';
  /** @param field - the offending argument, e.g. `scopes` or `expiresAt`. @param rule - what it must be. */
  constructor(
    readonly field: string,
    rule: string,
  ) {
    super('invalid', `${field}: ${rule}`);
  }
}

/**
 * Thrown by `PostgresCatalog.open` when the schema lacks migrations this package needs
 * (`code` `not_migrated`): nothing is migrated implicitly; the message names the command.
 */
export class CatalogNotMigratedError extends CatalogError {
  override readonly name = 'CatalogNotMigratedError';
  /** @param schema - the schema. @param pending - names of the migrations not applied. @param command - what to run. */
  constructor(
    readonly schema: string,
    readonly pending: readonly string[],
    command: string,
  ) {
    super('not_migrated', `the catalog schema "${schema}" is not migrated (pending: ${pending.join(', ')}); run \`${command}\` first`);
  }
}

/** Thrown by `PostgresCatalog.open` when the schema holds migrations this package does not know (`code` `schema_too_new`). */
export class CatalogSchemaTooNewError extends CatalogError {
  override readonly name = 'CatalogSchemaTooNewError';
  /** @param schema - the schema. @param unknown - names of the applied migrations this version lacks. */
  constructor(
    readonly schema: string,
    readonly unknown: readonly string[],
  ) {
    super('schema_too_new', `the catalog schema "${schema}" was migrated by a newer version (${unknown.join(', ')}); upgrade @svc/adapter-postgres`);
  }
}

/** SQLSTATE classes and codes that mean "the server cannot serve now", not "this statement is wrong". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-4]|57014|58|28|3D000|55P03|40001|40P01)/u;
/** Socket error codes of a peer that cannot be reached or went away. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
/** pg's and knex's own messages for a connection that is gone, not made in time or silent (pg 8.23, knex 3.3 source). */
const CONNECTION_MESSAGES = /^(Connection terminated|Query read timeout|timeout expired|Client was closed|Client has encountered a connection error|Knex: Timeout acquiring a connection|Connection ended unexpectedly)/u;

/**
 * Whether `error`, from knex or pg, means the catalog database cannot be reached or cannot
 * serve: refused, reset or silent connections, connect and query timeouts, a full pool,
 * SQLSTATE classes 08 (connection), 53 (resources), 57P0x (shutdown), 28 (login), a
 * cancelled statement (`statement_timeout`). Anything else (a wrong statement, our own
 * bug) is not: it stays an error, seen and fixed rather than answered 503.
 */
export function isCatalogUnavailable(error: unknown): boolean {
  if (error instanceof DependencyUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  if (error.name === 'KnexTimeoutError' || error.name === 'TimeoutError') return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/u.test(code) && UNAVAILABLE_SQLSTATE.test(code)))) return true;
  return CONNECTION_MESSAGES.test(error.message);
}

/**
 * A cause safe to keep and log: the driver's messages name the host and port
 * (`connect ECONNREFUSED 127.0.0.1:5432`) or the user (`password authentication failed
 * for user "x"`), so only the error's type and code survive.
 */
export function safeCause(error: unknown): Error {
  if (!(error instanceof Error)) return new Error('catalog call failed');
  const code = (error as { code?: unknown }).code;
  const what = typeof code === 'string' ? `${error.name} ${code}` : error.name;
  if (CONNECTION_MESSAGES.test(error.message)) return new Error(`${what}: ${CONNECTION_MESSAGES.exec(error.message)?.[1] ?? ''}`);
  return new Error(what);
}

/** The core's {@link DependencyUnavailableError} for the catalog, with a {@link safeCause}. */
export function catalogUnavailable(cause: unknown): DependencyUnavailableError {
  if (cause instanceof DependencyUnavailableError) return cause;
  return new DependencyUnavailableError(CATALOG_DEPENDENCY, { cause: safeCause(cause) });
}

/**
 * Runs `operation` (catalog queries only) within `timeoutMs`: it rejects with the core's
 * {@link DependencyUnavailableError} (`catalog`) when the database is unreachable or
 * cannot serve ({@link isCatalogUnavailable}), or when no answer came within
 * `timeoutMs`; other failures are rethrown as they are.
 *
 * The deadline is ours, on top of pg's and knex's per-step timeouts (connect, acquire,
 * query), because one lookup may wait for several of them in a row (acquire, connect,
 * query): each alone is bounded by `timeoutMs`, their sum is not. Source: docs/CONTRACT.md
 * "Dependencies and faults" (503 within `dependency_timeout_ms`).
 */
export async function guardCatalog<T>(timeoutMs: number, operation: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const running = operation();
  // The late outcome of an abandoned operation must not become an unhandled rejection.
  running.catch(() => undefined);
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DependencyUnavailableError(CATALOG_DEPENDENCY, { cause: new Error(`no answer within ${timeoutMs} ms`) })), timeoutMs);
  });
  try {
    return await Promise.race([running, deadline]);
  } catch (error) {
    if (isCatalogUnavailable(error)) throw catalogUnavailable(error);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
