import { randomBytes } from 'node:crypto';
import { open, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { diff3Merge } from 'node-diff3';
import { isSeq, parse, parseDocument, type Document, type ToStringOptions } from 'yaml';
import {
  ConfigError,
  DuplicateIdError,
  parseSettings,
  type AccountSettings,
  type ConnectionSettings,
  type CredentialSettings,
  type ServerSettings,
} from '../settings.js';
import {
  CatalogAdminError,
  type AccountEntry,
  type AgentEntry,
  type CatalogAdmin,
  type CatalogSummary,
  type ConnectionEntry,
  type CredentialEntry,
  type CredentialKind,
  type MigrationReport,
  type WebhookEndpointEntry,
} from './catalog-admin.js';

/**
 * Why the YAML catalog does not administer webhook endpoints: a generated secret would be
 * written in clear into the file, and `secret_env` needs the server's environment anyway;
 * the operator edits `accounts[].webhook_endpoints` (docs/guides/webhooks.md).
 */
const EDIT_THE_FILE_FOR_ENDPOINTS = 'webhook endpoints of a YAML catalog are edited in the file: accounts[].webhook_endpoints (docs/guides/webhooks.md), then reload the server';

/** The lists of an account, by their key in the file, and their items. */
interface Lists {
  readonly api_keys: CredentialSettings;
  readonly oauth_tokens: CredentialSettings;
  readonly agents: AccountSettings['agents'][number];
  readonly connections: ConnectionSettings;
}
type ListKey = keyof Lists;

const CREDENTIAL_LIST = { api_key: 'api_keys', oauth_token: 'oauth_tokens' } as const satisfies Record<CredentialKind, ListKey>;
const NOUN: Record<ListKey, string> = { api_keys: 'API key', oauth_tokens: 'OAuth token', agents: 'agent', connections: 'connection' };

/** How yaml renders a document: `[runs:write, runs:read]`, as config.example.yaml writes flow sequences. */
const RENDERING: ToStringOptions = { flowCollectionPadding: false };

/**
 * The edited document as text, in the original's formatting wherever the edit did not
 * reach. yaml's Document API keeps comments but renders the whole file anew: trailing
 * comments lose their alignment, and a comment continued on the next lines moves below its
 * key. So three texts are merged line by line (diff3, node-diff3): the original file, yaml's
 * rendering of it before the edit (`unchanged`), and yaml's rendering after it. Lines the
 * edit did not touch come from the original; where both differ (a reformatted line that the
 * edit also changed) the edit's rendering wins. The merge is kept only if it parses to
 * exactly the edited document; otherwise yaml's rendering is the answer.
 */
function render(original: string, unchanged: string, edited: Document): string {
  const rendered = edited.toString(RENDERING);
  const lines = diff3Merge(original.split('\n'), unchanged.split('\n'), rendered.split('\n'), { excludeFalseConflicts: true }).flatMap(
    (region) => region.ok ?? region.conflict?.b ?? [],
  );
  const merged = lines.join('\n');
  try {
    if (isDeepStrictEqual(parse(merged), edited.toJS())) return merged;
  } catch {
    // Not even YAML: yaml's rendering below.
  }
  return rendered;
}

/** The configuration file as read: its text (to edit, and to detect a concurrent change) and its validated settings. */
interface Snapshot {
  readonly realPath: string;
  readonly text: string;
  readonly settings: ServerSettings;
}

/**
 * One line out of a `ConfigError`: `invalid configuration:\n  a: ...\n  b: ...` becomes
 * `invalid configuration: a: ...; b: ...`; any other message keeps its first line (a YAML
 * syntax error's next lines quote the file).
 */
function oneLine(error: ConfigError): string {
  const [head = '', ...rest] = error.message.split('\n');
  if (head !== 'invalid configuration:') return head.replace(/:$/u, '');
  return `${head} ${rest
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('; ')}`;
}

/**
 * {@link CatalogAdmin} on the server's YAML configuration file, edited in place through the
 * `yaml` package's Document API, so comments and order are kept, and formatting too outside
 * the lines the change makes (see {@link render}). Each change
 * reads the file, refuses a file that does not validate (`invalid`), edits the document,
 * validates the exact text to be written with {@link parseSettings} (the validation of
 * `loadSettings`; a duplicate id or digest is a `conflict` naming both places), then writes
 * it to a temporary file beside the real one (symbolic links followed), flushes it and
 * renames it over the file: a reader sees the old file or the new one, never a part.
 * Just before the rename the file is read again; if another writer changed it meanwhile,
 * nothing is written (`conflict`). A running server picks a change up when it reloads the file.
 */
export class YamlCatalogAdmin implements CatalogAdmin {
  readonly description: string;

  /**
   * @param path - the configuration file (relative to the working directory or absolute).
   * @param env - environment the validation reads (`REDIS_URL`), as the server would.
   */
  constructor(
    private readonly path: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.description = `the YAML file ${path}`;
  }

  async listAccounts(): Promise<readonly AccountEntry[]> {
    const { settings } = await this.read();
    return settings.accounts.map((a) => ({
      id: a.id,
      apiKeys: a.apiKeys.length,
      oauthTokens: a.oauthTokens.length,
      agents: a.agents.length,
      connections: a.connections.length,
    }));
  }

  async addAccount(id: string): Promise<void> {
    await this.change((doc) => appendTo(doc, ['accounts'], { id }));
  }

  async removeAccount(id: string, options: { readonly cascade: boolean }): Promise<void> {
    await this.change((doc, settings) => {
      const index = this.accountIndex(settings, id);
      const account = settings.accounts[index]!;
      const owned = (['api_keys', 'oauth_tokens', 'agents', 'connections'] as const)
        .map((key) => [key, itemsOf(account, key).length] as const)
        .filter(([, n]) => n > 0);
      if (owned.length > 0 && !options.cascade) {
        const what = owned.map(([key, n]) => `${n} ${NOUN[key]}${n === 1 ? '' : 's'}`).join(', ');
        throw new CatalogAdminError('conflict', `account "${id}" still owns ${what}: remove them first, or remove the account with them (--force)`);
      }
      doc.deleteIn(['accounts', index]);
    });
  }

  async listCredentials(kind: CredentialKind, accountId?: string): Promise<readonly CredentialEntry[]> {
    const { settings } = await this.read();
    return this.accountsOf(settings, accountId).flatMap((a) => itemsOf(a, CREDENTIAL_LIST[kind]).map((c) => credentialEntry(kind, a.id, c)));
  }

  async addCredential(credential: CredentialEntry): Promise<void> {
    await this.change((doc, settings) => {
      const index = this.accountIndex(settings, credential.accountId);
      const node = doc.createNode({
        id: credential.id,
        sha256: credential.sha256,
        ...(credential.kind === 'oauth_token' ? { scopes: [...credential.scopes] } : {}),
        ...(credential.expiresAt === undefined ? {} : { expires_at: credential.expiresAt.toISOString() }),
      });
      // As config.example.yaml writes them: `scopes: [runs:write, runs:read]`.
      const scopes = node.get('scopes', true);
      if (isSeq(scopes)) scopes.flow = true;
      appendTo(doc, ['accounts', index, CREDENTIAL_LIST[credential.kind]], node);
    });
  }

  async rotateCredential(kind: CredentialKind, id: string, sha256: string, expiresAt?: Date): Promise<CredentialEntry> {
    return this.change((doc, settings) => {
      const { accountIndex, index, account, item } = this.locate(settings, CREDENTIAL_LIST[kind], id);
      const path = ['accounts', accountIndex, CREDENTIAL_LIST[kind], index];
      doc.setIn([...path, 'sha256'], sha256);
      if (expiresAt !== undefined) doc.setIn([...path, 'expires_at'], expiresAt.toISOString());
      const before = credentialEntry(kind, account.id, item);
      return { ...before, sha256, ...(expiresAt === undefined ? {} : { expiresAt }) };
    });
  }

  async revokeCredential(kind: CredentialKind, id: string): Promise<CredentialEntry> {
    // Revoking removes the entry: the file holds the credentials that work, nothing else.
    return this.change((doc, settings) => {
      const { accountIndex, index, account, item } = this.locate(settings, CREDENTIAL_LIST[kind], id);
      doc.deleteIn(['accounts', accountIndex, CREDENTIAL_LIST[kind], index]);
      return credentialEntry(kind, account.id, item);
    });
  }

  async listAgents(accountId?: string): Promise<readonly AgentEntry[]> {
    const { settings } = await this.read();
    return this.accountsOf(settings, accountId).flatMap((a) => a.agents.map((g) => ({ ...g, accountId: a.id })));
  }

  async addAgent(agent: AgentEntry): Promise<void> {
    await this.change((doc, settings) => {
      const index = this.accountIndex(settings, agent.accountId);
      appendTo(doc, ['accounts', index, 'agents'], { id: agent.id, ...(agent.name === undefined ? {} : { name: agent.name }) });
    });
  }

  async removeAgent(id: string): Promise<AgentEntry> {
    return this.change((doc, settings) => {
      const { accountIndex, index, account, item } = this.locate(settings, 'agents', id);
      doc.deleteIn(['accounts', accountIndex, 'agents', index]);
      return { ...item, accountId: account.id };
    });
  }

  async listConnections(accountId?: string): Promise<readonly ConnectionEntry[]> {
    const { settings } = await this.read();
    return this.accountsOf(settings, accountId).flatMap((a) => a.connections.map((k) => ({ ...k, accountId: a.id })));
  }

  async addConnection(connection: ConnectionEntry): Promise<void> {
    await this.change((doc, settings) => {
      const index = this.accountIndex(settings, connection.accountId);
      const s = connection.sqlserver;
      appendTo(doc, ['accounts', index, 'connections'], {
        id: connection.id,
        type: connection.type,
        ...(s === undefined
          ? {}
          : {
              sqlserver: {
                host: s.host,
                port: s.port,
                database: s.database,
                user: s.user,
                password_env: s.passwordEnv,
                encrypt: s.encrypt,
                trust_server_certificate: s.trustServerCertificate,
              },
            }),
      });
    });
  }

  async removeConnection(id: string): Promise<ConnectionEntry> {
    return this.change((doc, settings) => {
      const { accountIndex, index, account, item } = this.locate(settings, 'connections', id.toLowerCase());
      doc.deleteIn(['accounts', accountIndex, 'connections', index]);
      return { ...item, accountId: account.id };
    });
  }

  /** @throws CatalogAdminError `unsupported`: edit the file (see {@link EDIT_THE_FILE_FOR_ENDPOINTS}). */
  listWebhookEndpoints(): Promise<readonly WebhookEndpointEntry[]> {
    return Promise.reject(new CatalogAdminError('unsupported', EDIT_THE_FILE_FOR_ENDPOINTS));
  }

  /** @throws CatalogAdminError `unsupported`: edit the file. */
  addWebhookEndpoint(): Promise<void> {
    return Promise.reject(new CatalogAdminError('unsupported', EDIT_THE_FILE_FOR_ENDPOINTS));
  }

  /** @throws CatalogAdminError `unsupported`: edit the file. */
  removeWebhookEndpoint(): Promise<WebhookEndpointEntry> {
    return Promise.reject(new CatalogAdminError('unsupported', EDIT_THE_FILE_FOR_ENDPOINTS));
  }

  async validate(): Promise<CatalogSummary> {
    const { settings } = await this.read();
    const count = (key: ListKey) => settings.accounts.reduce((n, a) => n + itemsOf(a, key).length, 0);
    return {
      accounts: settings.accounts.length,
      apiKeys: count('api_keys'),
      oauthTokens: count('oauth_tokens'),
      agents: count('agents'),
      connections: count('connections'),
    };
  }

  async migrate(): Promise<MigrationReport> {
    // The file is the whole catalog: no schema to migrate. Reading it still tells a missing file.
    await this.read();
    return { applied: [] };
  }

  async close(): Promise<void> {
    // Nothing is held between operations.
  }

  /** Reads and validates the file. @throws CatalogAdminError `unavailable`, `invalid`. */
  private async read(): Promise<Snapshot> {
    let realPath: string;
    let text: string;
    try {
      realPath = await realpath(this.path);
      text = await readFile(realPath, 'utf8');
    } catch (error) {
      throw new CatalogAdminError('unavailable', `cannot read the configuration file ${this.path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    let settings: ServerSettings;
    try {
      settings = parseSettings(text, this.path, this.env);
    } catch (error) {
      // A file the server would refuse is not edited: `config validate` names the field; fix it by hand.
      if (error instanceof ConfigError) throw new CatalogAdminError('invalid', oneLine(error));
      throw error;
    }
    return { realPath, text, settings };
  }

  /**
   * Applies `edit` to the document of a valid file, validates the result and writes it.
   * @returns what `edit` returned.
   */
  private async change<T>(edit: (doc: Document, settings: ServerSettings) => T): Promise<T> {
    const { realPath, text, settings } = await this.read();
    const doc = parseDocument(text);
    const unchanged = doc.toString(RENDERING);
    const result = edit(doc, settings);
    const next = render(text, unchanged, doc);
    try {
      parseSettings(next, this.path, this.env);
    } catch (error) {
      if (error instanceof DuplicateIdError) throw new CatalogAdminError('conflict', `${oneLine(error).replace(/^invalid configuration: /u, '')}; nothing was written`);
      if (error instanceof ConfigError) throw new CatalogAdminError('invalid', `${oneLine(error)}; nothing was written`);
      throw error;
    }
    await this.write(realPath, text, next);
    return result;
  }

  /** Replaces the file at `realPath` (read as `before`) by `next`, atomically. */
  private async write(realPath: string, before: string, next: string): Promise<void> {
    const temp = join(dirname(realPath), `.${basename(realPath)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      const { mode } = await stat(realPath);
      const file = await open(temp, 'wx', mode & 0o777);
      try {
        await file.writeFile(next, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      // Read-modify-write without a lock: a writer that changed the file since our read wins,
      // and this change is refused rather than silently undoing theirs.
      if ((await readFile(realPath, 'utf8')) !== before) {
        throw new CatalogAdminError('conflict', `${this.path} changed while this change was made; nothing was written, run the command again`);
      }
      await rename(temp, realPath);
    } catch (error) {
      await rm(temp, { force: true });
      if (error instanceof CatalogAdminError) throw error;
      throw new CatalogAdminError('unavailable', `cannot write the configuration file ${this.path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); nothing was written`);
    }
  }

  /** The accounts `accountId` names (absent: all). @throws CatalogAdminError `not_found`. */
  private accountsOf(settings: ServerSettings, accountId: string | undefined): readonly AccountSettings[] {
    return accountId === undefined ? settings.accounts : [settings.accounts[this.accountIndex(settings, accountId)]!];
  }

  /** @throws CatalogAdminError `not_found`. */
  private accountIndex(settings: ServerSettings, id: string): number {
    const index = settings.accounts.findIndex((a) => a.id === id);
    if (index < 0) throw new CatalogAdminError('not_found', `no account "${id}" in ${this.path}`);
    return index;
  }

  /** Where the item `id` of list `key` is (ids are unique across accounts). @throws CatalogAdminError `not_found`. */
  private locate<K extends ListKey>(settings: ServerSettings, key: K, id: string): { accountIndex: number; index: number; account: AccountSettings; item: Lists[K] } {
    for (const [accountIndex, account] of settings.accounts.entries()) {
      const index = itemsOf(account, key).findIndex((item) => item.id === id);
      if (index >= 0) return { accountIndex, index, account, item: itemsOf(account, key)[index]! };
    }
    throw new CatalogAdminError('not_found', `no ${NOUN[key]} "${id}" in ${this.path}`);
  }
}

/** The list `key` of a validated account. */
function itemsOf<K extends ListKey>(account: AccountSettings, key: K): readonly Lists[K][] {
  const lists: { readonly [P in ListKey]: readonly Lists[P][] } = {
    api_keys: account.apiKeys,
    oauth_tokens: account.oauthTokens,
    agents: account.agents,
    connections: account.connections,
  };
  return lists[key];
}

function credentialEntry(kind: CredentialKind, accountId: string, c: CredentialSettings): CredentialEntry {
  return { kind, id: c.id, accountId, sha256: c.sha256, scopes: c.scopes, ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }) };
}

/** Appends `value` to the sequence at `path`, creating it (block style) when absent. */
function appendTo(doc: Document, path: readonly (string | number)[], value: unknown): void {
  const seq = doc.getIn(path, true);
  if (isSeq(seq)) seq.add(doc.createNode(value));
  else doc.setIn(path, doc.createNode([value]));
}
