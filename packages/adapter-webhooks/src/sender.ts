import { errorTypeOf, type WebhookAttemptResult } from '@svc/core';
import type { Agent } from 'undici';
import { checkLiteralHost, guardedLookup, WebhookAddressRefusedError } from './address-guard.js';
import { ATTEMPT_TIMEOUT_MS } from './retry-schedule.js';

/** One signed request to send. */
export interface WebhookRequest {
  /** The endpoint's URL (`http:` or `https:`). */
  readonly url: string;
  /** `webhook-id`, `webhook-timestamp`, `webhook-signature`, and any other header. */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes that were signed (JSON text, UTF-8). */
  readonly body: string;
}

/** How one attempt ended. */
export interface WebhookAttemptOutcome {
  /** See core `WebhookAttemptResult`. */
  readonly result: WebhookAttemptResult;
  /** The answer's status, when one came. */
  readonly statusCode?: number;
  /** The error's type (class name and code, core `errorTypeOf`), when no answer came or the address was refused. */
  readonly errorType?: string;
  /** From the start of the attempt to its end, in seconds. */
  readonly durationSeconds: number;
}

/** What a sender needs; every field optional. */
export interface WebhookSenderOptions {
  /** Config `webhooks.allow_private_addresses`: let loopback, private, … addresses through (tests, private networks). Default false. */
  readonly allowPrivateAddresses?: boolean;
  /** Bound of one attempt in ms (connect, request, answer's headers and bounded body). Default {@link ATTEMPT_TIMEOUT_MS} (15 s). */
  readonly timeoutMs?: number;
  /** Bytes of an answer's body read at most, then dropped. Default 4096. */
  readonly maxResponseBytes?: number;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Sends webhook requests with undici (docs/decisions.md "Webhooks"): `POST`, no redirect
 * followed (undici's `request` follows none; a 3xx is an `http_error`), at most
 * `maxResponseBytes` of the answer read then dropped (undici's `body.dump`), everything
 * within `timeoutMs` (the contract's 15 s: one `AbortSignal` over the whole attempt, and
 * undici's connect/headers/body timeouts as a second bound). The SSRF rule is enforced on
 * the address actually connected to: an IP literal host is checked before connecting, a
 * name through the Agent's `connect.lookup` ({@link guardedLookup}).
 * undici is imported at the first attempt, not with the package: a process that never sends
 * a webhook does not hold it (~9 MiB of RSS measured at start; bench/BENCHMARKS.md
 * "RSS idle").
 * Never rejects: every failure is an outcome.
 */
export class UndiciWebhookSender {
  private undici: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;
  private closed = false;
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;

  /** @param options - see {@link WebhookSenderOptions}. */
  constructor(options: WebhookSenderOptions = {}) {
    this.allowPrivate = options.allowPrivateAddresses ?? false;
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? 4096;
  }

  private client(): Promise<{ agent: Agent; request: typeof import('undici').request }> {
    this.undici ??= import('undici').then(({ Agent, request }) => ({
      agent: new Agent({
        connect: { lookup: guardedLookup(this.allowPrivate), timeout: this.timeoutMs },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        // Receivers are many and rarely hit twice in a row: keep idle sockets briefly.
        keepAliveTimeout: 4_000,
      }),
      request,
    }));
    return this.undici;
  }

  /** Sends one attempt. Never rejects. */
  async send(webhook: WebhookRequest): Promise<WebhookAttemptOutcome> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      checkLiteralHost(new URL(webhook.url), this.allowPrivate);
      if (this.closed) throw new Error('the webhook sender is closed');
      const { agent, request } = await this.client();
      const response = await request(webhook.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'user-agent': 'svc-webhooks/0.1', ...webhook.headers },
        body: webhook.body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.body.dump({ limit: this.maxResponseBytes }).catch(() => undefined);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { result: ok ? 'success' : 'http_error', statusCode: response.statusCode, durationSeconds: seconds() };
    } catch (error) {
      return { result: resultOf(error), errorType: errorTypeOf(error), durationSeconds: seconds() };
    }
  }

  /** Closes idle sockets; attempts in flight are cut. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.undici !== undefined) await (await this.undici).agent.destroy();
  }
}

function resultOf(error: unknown): WebhookAttemptResult {
  if (error instanceof WebhookAddressRefusedError) return 'refused';
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  if (name === 'TimeoutError' || name === 'AbortError' || (typeof code === 'string' && TIMEOUT_CODES.has(code))) return 'timeout';
  return 'network_error';
}
