import { domainError, type DomainError } from './errors.js';
import { err, ok, type Result } from './result.js';

/**
 * How database traffic of a row write leaves this service.
 *
 * - `default`: the ordinary route.
 * - `egress`: from the configured stable egress source address that customers
 *   allowlist (header `X-Svc-Egress: true`, or a request to `{egress_url}`).
 *
 * Source: docs/api-spec.md "POST .../records" (`X-Svc-Egress`), docs/CONTRACT.md "Addresses".
 */
export type EgressRoute = 'default' | 'egress';

/**
 * Reads the `X-Svc-Egress` header: absent → `default`; `true` / `false` in any case →
 * `egress` / `default`; anything else → `invalid_header` (400).
 * Source: docs/api-spec.md "POST .../records" (boolean header); docs/CONTRACT.md "Row writes".
 *
 * @param header - the raw header value, `undefined` when absent.
 */
export function parseEgressHeader(header: string | undefined): Result<EgressRoute, DomainError<'invalid_header'>> {
  if (header === undefined) return ok('default');
  const value = header.trim().toLowerCase();
  if (value === 'true') return ok('egress');
  if (value === 'false') return ok('default');
  return err(domainError('invalid_header', 'Header X-Svc-Egress must be true or false.'));
}
