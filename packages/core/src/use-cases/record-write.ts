import { allowsWrites, isUuid, type Connection } from '../domain/connection.js';
import { parseEntityName, type EntityName } from '../domain/entity-name.js';
import { domainError, validationFailed, type DomainError, type ValidationIssue } from '../domain/errors.js';
import { parseEgressHeader, type EgressRoute } from '../domain/egress-route.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { WriteError, WriteErrorCode, WriteOutcome } from '../ports/record-writer.js';
import type { InsertRecordBody, WireBody } from '../schemas/validate.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';

/**
 * Input shared by the row insert (`B` = {@link InsertRecordBody}) and the row update
 * (`B` = `UpdateRecordBody`).
 */
export interface RecordWriteInput<B extends InsertRecordBody = InsertRecordBody> {
  /** The caller: authenticated, or `inProcessPrincipal(account)`. */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** The connection (`connection_id` of the path; not yet known to be a UUID). */
  readonly connectionId: string;
  /** The row: a typed body, or the unvalidated body of a wire door ({@link WireBody}); validated either way. */
  readonly body: B | WireBody;
  /**
   * The route: `default` (the default, when absent) or `egress`; a wire door on the main
   * address passes the raw `X-Svc-Egress` header instead (`{ egressHeader }`, absent →
   * `default`), which the use case checks (`invalid_header`).
   */
  readonly route?: EgressRoute | { readonly egressHeader: string | undefined };
}

/** Result data of a row write, as on the wire. Source: docs/api-spec.md "Row-write result". */
export interface RowWriteResult {
  readonly rows_affected: number;
}

/** Codes a row write can produce. */
export type RecordWriteErrorCode =
  | 'validation_failed'
  | 'invalid_header'
  | 'not_found'
  | 'writes_not_supported'
  | 'rate_limited'
  | WriteErrorCode;

/** The not-found answer, the same for a missing and a foreign connection. */
export function connectionNotFound(connectionId: string): DomainError<'not_found'> {
  const which = isUuid(connectionId) ? `Connection ${connectionId}` : 'The connection';
  return domainError('not_found', `${which} was not found.`);
}

/**
 * Finds the connection a row write targets, in the order docs/CONTRACT.md fixes: a
 * malformed or unknown id, or another account's connection → `not_found` (never tell
 * which); a type other than `sqlserver` → `writes_not_supported`, before any database
 * is touched.
 */
export function writableConnection(
  catalog: ConnectionCatalog,
  principal: Principal,
  connectionId: string,
): Promise<Result<Connection, DomainError<'not_found' | 'writes_not_supported'>>> {
  // A `then`, not an async frame (docs/ARCHITECTURE.md "Style to follow"): one promise fewer a write.
  if (!isUuid(connectionId)) return Promise.resolve(err(connectionNotFound(connectionId)));
  let found: Promise<Connection | undefined>;
  try {
    found = catalog.findById(connectionId.toLowerCase());
  } catch (error) {
    return Promise.reject(error);
  }
  return found.then((connection) => writableOf(connection, principal, connectionId));
}

function writableOf(connection: Connection | undefined, principal: Principal, connectionId: string): Result<Connection, DomainError<'not_found' | 'writes_not_supported'>> {
  if (connection === undefined || connection.accountId !== principal.accountId) {
    return err(connectionNotFound(connectionId));
  }
  if (!allowsWrites(connection.type)) {
    return err(
      domainError(
        'writes_not_supported',
        `Connection ${connection.connectionId} is of type ${connection.type}, which does not allow writes; only sqlserver connections do.`,
      ),
    );
  }
  return ok(connection);
}

/** Parses a validated `entity`; the schema pattern already holds, so this only splits. */
export function entityOf(text: string): Result<EntityName, DomainError<'validation_failed'>> {
  const parsed = parseEntityName(text);
  if (parsed.ok) return parsed;
  const issue: ValidationIssue = { path: '/entity', message: parsed.error };
  return err(validationFailed([issue]));
}

/** Resolves the route of a row write (see {@link RecordWriteInput.route}). */
export function routeOf(route: RecordWriteInput['route']): Result<EgressRoute, DomainError<'invalid_header'>> {
  if (route === undefined) return ok('default');
  return typeof route === 'string' ? ok(route) : parseEgressHeader(route.egressHeader);
}

/** What a row write does once its input is checked: call the writer. */
export type WriteStep<B> = (
  connection: Connection,
  entity: EntityName,
  body: B,
  route: EgressRoute,
) => Promise<Result<WriteOutcome, WriteError>>;

/**
 * The steps shared by the row insert and the row update, in docs/CONTRACT.md's order:
 * charge the request (`input.meter`: the credential's window, `rate_limited`); check `X-Svc-Egress`
 * (`invalid_header`); validate the body (`validation_failed`; a number that cannot be
 * written exactly: `invalid_value`); find the connection
 * (`not_found`); refuse types other than `sqlserver` (`writes_not_supported`) before the
 * writer is called; then `write`.
 */
export function executeRecordWrite<B extends InsertRecordBody>(
  input: RecordWriteInput<B>,
  catalog: ConnectionCatalog,
  validate: (body: unknown) => Result<B, DomainError<'validation_failed' | 'invalid_value'>>,
  write: WriteStep<B>,
): Promise<Result<RowWriteResult, DomainError<RecordWriteErrorCode>>> {
  // `then`s, not an async frame with three `await`s (docs/ARCHITECTURE.md "Style to
  // follow"): three promises fewer a write. Every throw still arrives as a rejection.
  let charged: Promise<DomainError<'rate_limited'> | undefined>;
  try {
    charged = (input.meter ?? UNMETERED).charge();
  } catch (error) {
    return Promise.reject(error);
  }
  return charged.then((refused): Result<RowWriteResult, DomainError<RecordWriteErrorCode>> | Promise<Result<RowWriteResult, DomainError<RecordWriteErrorCode>>> => {
    if (refused !== undefined) return err(refused);
    const route = routeOf(input.route);
    if (!route.ok) return route;
    const body = validate(input.body);
    if (!body.ok) return body;
    const entity = entityOf(body.value.entity);
    if (!entity.ok) return entity;
    return writableConnection(catalog, input.principal, input.connectionId).then((connection) => {
      if (!connection.ok) return connection;
      return write(connection.value, entity.value, body.value, route.value).then((written) => (written.ok ? ok({ rows_affected: written.value.rowsAffected }) : written));
    });
  });
}
