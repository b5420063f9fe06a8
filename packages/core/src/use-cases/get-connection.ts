import { isUuid } from '../domain/connection.js';
import type { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import { connectionViewOf, type ConnectionView, type ConnectionViewSettings } from './connection-view.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';
import { connectionNotFound } from './record-write.js';

/** Input of {@link GetConnection}. */
export interface GetConnectionInput {
  /** The authenticated caller (an API key). */
  readonly principal: Principal;
  /** This call's rate-limit charge (`rateLimits.meterFor(principal)`); default `UNMETERED` (not limited). */
  readonly meter?: RequestMeter;
  /** `connection_id` from the path (a UUID, any case). */
  readonly connectionId: string;
}

/** Codes {@link GetConnection} can produce. */
export type GetConnectionErrorCode = 'not_found' | 'rate_limited';

/**
 * Reads one of the caller's connections: `GET /api/v1/connections/{connection_id}`.
 * Charges the request first; a malformed id, a missing connection and another account's
 * answer `not_found` alike (the detail row writes give). Never a password, user name or host.
 * Source: docs/CONTRACT.md "Discovery", "Isolation between accounts".
 *
 * @throws DependencyUnavailableError when the catalog cannot be reached (HTTP 503).
 */
export class GetConnection {
  constructor(
    private readonly connections: ConnectionCatalog,
    private readonly settings: ConnectionViewSettings,
  ) {}

  /** @returns the connection view (answered 200), or an error with its code. */
  async execute(input: GetConnectionInput): Promise<Result<ConnectionView, DomainError<GetConnectionErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const connection = isUuid(input.connectionId) ? await this.connections.findById(input.connectionId.toLowerCase()) : undefined;
    if (connection === undefined || connection.accountId !== input.principal.accountId) return err(connectionNotFound(input.connectionId));
    return ok(connectionViewOf(connection, this.settings));
  }
}
