import type { RunEventType } from './run-event.js';

/**
 * A URL an account wants its run events delivered to, as Standard Webhooks requests
 * (https://www.standardwebhooks.com). Source: docs/CONTRACT.md "Runs lifecycle"
 * (webhooks); docs/decisions.md "Webhooks".
 */
export interface WebhookEndpoint {
  /** Unique across the whole catalog, like agent ids (docs/CONTRACT.md "Isolation between accounts"). */
  readonly endpointId: string;
  /** Account that owns it; only that account's run events go to it. */
  readonly accountId: string;
  /** `http:` or `https:` URL the deliveries are POSTed to. May hold a query: never logged. */
  readonly url: string;
  /**
   * The signing secret, `whsec_` + base64 of 24..64 random bytes, as the
   * `standardwebhooks` package takes it. A secret: never logged, never listed.
   */
  readonly secret: string;
  /** Event types delivered to it (default {@link FINAL_RUN_EVENT_TYPES}); never empty. */
  readonly events: readonly RunEventType[];
}

/** Prefix of a Standard Webhooks signing secret. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * True when `secret` is `whsec_` + standard base64 (padded) of 24 to 64 bytes: what the
 * `standardwebhooks` package decodes, long enough for HMAC-SHA256 (Standard Webhooks
 * recommends 24..64 bytes).
 */
export function isWebhookSecret(secret: string): boolean {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return false;
  const body = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/u.test(body)) return false;
  const bytes = (body.length / 4) * 3 - (body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0);
  return bytes >= 24 && bytes <= 64;
}
