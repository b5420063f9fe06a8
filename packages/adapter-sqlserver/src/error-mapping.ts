import { domainError, formatEntityName, type EntityName, type WriteError } from '@svc/core';

/**
 * SQL Server error numbers this adapter knows (sys.messages), per docs/CONTRACT.md "Row
 * writes": 208 → `unknown_entity`, 207 → `unknown_column`, 2627/2601/547/515 →
 * `constraint_violation`, 245/8114/2628/8152 → `invalid_value`. 8115, 220, 241 and 242
 * (arithmetic overflow, date conversion) are the same kind of caller mistake as 245 and
 * are mapped to `invalid_value` too. 1205 (deadlock victim) is retried once.
 */
export const SQL_ERROR = {
  invalidObjectName: 208,
  invalidColumnName: 207,
  uniqueConstraint: 2627,
  uniqueIndex: 2601,
  constraintConflict: 547,
  nullNotAllowed: 515,
  conversionFailed: 245,
  conversionError: 8114,
  truncatedWithColumn: 2628,
  truncated: 8152,
  arithmeticOverflowConverting: 8115,
  arithmeticOverflow: 220,
  dateConversionFailed: 241,
  dateOutOfRange: 242,
  deadlockVictim: 1205,
  loginFailed: 18456,
} as const;

/**
 * Error thrown for a database failure this adapter does not map to a domain error (for
 * example 229, permission denied). It is a 500 at the HTTP edge: the client learns
 * nothing, the log line carries the SQL Server error number and the driver's code.
 * Its message never holds SQL text, host, user or password: the driver's message is
 * deliberately not kept (not even as `cause`), because SQL Server messages can name
 * logins and loggers serialise causes.
 */
export class UnmappedSqlServerError extends Error {
  override readonly name = 'UnmappedSqlServerError';

  /**
   * @param number - SQL Server error number (sys.messages), when the server sent one.
   * @param driverCode - tedious error code (`EREQUEST`, `EPARAM`, ...), when there is one.
   */
  constructor(
    readonly number: number | undefined,
    readonly driverCode: string | undefined,
  ) {
    super(`SQL Server write failed with an unmapped error (number ${number ?? 'none'}, code ${driverCode ?? 'none'})`);
  }
}

/**
 * What a driver failure means for the write: `mapped` → answer the domain error;
 * `deadlock` → the server rolled it back, resend once; `not_sent` → nothing left this
 * process (the pooled connection was already closed), resend once; `unmapped` → throw.
 */
export type Classified =
  | { readonly kind: 'mapped'; readonly error: WriteError; readonly number?: number; readonly driverCode?: string }
  | { readonly kind: 'deadlock' }
  | { readonly kind: 'not_sent' }
  | { readonly kind: 'unmapped'; readonly number: number | undefined; readonly driverCode: string | undefined };

// Driver and socket codes meaning the database cannot be reached or the link broke.
// tedious: ConnectionError ESOCKET (refused, unreachable, reset), ELOGIN (login failed,
// e.g. 18456), EINSTLOOKUP, EENCRYPT, ETDS; RequestError ECLOSE (connection closed before
// the request completed). Raw socket codes reach us when tedious hands the socket's own
// error to the request callback.
const UNAVAILABLE_CODES = new Set([
  'ESOCKET',
  'ELOGIN',
  'ECLOSE',
  'EINSTLOOKUP',
  'EENCRYPT',
  'ETDS',
  'EINTERFACENOTSUPP',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);
// tedious ETIMEOUT: connect timeout (ConnectionError), request timeout (RequestError),
// cancel timeout; ETIMEDOUT: the operating system gave up on the TCP handshake; knex's
// KnexTimeoutError: no pooled connection became free in time.
const TIMEOUT_CODES = new Set(['ETIMEOUT', 'ETIMEDOUT']);

interface DriverError {
  readonly number: number | undefined;
  readonly code: string | undefined;
  readonly message: string;
  readonly name: string;
}

function driverError(error: unknown): DriverError | undefined {
  if (!(error instanceof Error)) return undefined;
  const e = error as Error & { number?: unknown; code?: unknown };
  return {
    number: typeof e.number === 'number' ? e.number : undefined,
    code: typeof e.code === 'string' ? e.code : undefined,
    message: e.message,
    name: e.name,
  };
}

// The first capture of `pattern` in `message`: a name SQL Server quoted in its message.
function quoted(message: string, pattern: RegExp): string | undefined {
  const match = pattern.exec(message);
  return match?.[1];
}

/**
 * Turns a SQL Server error number and message into a domain error. `detail` names the
 * object, column, constraint or type where SQL Server's English message does, and never
 * carries a value: a conversion message can quote a value of another row (a key compared
 * with a column of another type), and names of databases are left out too.
 */
function fromNumber(number: number, message: string, entity: EntityName): WriteError | undefined {
  const table = formatEntityName(entity);
  switch (number) {
    case SQL_ERROR.invalidObjectName: {
      const name = quoted(message, /^Invalid object name '(.*)'\.$/su) ?? table;
      return domainError('unknown_entity', `Entity ${name} does not exist or is not visible.`);
    }
    case SQL_ERROR.invalidColumnName: {
      const column = quoted(message, /^Invalid column name '(.*)'\.$/su);
      return domainError('unknown_column', column === undefined ? `A column does not exist in ${table}.` : `Column ${column} does not exist in ${table}.`);
    }
    case SQL_ERROR.uniqueConstraint: {
      const m = /^Violation of (PRIMARY KEY|UNIQUE KEY) constraint '(.*?)'\. Cannot insert duplicate key/su.exec(message);
      return domainError(
        'constraint_violation',
        m === null ? `The write would duplicate a unique key of ${table}.` : `The write would duplicate a key of ${m[1]} constraint ${m[2]}.`,
      );
    }
    case SQL_ERROR.uniqueIndex: {
      const index = quoted(message, /with unique index '(.*?)'\. The duplicate key/su);
      return domainError('constraint_violation', index === undefined ? `The write would duplicate a unique key of ${table}.` : `The write would duplicate a key of unique index ${index}.`);
    }
    case SQL_ERROR.constraintConflict: {
      const m = /conflicted with the ((?:FOREIGN KEY|CHECK|REFERENCE)(?: SAME TABLE)?) constraint "(.*?)"\./su.exec(message);
      return domainError('constraint_violation', m === null ? `The write conflicts with a constraint of ${table}.` : `The write conflicts with ${m[1]} constraint ${m[2]}.`);
    }
    case SQL_ERROR.nullNotAllowed: {
      const column = quoted(message, /^Cannot insert the value NULL into column '(.*?)', table /su);
      return domainError('constraint_violation', column === undefined ? `A column of ${table} does not allow NULL.` : `Column ${column} does not allow NULL.`);
    }
    case SQL_ERROR.conversionFailed:
    case SQL_ERROR.conversionError:
    case SQL_ERROR.arithmeticOverflowConverting:
    case SQL_ERROR.arithmeticOverflow:
    case SQL_ERROR.dateConversionFailed:
    case SQL_ERROR.dateOutOfRange: {
      const type = quoted(message, /(?:to data type|converting data type \w+ to|for data type) ([a-z0-9_]+)/iu);
      return domainError('invalid_value', type === undefined ? 'A value does not fit the data type of its column.' : `A value does not fit data type ${type}.`);
    }
    case SQL_ERROR.truncatedWithColumn: {
      const column = quoted(message, /, column '(.*?)'\. Truncated value: /su);
      return domainError('invalid_value', column === undefined ? 'A value is too long for its column.' : `A value is too long for column ${column}.`);
    }
    case SQL_ERROR.truncated:
      return domainError('invalid_value', 'A value is too long for its column.');
    default:
      return undefined;
  }
}

/** Errors in the order that matters: an AggregateError (several ERROR tokens) → each. */
function flatten(error: unknown): unknown[] {
  return error instanceof AggregateError ? error.errors.flatMap(flatten) : [error];
}

/**
 * Classifies a failure of a write at the adapter's edge (docs/ARCHITECTURE.md "Rules").
 *
 * - A SQL Server error number of the docs/CONTRACT.md table → that domain error.
 * - 1205 (deadlock victim) → `deadlock` (the caller retries once).
 * - Refused, unreachable, reset or closed connections and login failures →
 *   `connection_unavailable`; connect, request and pool timeouts → `connection_timeout`.
 * - `EINVALIDSTATE` (the pooled connection was closed before the request was written)
 *   → `not_sent`.
 * - Anything else → `unmapped` (thrown as {@link UnmappedSqlServerError}).
 *
 * Several ERROR tokens in one response arrive as an AggregateError; the first one with a
 * mapped number wins (SQL Server sends the cause before follow-ups such as 3621
 * "The statement has been terminated.").
 */
export function classify(error: unknown, entity: EntityName): Classified {
  const all = flatten(error).map(driverError);
  for (const e of all) {
    if (e?.number === undefined) continue;
    if (e.number === SQL_ERROR.deadlockVictim) return { kind: 'deadlock' };
    const mapped = fromNumber(e.number, e.message, entity);
    if (mapped !== undefined) return { kind: 'mapped', error: mapped, number: e.number, ...(e.code === undefined ? {} : { driverCode: e.code }) };
  }
  const first = all[0];
  if (first === undefined) return { kind: 'unmapped', number: undefined, driverCode: undefined };
  if (first.code === 'EINVALIDSTATE') return { kind: 'not_sent' };
  if (first.name === 'KnexTimeoutError' || (first.code !== undefined && TIMEOUT_CODES.has(first.code))) {
    return {
      kind: 'mapped',
      error: domainError('connection_timeout', 'The database did not answer in time; the outcome of the write is unknown if it was sent.'),
      ...(first.code === undefined ? {} : { driverCode: first.code }),
    };
  }
  if (first.code !== undefined && UNAVAILABLE_CODES.has(first.code)) {
    return {
      kind: 'mapped',
      error: domainError(
        'connection_unavailable',
        'The database could not be reached, refused the login, or closed the connection before answering; a write already sent was not resent, so whether it was applied is unknown.',
      ),
      driverCode: first.code,
    };
  }
  return { kind: 'unmapped', number: first.number, driverCode: first.code };
}
