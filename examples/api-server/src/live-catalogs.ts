import {
  InMemoryAgentCatalog,
  InMemoryConnectionCatalog,
  InMemoryCredentialStore,
  InMemoryWebhookEndpointCatalog,
  type Agent,
  type AgentCatalog,
  type Connection,
  type ConnectionCatalog,
  type CredentialStore,
  type StoredCredential,
  type WebhookEndpointCatalog,
} from '@svc/core';
import type { AccountSettings } from './settings.js';

/**
 * How much one configuration's accounts hold: what the reload log line reports (never a
 * secret, digest or id). Source: docs/decisions.md "Configuration reload".
 */
export interface CatalogCounts {
  readonly accounts: number;
  readonly apiKeys: number;
  readonly oauthTokens: number;
  readonly agents: number;
  readonly connections: number;
}

/** Counts the accounts, credentials, agents and connections of `accounts`. */
export function catalogCounts(accounts: readonly AccountSettings[]): CatalogCounts {
  const sum = (f: (a: AccountSettings) => number): number => accounts.reduce((n, a) => n + f(a), 0);
  return {
    accounts: accounts.length,
    apiKeys: sum((a) => a.apiKeys.length),
    oauthTokens: sum((a) => a.oauthTokens.length),
    agents: sum((a) => a.agents.length),
    connections: sum((a) => a.connections.length),
  };
}

/** The three in-memory catalogs built from one configuration's accounts. */
interface Snapshot {
  readonly credentials: CredentialStore;
  readonly connections: ConnectionCatalog;
  readonly agents: AgentCatalog;
  readonly webhookEndpoints: WebhookEndpointCatalog;
}

function snapshotOf(accounts: readonly AccountSettings[]): Snapshot {
  const credentials: StoredCredential[] = accounts.flatMap((a) => [
    ...a.apiKeys.map((k) => ({ credentialId: k.id, accountId: a.id, kind: 'api_key' as const, sha256: k.sha256, scopes: [], ...(k.expiresAt ? { expiresAt: k.expiresAt } : {}) })),
    ...a.oauthTokens.map((t) => ({ credentialId: t.id, accountId: a.id, kind: 'oauth' as const, sha256: t.sha256, scopes: t.scopes, ...(t.expiresAt ? { expiresAt: t.expiresAt } : {}) })),
  ]);
  const connections: Connection[] = accounts.flatMap((a) => a.connections.map((c) => ({ connectionId: c.id, accountId: a.id, type: c.type, ...(c.name ? { name: c.name } : {}) })));
  const agents: Agent[] = accounts.flatMap((a) =>
    a.agents.map((g) => ({ agentId: g.id, accountId: a.id, ...(g.name ? { name: g.name } : {}), ...(g.description ? { description: g.description } : {}) })),
  );
  return {
    credentials: new InMemoryCredentialStore(credentials),
    connections: new InMemoryConnectionCatalog(connections),
    agents: new InMemoryAgentCatalog(agents),
    webhookEndpoints: new InMemoryWebhookEndpointCatalog(
      accounts.flatMap((a) => a.webhookEndpoints.map((w) => ({ endpointId: w.id, accountId: a.id, url: w.url, secret: w.secret, events: w.events }))),
    ),
  };
}

/**
 * The catalogs the use cases read (credentials by SHA-256 digest, connections, agents),
 * built from the configured accounts and replaced whole when the configuration is
 * reloaded (docs/decisions.md "Configuration reload").
 *
 * {@link replace} builds the new catalogs first and then swaps one reference: every
 * lookup reads either the old set or the new one, never a half-built one, and no request
 * waits for a reload. A request that authenticated just before a swap finishes with the
 * credential it presented, as it would had it arrived a moment earlier.
 *
 * Lookups follow the ports' contracts: `undefined` for an unknown digest or id, never a
 * rejection (the catalogs are in memory). A list reads one configuration: a page is never
 * half old, half new (a client paging across a reload continues in the new one after the
 * last id it saw). The file records no creation time: `createdAt` is absent (discovery
 * shows `created_at: null`).
 */
export class LiveCatalogs {
  private current: Snapshot;

  /** Credentials of the current configuration (core `CredentialStore`). */
  readonly credentials: CredentialStore = { findByDigest: (sha256) => this.current.credentials.findByDigest(sha256) };
  /** Connections of the current configuration (core `ConnectionCatalog`). */
  readonly connections: ConnectionCatalog = {
    findById: (connectionId) => this.current.connections.findById(connectionId),
    listByAccount: (accountId, page) => this.current.connections.listByAccount(accountId, page),
  };
  /** Agents of the current configuration (core `AgentCatalog`). */
  readonly agents: AgentCatalog = {
    findById: (agentId) => this.current.agents.findById(agentId),
    listByAccount: (accountId, page) => this.current.agents.listByAccount(accountId, page),
  };

  /** Webhook endpoints of the current configuration (core `WebhookEndpointCatalog`; docs/decisions.md "Webhooks"). */
  readonly webhookEndpoints: WebhookEndpointCatalog = {
    listByAccount: (accountId) => this.current.webhookEndpoints.listByAccount(accountId),
    findById: (endpointId) => this.current.webhookEndpoints.findById(endpointId),
  };

  /** @param accounts - the configured accounts (settings already validated). */
  constructor(accounts: readonly AccountSettings[]) {
    this.current = snapshotOf(accounts);
  }

  /** Replaces every catalog with those of `accounts`, at once. */
  replace(accounts: readonly AccountSettings[]): void {
    this.current = snapshotOf(accounts);
  }
}
