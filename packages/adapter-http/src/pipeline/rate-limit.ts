import type { DomainError, RequestMeter, Result } from '@svc/core';
import type { Context } from 'koa';
import { HttpProblem } from '../problem.js';
import { setRateLimitHeaders } from '../rate-limit-headers.js';
import type { Caller } from '../route.js';
import { sendError, sendJson } from './problem-details.js';

/** The default of `meteredRoute`'s `deferred`: one function, not a new one each request. */
const NEVER_DEFERRED = (): boolean => false;

/**
 * The rate-limit stage of an authenticated route: runs the route's handler, and makes
 * sure the request was charged exactly once (core `RequestMeter`) and that its answer
 * carries the rate-limit headers of that charge, like every authenticated answer
 * (docs/CONTRACT.md "Rate limits"):
 * - the handler charged (through the use case): {@link sendResult} set the headers;
 * - the body could not be read (415, 413, `invalid_json`: an {@link HttpProblem}), so the
 *   use case never ran: the request is charged here; over the limit the answer is 429
 *   `rate_limited`, else the body's problem;
 * - the handler finished without charging: charged here; over the limit the answer
 *   becomes 429 `rate_limited`;
 * - the handler threw anything else (a lost dependency: 503, a bug: 500) before
 *   charging: charged here too, and the throw passes on with the headers; a charge that
 *   itself fails (the store is lost as well) is dropped so the first failure answers.
 *
 * @param deferred - asked when the handler finished without charging: true leaves the
 *   charge to what follows the stage (an MCP tool call, charged by its use case); default
 *   never.
 */
export function meteredRoute(
  ctx: Context,
  caller: Caller,
  handle: (ctx: Context, caller: Caller) => Promise<void>,
  deferred: () => boolean = NEVER_DEFERRED,
): Promise<void> {
  let handled: Promise<void>;
  try {
    handled = handle(ctx, caller);
  } catch (error) {
    handled = Promise.reject(error);
  }
  // A `then`, not an async frame: the handler charged on nearly every request, and an async
  // frame around it cost each ~0.5 KiB of heap (`pnpm bench:instructions`, bytes allocated).
  return handled.then(
    () => (caller.meter.charged || deferred() ? undefined : chargeAfter(ctx, caller.meter)),
    (error: unknown) => chargeAfterThrow(ctx, caller.meter, error),
  );
}

/** The handler finished without charging: charged now; over the limit, the answer becomes 429. */
async function chargeAfter(ctx: Context, meter: RequestMeter): Promise<void> {
  const refused = await meter.charge();
  setDecisionHeaders(ctx, meter);
  if (refused !== undefined) sendError(ctx, refused);
}

/** The handler threw: charged when it had not been, then the throw (or a 429 for an unread body) passes on. */
async function chargeAfterThrow(ctx: Context, meter: RequestMeter, error: unknown): Promise<never> {
  if (!meter.charged) {
    // A lost rate-limit store must not hide the first failure: charged when it can be.
    const refused = await meter.charge().catch(() => undefined);
    if (refused !== undefined && error instanceof HttpProblem) {
      setDecisionHeaders(ctx, meter);
      throw new HttpProblem(refused.code, refused.detail);
    }
  }
  setDecisionHeaders(ctx, meter);
  throw error;
}

function setDecisionHeaders(ctx: Context, meter: RequestMeter): void {
  if (meter.decision !== undefined) setRateLimitHeaders(ctx.res, meter.decision);
}

/**
 * Sends a use case's result: the rate-limit headers of the request's charge (before the
 * body's headers), then `{"data": value}` with `status`, or the problem details of the
 * error. Source: docs/CONTRACT.md "Envelope and errors", "Rate limits".
 */
export function sendResult<T>(ctx: Context, meter: RequestMeter, result: Result<T, DomainError>, status: number): void {
  setDecisionHeaders(ctx, meter);
  if (result.ok) sendJson(ctx, status, { data: result.value });
  else sendError(ctx, result.error);
}

/**
 * As {@link sendResult}, with the success body made by `bodyOf` instead of `{"data":
 * value}`: for answers shaped otherwise (a list page with `next_cursor`, the connection
 * list's bare array). `bodyOf` may set headers (`Link`).
 */
export function sendResultAs<T>(ctx: Context, meter: RequestMeter, result: Result<T, DomainError>, status: number, bodyOf: (value: T) => unknown): void {
  setDecisionHeaders(ctx, meter);
  if (result.ok) sendJson(ctx, status, bodyOf(result.value));
  else sendError(ctx, result.error);
}

/**
 * As {@link sendResult}, for a success without a body: the rate-limit headers, then
 * `status` (204) and no body, or the problem details of the error.
 */
export function sendResultEmpty(ctx: Context, meter: RequestMeter, result: Result<unknown, DomainError>, status = 204): void {
  setDecisionHeaders(ctx, meter);
  if (!result.ok) {
    sendError(ctx, result.error);
    return;
  }
  ctx.status = status;
  ctx.body = null;
}
