import type { Agent } from '../domain/agent.js';
import type { Connection } from '../domain/connection.js';
import { pageByKey, type Page, type PageRequest } from '../domain/page.js';
import type { AgentCatalog } from '../ports/agent-catalog.js';
import type { ConnectionCatalog } from '../ports/connection-catalog.js';
import type { CredentialStore, StoredCredential } from '../ports/credential-store.js';

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
