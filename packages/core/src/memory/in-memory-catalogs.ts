import type { Agent } from '../domain/agent.js';
import type { Connection } from '../domain/connection.js';
import { pageByKey, type Page, type PageRequest } from '../domain/page.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { CredentialStore, StoredCredential } from '../ports/credential-store.js';
import type { WebhookEndpoint } from '../domain/webhook-endpoint.js';
import type { WebhookEndpointCatalog } from '../ports/webhook-endpoint-catalog.js';

/** Credentials held in memory, keyed by SHA-256 digest. Embedded default and fake. */
export class InMemoryCredentialStore implements CredentialStore {
  private readonly byDigest = new Map<string, StoredCredential>();

  /** @param credentials - initial credentials. */
  constructor(credentials: Iterable<StoredCredential> = []) {
    for (const c of credentials) this.add(c);
  }

  /** Adds or replaces a credential (by digest). */
  add(credential: StoredCredential): void {
    this.byDigest.set(credential.sha256.toLowerCase(), credential);
  }

  /** Removes the credential with this id (revocation). */
  revoke(credentialId: string): void {
    for (const [digest, c] of this.byDigest) if (c.credentialId === credentialId) this.byDigest.delete(digest);
  }

  findByDigest(sha256: string): Promise<StoredCredential | undefined> {
    return Promise.resolve(this.byDigest.get(sha256.toLowerCase()));
  }
}

/** Connections held in memory, keyed by lower-case UUID. Embedded default and fake. */
export class InMemoryConnectionCatalog implements ConnectionCatalog {
  private readonly byId = new Map<string, Connection>();

  constructor(connections: Iterable<Connection> = []) {
    for (const c of connections) this.add(c);
  }

  /** Adds or replaces a connection. */
  add(connection: Connection): void {
    this.byId.set(connection.connectionId.toLowerCase(), connection);
  }

  findById(connectionId: string): Promise<Connection | undefined> {
    return Promise.resolve(this.byId.get(connectionId.toLowerCase()));
  }

  /** See {@link ConnectionCatalog.listByAccount}: by lower-case id. */
  listByAccount(accountId: string, page: PageRequest): Promise<Page<Connection>> {
    const own = [...this.byId.values()].filter((c) => c.accountId === accountId);
    return Promise.resolve(pageByKey(own, (c) => c.connectionId.toLowerCase(), page));
  }
}

/** Agents held in memory. Embedded default and fake. */
export class InMemoryAgentCatalog implements AgentCatalog {
  private readonly byId = new Map<string, Agent>();

  constructor(agents: Iterable<Agent> = []) {
    for (const a of agents) this.add(a);
  }

  /** Adds or replaces an agent. */
  add(agent: Agent): void {
    this.byId.set(agent.agentId, agent);
  }

  findById(agentId: string): Promise<Agent | undefined> {
    return Promise.resolve(this.byId.get(agentId));
  }

  /** See {@link AgentCatalog.listByAccount}: by id. */
  listByAccount(accountId: string, page: PageRequest): Promise<Page<Agent>> {
    const own = [...this.byId.values()].filter((a) => a.accountId === accountId);
    return Promise.resolve(pageByKey(own, (a) => a.agentId, page));
  }
}

/** Webhook endpoints held in memory. Embedded default and fake. */
export class InMemoryWebhookEndpointCatalog implements WebhookEndpointCatalog {
  private readonly byId = new Map<string, WebhookEndpoint>();
  /**
   * Each account's list as `listByAccount` answers it (frozen), made on first read and
   * dropped at every change: the webhook notifier lists the run's account at every run
   * start, and copying and sorting every endpoint each time cost the run start heap.
   */
  private readonly byAccount = new Map<string, readonly WebhookEndpoint[]>();

  constructor(endpoints: Iterable<WebhookEndpoint> = []) {
    for (const e of endpoints) this.add(e);
  }

  /** Adds or replaces an endpoint. */
  add(endpoint: WebhookEndpoint): void {
    this.byId.set(endpoint.endpointId, endpoint);
    this.byAccount.clear();
  }

  /** Removes the endpoint with this id (absent: nothing happens). */
  remove(endpointId: string): void {
    this.byId.delete(endpointId);
    this.byAccount.clear();
  }

  /** See {@link WebhookEndpointCatalog.listByAccount}: by endpoint id; the same frozen array until the catalog changes. */
  listByAccount(accountId: string): Promise<readonly WebhookEndpoint[]> {
    let own = this.byAccount.get(accountId);
    if (own === undefined) {
      own = Object.freeze([...this.byId.values()].filter((e) => e.accountId === accountId).sort((a, b) => (a.endpointId < b.endpointId ? -1 : a.endpointId > b.endpointId ? 1 : 0)));
      this.byAccount.set(accountId, own);
    }
    return Promise.resolve(own);
  }

  /** See {@link WebhookEndpointCatalog.findById}. */
  findById(endpointId: string): Promise<WebhookEndpoint | undefined> {
    return Promise.resolve(this.byId.get(endpointId));
  }
}
