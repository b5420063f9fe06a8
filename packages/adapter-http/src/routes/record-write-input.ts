import type { RecordWriteInput, WireBody } from '@svc/core';
import type { Context } from 'koa';
import { connectionIdParameter, contentEncodingParameter, egressHeaderParameter, idempotencyKeyParameter, type Json } from '../openapi/components.js';
import { pathParam, requestHeader, type Caller, type Listener } from '../route.js';
import type { EnforcedLimits } from '../settings.js';

/** A row write's input as read from its request: the body as sent, for the core to validate. */
export type RowWriteRequest = RecordWriteInput & { readonly body: WireBody };

/**
 * The input of a row write (insert or update) from its request and its JSON `body` (read
 * by `jsonBody`, held to the body limit): the caller, the `connection_id` path parameter,
 * and the route: always `egress` on the egress listener, else the `X-Svc-Egress` header
 * for the core to check. Source: docs/api-spec.md "POST .../records"; docs/CONTRACT.md "Addresses".
 */
export function rowWriteRequest(ctx: Context, caller: Caller, listener: Listener, body: WireBody): RowWriteRequest {
  // The caller's members named, not spread: see routes/start-run.ts.
  return {
    principal: caller.principal,
    meter: caller.meter,
    connectionId: pathParam(ctx, 'connection_id'),
    body,
    route: listener === 'egress' ? 'egress' : { egressHeader: requestHeader(ctx, 'x-svc-egress') },
  };
}

const EGRESS_DESCRIPTION = '`true` routes the database traffic through the stable egress IP address that can be allowlisted; `false` or absent: the default route.';

/** The OpenAPI parameters of a row write on `listener` (no `X-Svc-Egress` on the egress address). */
export function recordWriteParameters(listener: Listener, limits: EnforcedLimits): Json[] {
  return listener === 'egress'
    ? [connectionIdParameter, idempotencyKeyParameter, contentEncodingParameter(limits)]
    : [connectionIdParameter, egressHeaderParameter(EGRESS_DESCRIPTION), idempotencyKeyParameter, contentEncodingParameter(limits)];
}
