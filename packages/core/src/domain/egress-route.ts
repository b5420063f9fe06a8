/**
 * How database traffic of a row write leaves this service.
 *
 * - `default`: the ordinary route.
 * - `egress`: from the configured stable egress source address that customers
 *   allowlist (header `X-Svc-Egress: true`, or a request to `{egress_url}`).
 *
 * Source: api-spec.md "POST .../records" (`X-Svc-Egress`), CONTRACT.md "Addresses".
 */
export type EgressRoute = 'default' | 'egress';
