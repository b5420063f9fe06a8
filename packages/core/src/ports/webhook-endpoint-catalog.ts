import type { WebhookEndpoint } from '../domain/webhook-endpoint.js';

/**
 * Knows the webhook endpoints of every account (docs/CONTRACT.md "Runs lifecycle",
 * webhooks). Read when a run event is published, and again before every delivery attempt
 * (a removed endpoint gets no more attempts; a changed secret signs the next one).
 *
 * Contract: `listByAccount` answers only that account's endpoints, in ascending order of
 * `endpointId` (an unknown account: empty); `findById` resolves `undefined` for an
 * unknown id. Both reject only when the catalog itself cannot be reached (the core's
 * `DependencyUnavailableError`).
 */
export interface WebhookEndpointCatalog {
  /** @param accountId - the run's account. */
  listByAccount(accountId: string): Promise<readonly WebhookEndpoint[]>;
  /** @param endpointId - an endpoint id. */
  findById(endpointId: string): Promise<WebhookEndpoint | undefined>;
}
