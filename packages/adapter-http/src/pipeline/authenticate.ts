import type { Authenticate, AuthenticateInput, OperationId, RateLimitPolicy } from '@svc/core';
import type { Context } from 'koa';
import type { Caller } from '../route.js';
import { sendError } from './problem-details.js';

const WWW_AUTHENTICATE_REALM = 'Bearer realm="svc"';

/**
 * Credential extraction: hands every `X-API-Key` and `Authorization` line of the request
 * to the core's `Authenticate` for `operation`. On failure it answers 401 (missing,
 * invalid, expired or unsupported credential) or 403 (`insufficient_scope`) with the
 * `WWW-Authenticate` of RFC 6750 §3, and returns `undefined`. An authenticated caller
 * gets the request's rate-limit meter (`rateLimits.meterFor`), charged later, once.
 * Without `operation` the credential is only identified (kinds and scopes are checked
 * later, per call: the MCP endpoint). With `resourceMetadataUrl` every challenge names
 * the resource's RFC 9728 metadata (`resource_metadata="…"`, RFC 9728 §5.1).
 * Source: docs/CONTRACT.md "Authentication"; docs/api-spec.md "Authentication".
 */
export function authenticate(
  ctx: Context,
  authenticator: Pick<Authenticate, 'execute'>,
  rateLimits: Pick<RateLimitPolicy, 'meterFor'>,
  operation: OperationId | undefined,
  resourceMetadataUrl?: string,
): Promise<Caller | undefined> {
  // A `then`, not an async frame (docs/ARCHITECTURE.md "Style to follow").
  return authenticator.execute(credentialsOf(ctx, operation)).then((result) => callerOf(ctx, rateLimits, result, resourceMetadataUrl));
}

/**
 * {@link authenticate} for a route's operation, then `next` with the caller, in one step
 * (one promise fewer a request than `authenticate(…).then(…)`); answers and resolves
 * without calling `next` when the credential is refused. `next` is made once per route.
 */
export function authenticated(
  ctx: Context,
  authenticator: Pick<Authenticate, 'execute'>,
  rateLimits: Pick<RateLimitPolicy, 'meterFor'>,
  operation: OperationId,
  next: (ctx: Context, caller: Caller) => Promise<void>,
): Promise<void> {
  return authenticator.execute(credentialsOf(ctx, operation)).then((result) => {
    const caller = callerOf(ctx, rateLimits, result, undefined);
    return caller === undefined ? undefined : next(ctx, caller);
  });
}

/** What `Authenticate` is asked about the request: its credential lines, for `operation` when given. */
function credentialsOf(ctx: Context, operation: OperationId | undefined): AuthenticateInput {
  const { apiKeys, authorizations } = credentialLines(ctx.req.rawHeaders);
  return operation !== undefined ? { apiKeys, authorizations, operation } : { apiKeys, authorizations };
}

function callerOf(
  ctx: Context,
  rateLimits: Pick<RateLimitPolicy, 'meterFor'>,
  result: Awaited<ReturnType<Authenticate['execute']>>,
  resourceMetadataUrl: string | undefined,
): Caller | undefined {
  if (result.ok) {
    // For the request's log line and span (pipeline/observe-request.ts).
    ctx.state['principal'] = result.value;
    return { principal: result.value, meter: rateLimits.meterFor(result.value), requestId: ctx.state['requestId'] as string };
  }
  const error = result.error;
  // RFC 9728 §5.1: where the protected resource metadata of the resource is.
  const challenge = resourceMetadataUrl === undefined ? WWW_AUTHENTICATE_REALM : `${WWW_AUTHENTICATE_REALM}, resource_metadata="${resourceMetadataUrl}"`;
  if (error.code === 'insufficient_scope') {
    ctx.set('WWW-Authenticate', `${challenge}, error="insufficient_scope", scope="${error.requiredScope ?? ''}"`);
  } else if (error.code === 'missing_credential') {
    ctx.set('WWW-Authenticate', challenge);
  } else {
    ctx.set('WWW-Authenticate', `${challenge}, error="invalid_token"`);
  }
  sendError(ctx, error);
  return undefined;
}

/**
 * Every `X-API-Key` and `Authorization` header line, in order, from the raw header list:
 * `ctx.request.headers` keeps only the first Authorization and joins repeated X-API-Key
 * lines, which would hide a second credential (docs/CONTRACT.md "Request bodies and headers").
 * Node's `headersDistinct` gives the same lines but builds an object of every header on
 * each request; this walks the name/value pairs once and keeps two.
 */
export function credentialLines(rawHeaders: readonly string[]): { apiKeys: string[]; authorizations: string[] } {
  const apiKeys: string[] = [];
  const authorizations: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 9 && name.toLowerCase() === 'x-api-key') apiKeys.push(rawHeaders[i + 1] as string);
    else if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations.push(rawHeaders[i + 1] as string);
  }
  return { apiKeys, authorizations };
}
