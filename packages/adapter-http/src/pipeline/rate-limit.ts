import type { DomainErrorCode, Metered } from '@svc/core';
import type { Context } from 'koa';
import { HttpProblem } from '../problem.js';
import { setRateLimitHeaders } from '../rate-limit-headers.js';
import { jsonBody } from './json-body.js';
import { sendError, sendJson } from './problem-details.js';

/**
 * Reads the JSON body (see {@link jsonBody}). When it cannot be read (415, 413,
 * `invalid_json`), the authenticated request is still charged, so that its answer carries
 * the rate-limit headers like every authenticated answer (CONTRACT.md "Rate limits"):
 * `charge` runs the use case without a body, which fails validation before anything is
 * written or queued, and only its rate-limit decision is used (429 when over the limit).
 *
 * @throws HttpProblem: the body's, or `rate_limited` when the charge was refused.
 */
export async function meteredBody(ctx: Context, limitBytes: number, charge: () => Promise<Metered<unknown, DomainErrorCode>>): Promise<unknown> {
  try {
    return await jsonBody(ctx, limitBytes);
  } catch (error) {
    if (!(error instanceof HttpProblem)) throw error;
    const { result, rateLimit } = await charge();
    setRateLimitHeaders(ctx.res, rateLimit);
    if (!rateLimit.allowed && !result.ok) throw new HttpProblem(result.error.code, result.error.detail);
    throw error;
  }
}

/**
 * Sends a metered use-case answer: the rate-limit headers of its decision, then
 * `{"data": value}` with `status`, or the problem details of its error.
 * Source: CONTRACT.md "Envelope and errors", "Rate limits".
 */
export function sendMetered<T, C extends DomainErrorCode>(ctx: Context, metered: Metered<T, C>, status: number): void {
  setRateLimitHeaders(ctx.res, metered.rateLimit);
  if (metered.result.ok) sendJson(ctx, status, { data: metered.result.value });
  else sendError(ctx, metered.result.error);
}
