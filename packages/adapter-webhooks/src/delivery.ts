import { createHash } from 'node:crypto';
import { viewOf, type RunEvent, type RunEventType } from '@svc/core';

/**
 * One delivery: one run event for one endpoint, attempted until it succeeds, its endpoint
 * goes, or its retry window ends (docs/CONTRACT.md "Runs lifecycle", webhooks). Plain JSON,
 * so that a BullMQ job can hold it; it holds neither the endpoint's URL nor its secret
 * (both are read from the catalog at each attempt, so Redis never holds a secret).
 */
export interface WebhookDelivery {
  /** `webhook-id`: the same on every attempt; `msg_` + 32 hex digits, derived from endpoint, run, event type and time. */
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly accountId: string;
  readonly runId: string;
  readonly type: RunEventType;
  /** When the event happened, ISO 8601 (the body's `timestamp`); the retry window counts from it. */
  readonly eventAt: string;
  /** The exact body sent (and signed) on every attempt: `{type, timestamp, data: run}`. */
  readonly body: string;
}

/**
 * The `webhook-id` of `event` for `endpointId`: `msg_` + the first 32 hex digits of the
 * SHA-256 of endpoint, run, type and time. Deterministic, so that the same event told twice
 * (a retried notification) makes the same delivery, which a queue keeps once.
 */
export function deliveryIdOf(endpointId: string, event: Omit<RunEvent, 'id'>): string {
  const digest = createHash('sha256').update([endpointId, event.run.runId, event.type, event.at.toISOString()].join('\u0000')).digest('hex');
  return `msg_${digest.slice(0, 32)}`;
}

/**
 * The delivery of `event` to `endpointId`: body `{type, timestamp, data}` where `data` is the
 * public run view (core `viewOf`, the `data` of `GET {status_url}`).
 * @param baseUrl - the API's base URL (for the run's `status_url`).
 */
export function deliveryOf(endpointId: string, event: Omit<RunEvent, 'id'>, baseUrl: string): WebhookDelivery {
  const timestamp = event.at.toISOString();
  return {
    deliveryId: deliveryIdOf(endpointId, event),
    endpointId,
    accountId: event.run.accountId,
    runId: event.run.runId,
    type: event.type,
    eventAt: timestamp,
    body: JSON.stringify({ type: event.type, timestamp, data: viewOf(event.run, baseUrl) }),
  };
}
