/**
 * What the same-work peers share: their configuration, the credential lookup, the
 * all-or-none charge of rate-limiter-flexible limiters and the rate-limit headers. Each
 * is the plain code an engineer writing one endpoint by hand would write; none of it is
 * the project's (the peers import only `@svc/core`'s schemas).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { filesRunBodySchema, insertRecordBodySchema, messageRunBodySchema, startRunBodySchema } from '@svc/core';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import Koa from 'koa';
import getRawBody from 'raw-body';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { PeerConfig } from '../../api-config.js';

/** The peer's configuration: the JSON of its one command-line argument. */
export function readPeerConfig(): PeerConfig {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('usage: peer CONFIG_JSON');
  return JSON.parse(raw) as PeerConfig;
}

/**
 * ajv validators of `@svc/core`'s request body schemas, compiled once: the run-start
 * body (`StartRunRequest`, its `oneOf` of the two options as published) and the insert
 * body. Same ajv options as the core (JSON Schema 2020-12, strict, all errors, formats).
 */
export function bodyValidators(): { readonly startRun: ValidateFunction; readonly insert: ValidateFunction } {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, unicodeRegExp: true });
  // ajv-formats is CommonJS: under NodeNext its default import is the module object.
  (addFormatsModule as unknown as { default: (a: Ajv2020) => void }).default(ajv);
  ajv.addSchema([filesRunBodySchema, messageRunBodySchema]);
  return { startRun: ajv.compile(startRunBodySchema), insert: ajv.compile(insertRecordBodySchema) };
}

/** The account and key a request's credential belongs to. */
export interface Caller {
  readonly keyId: string;
  readonly accountId: string;
}

/**
 * A lookup of `X-API-Key`, else `Authorization: Bearer`, by the SHA-256 hex digest of the
 * secret in a Map (the project keeps only digests too). `undefined`: no or unknown key.
 */
export function credentialLookup(config: PeerConfig): (headers: IncomingHttpHeaders) => Caller | undefined {
  const byDigest = new Map(config.keys.map((k) => [k.sha256, { keyId: k.keyId, accountId: k.accountId }]));
  return (headers) => {
    let secret = headers['x-api-key'];
    if (secret === undefined) {
      const bearer = /^Bearer\s+(\S+)\s*$/iu.exec(headers.authorization ?? '');
      secret = bearer?.[1];
    }
    if (typeof secret !== 'string' || secret === '') return undefined;
    return byDigest.get(createHash('sha256').update(secret).digest('hex'));
  };
}

/** One window to charge: a limiter (its `points` is the limit) and the key. */
export interface Charge {
  readonly limiter: RateLimiterAbstract;
  readonly key: string;
  readonly limit: number;
}

/** The decision reported in the rate-limit headers (the tightest window). */
export interface Decision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window resets, rounded up. */
  readonly resetSeconds: number;
  /** Unix time of the reset, seconds, rounded up. */
  readonly resetAt: number;
}

function decisionOf(charge: Charge, res: RateLimiterRes | null, now: number, allowed: boolean): Decision {
  const consumed = res?.consumedPoints ?? 0;
  const msLeft = res !== null && res.msBeforeNext > 0 ? res.msBeforeNext : 0;
  return {
    allowed,
    limit: charge.limit,
    remaining: Math.max(0, charge.limit - consumed),
    resetSeconds: Math.ceil(msLeft / 1000),
    resetAt: Math.ceil((now + msLeft) / 1000),
  };
}

/**
 * All or none, as the project: reads every window (`get`), refuses without charging
 * when one is full, else charges each one point (`penalty`). Reports the refusing
 * window, else the one with the fewest requests left (the first on a tie).
 */
export async function checkThenCharge(charges: readonly Charge[]): Promise<Decision> {
  const current = await Promise.all(charges.map((c) => c.limiter.get(c.key)));
  const now = Date.now();
  const full = charges.findIndex((c, i) => {
    const res = current[i];
    return res !== null && res !== undefined && res.msBeforeNext > 0 && res.consumedPoints >= c.limit;
  });
  if (full >= 0) return decisionOf(charges[full] as Charge, current[full] ?? null, now, false);
  const charged = await Promise.all(charges.map((c) => c.limiter.penalty(c.key, 1)));
  const after = Date.now();
  let pick: Decision | undefined;
  charges.forEach((c, i) => {
    const d = decisionOf(c, charged[i] ?? null, after, true);
    if (pick === undefined || d.remaining < pick.remaining) pick = d;
  });
  return pick as Decision;
}

/**
 * {@link checkThenCharge}, one call at a time: in memory the reads and charges of two
 * requests could otherwise interleave between their microtasks and both pass a window
 * with one request left. (On Redis the peer does not serialise: a chain would hold every
 * request for the previous one's round trips.)
 */
export function serialised(): (charges: readonly Charge[]) => Promise<Decision> {
  let tail: Promise<unknown> = Promise.resolve();
  return (charges) => {
    const result = tail.then(() => checkThenCharge(charges));
    tail = result.catch(() => undefined);
    return result;
  };
}

/** `RateLimit-*` and `x-ratelimit-*` (and `Retry-After` when refused), as the project sends them. */
export function setRateLimitHeaders(res: ServerResponse, d: Decision): void {
  const limit = String(d.limit);
  const remaining = String(d.remaining);
  res.setHeader('RateLimit-Limit', limit);
  res.setHeader('RateLimit-Remaining', remaining);
  res.setHeader('RateLimit-Reset', String(d.resetSeconds));
  res.setHeader('x-ratelimit-limit', limit);
  res.setHeader('x-ratelimit-remaining', remaining);
  res.setHeader('x-ratelimit-reset', String(d.resetAt));
  if (!d.allowed) res.setHeader('Retry-After', String(Math.max(1, d.resetSeconds)));
}

/** The run-start answer's `message` for a valid body (Option 1 files, or Option 2). */
export function runMessage(body: { files?: readonly unknown[]; background_files?: readonly unknown[] }): string {
  if (body.files === undefined) return 'Run queued with a message.';
  const n = body.files.length;
  const bg = body.background_files?.length ?? 0;
  return `Run queued with ${n} file${n === 1 ? '' : 's'}${bg > 0 ? ` and ${bg} background file${bg === 1 ? '' : 's'}` : ''}.`;
}

/** A problem answer (RFC 9457), for the paths the bench does not measure. */
export function problemBody(status: number, code: string, detail: string): string {
  return JSON.stringify({ type: 'about:blank', title: code, status, code, detail });
}

/** Largest request body, bytes: 1 MiB, the project's limit. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Serves `handler` on 127.0.0.1:`port` (keep-alive 5 s, as the baselines); on SIGTERM
 * closes the server and every connection, awaits `cleanup`, exits 0.
 */
export function listen(handler: RequestListener, port: number, cleanup: () => Promise<void> = () => Promise.resolve()): Server {
  const server = createServer({ keepAliveTimeout: 5_000 }, handler);
  server.listen(port, '127.0.0.1');
  process.once('SIGTERM', () => {
    server.close(() => void cleanup().finally(() => process.exit(0)));
    server.closeAllConnections();
  });
  return server;
}

/** Answers problem details, as the peers' error answers are (minimal: no request measures them). */
export function problem(ctx: Koa.Context, status: number, code: string, detail: string): void {
  ctx.status = status;
  ctx.type = 'application/problem+json';
  ctx.body = problemBody(status, code, detail);
}

/**
 * The Koa application every Koa peer shares: `GET /livez` answers 200; `POST` on `path`
 * (a regular expression) gets a fresh `X-Request-Id`, the credential looked up by digest
 * (401 without one), `application/json` (415 otherwise) read with raw-body up to
 * {@link BODY_LIMIT_BYTES} and `JSON.parse` (413 / 400), then `handle`; anything else 404.
 */
export function peerApp(
  config: PeerConfig,
  path: RegExp,
  handle: (ctx: Koa.Context, match: RegExpExecArray, caller: Caller, body: unknown) => Promise<void>,
): Koa {
  const authenticate = credentialLookup(config);
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method === 'GET' && ctx.path === '/livez') {
      ctx.body = 'ok';
      return;
    }
    const match = ctx.method === 'POST' ? path.exec(ctx.path) : null;
    if (match === null) return problem(ctx, 404, 'not_found', 'No such route.');
    ctx.set('X-Request-Id', randomUUID());
    const caller = authenticate(ctx.headers);
    if (caller === undefined) return problem(ctx, 401, 'invalid_credential', 'Unknown or missing API key.');
    if (ctx.request.is('application/json') === false) return problem(ctx, 415, 'unsupported_media_type', 'Send application/json.');
    let body: unknown;
    try {
      const length = ctx.get('content-length');
      body = JSON.parse(await getRawBody(ctx.req, { limit: BODY_LIMIT_BYTES, encoding: 'utf8', ...(length !== '' ? { length } : {}) }));
    } catch (error) {
      const tooLarge = (error as { type?: unknown }).type === 'entity.too.large';
      return problem(ctx, tooLarge ? 413 : 400, tooLarge ? 'payload_too_large' : 'invalid_json', 'The body is not JSON of at most 1 MiB.');
    }
    return handle(ctx, match, caller, body);
  });
  return app;
}
