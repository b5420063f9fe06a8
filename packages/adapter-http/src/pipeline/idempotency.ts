import { errorTypeOf, IDEMPOTENT_REPLAYED_HEADER, silentLogger, type ClaimIdempotencyKey, type Logger, type StoredAnswer } from '@svc/core';
import type { Context } from 'koa';
import { setRateLimitHeaders } from '../rate-limit-headers.js';
import type { Caller } from '../route.js';
import { sendError } from './problem-details.js';

/**
 * What an operation behind {@link idempotencyStage} does with one request: runs its use
 * case with `input` and sends the answer; made once per route.
 */
export type IdempotentOperation<T> = (ctx: Context, caller: Caller, input: T) => Promise<void>;

/** Headers of an answer that belong to the operation's answer, kept for replay (not `X-Request-Id`, not the rate-limit headers). */
const KEPT_HEADERS = ['Content-Type', 'Location'] as const;

/**
 * Runs one request of an operation behind the `Idempotency-Key` step (core
 * `ClaimIdempotencyKey`; docs/CONTRACT.md "Runs lifecycle"):
 * - no header: `operation` runs as usual;
 * - an invalid key (empty, too long, not printable ASCII, sent twice): 400
 *   `validation_failed` naming the header; a key used with another request: 422
 *   `idempotency_key_reused`; in flight: 409 `idempotency_key_in_use` with `Retry-After`;
 * - the same request answered before: that answer again (status, `Content-Type`,
 *   `Location`, body byte for byte) with `Idempotent-Replayed: true`, `operation` not run;
 * - else `operation` runs holding the key, and its answer is kept (2xx, 4xx but 401, 403,
 *   429) or the key freed (any other status, or a throw).
 *
 * Charging: `operation`'s use case charges a request without a key or a claimed one as
 * usual; every other outcome is charged here to the credential's window only (a replay
 * never counts against an agent's window), and over that limit answers 429 instead. A store lost before the claim
 * throws (503: nothing done); lost after the operation answered, the answer is sent anyway
 * (a 503 must not hide a done write) and the claim ends with its lease, logged.
 *
 * The stage is called as `idempotently(ctx, caller, body, input, operation)`: `body` is the
 * parsed body the operation's use case receives, fingerprinted as such; `operation` is
 * made once with the route and called as `operation(ctx, caller, input)` (no closure a
 * request).
 */
export function idempotencyStage(claimKey: Pick<ClaimIdempotencyKey, 'execute'>, logger: Logger = silentLogger) {
  // No header: the use case would answer `none`; not calling it spares every plain write
  // an await, an async frame and a trace span of its own.
  return <T>(ctx: Context, caller: Caller, body: unknown, input: T, operation: IdempotentOperation<T>): Promise<void> => {
    const lines = idempotencyKeyLines(ctx.req.rawHeaders);
    return lines === undefined ? operation(ctx, caller, input) : keyed(ctx, caller, body, input, operation, lines);
  };

  async function keyed<T>(ctx: Context, caller: Caller, body: unknown, input: T, operation: IdempotentOperation<T>, lines: readonly string[]): Promise<void> {
    const decision = await claimKey.execute({
      principal: caller.principal,
      key: lines[0],
      repeated: lines.length > 1,
      method: ctx.method,
      path: ctx.path,
      body,
    });
    if (!decision.ok) return chargedAnswer(ctx, caller, () => sendError(ctx, decision.error));
    const outcome = decision.value;
    if (outcome.kind === 'none') return operation(ctx, caller, input);
    if (outcome.kind === 'replay') return chargedAnswer(ctx, caller, () => replay(ctx, outcome.answer));
    try {
      await operation(ctx, caller, input);
    } catch (error) {
      // The throw (a lost dependency, a bug) answers; the key must not wait for its lease.
      outcome.claim.abandon().catch(() => undefined);
      throw error;
    }
    try {
      await outcome.claim.finish(answerOf(ctx));
    } catch (error) {
      logger.warn({ request_id: ctx.state['requestId'] as string, error_type: errorTypeOf(error) }, 'idempotency answer not kept; the key is held until its lease ends');
    }
  }
}

/**
 * Every `Idempotency-Key` header line, in order, or `undefined` when there is none: read
 * from the raw header list, as pipeline/authenticate.ts reads the credentials, because
 * Node's `headersDistinct` builds an object of every header of the request to give them.
 */
function idempotencyKeyLines(rawHeaders: readonly string[]): string[] | undefined {
  let lines: string[] | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 15 && name.toLowerCase() === 'idempotency-key') (lines ??= []).push(rawHeaders[i + 1] as string);
  }
  return lines;
}

/** Charges the credential's window, then sends `send`'s answer, or 429 over the limit; with the charge's headers either way. */
async function chargedAnswer(ctx: Context, caller: Caller, send: () => void): Promise<void> {
  const refused = await caller.meter.charge();
  if (caller.meter.decision !== undefined) setRateLimitHeaders(ctx.res, caller.meter.decision);
  if (refused !== undefined) sendError(ctx, refused);
  else send();
}

function answerOf(ctx: Context): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = ctx.res.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  const body: unknown = ctx.response.body;
  return { status: ctx.status, headers, body: typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.isBuffer(body) ? body : Buffer.alloc(0) };
}

function replay(ctx: Context, answer: StoredAnswer): void {
  ctx.response.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.res.setHeader(name, value);
  ctx.res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  ctx.response.body = Buffer.from(answer.body);
}
