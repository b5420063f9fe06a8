import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ConfigError, DuplicateIdError, loadSettings, settingsFrom, type ServerSettings } from '../src/settings.js';

const EXAMPLE = fileURLToPath(new URL('../config.example.yaml', import.meta.url));

describe('settings', function () {
  it('config.example.yaml, which documents every field, validates', function () {
    const settings = loadSettings(EXAMPLE, {});
    expect(settings.durability).to.deep.equal({ redisRequireDurable: false, runRetentionSeconds: 604_800, maxFinishedRunsInMemory: 10_000 });
  });

  describe('catalog.postgres (README "A catalog for several instances (PostgreSQL)")', function () {
    it('reads the URL variable name, schema and timeout, with defaults', function () {
      expect(validate({ catalog: { postgres: {} }, dependency_timeout_ms: 1500 }).catalog).to.deep.equal({
        postgres: { urlEnv: 'SVC_CATALOG_URL', schema: 'svc', timeoutMs: 1500 },
      });
      expect(validate({ catalog: { postgres: { url_env: 'CAT_URL', schema: 'svc_2', timeout_ms: 700 } } }).catalog).to.deep.equal({
        postgres: { urlEnv: 'CAT_URL', schema: 'svc_2', timeoutMs: 700 },
      });
      expect(validate({}).catalog).to.equal(undefined);
    });

    it('refuses accounts beside it, a URL in the file and a bad schema, naming the field', function () {
      expect(() => validate({ catalog: { postgres: {} }, accounts: [{ id: 'acct_a' }] })).to.throw(ConfigError, /accounts: must be absent or empty when catalog\.postgres/u);
      expect(validate({ catalog: { postgres: {} }, accounts: [] }).accounts).to.deep.equal([]);
      expect(() => validate({ catalog: { postgres: { url: 'postgres://u:p@h/db' } } })).to.throw(ConfigError, /catalog\.postgres\.url\b/u);
      expect(() => validate({ catalog: { postgres: { schema: 'Bad-Name' } } })).to.throw(ConfigError, /catalog\.postgres\.schema/u);
      expect(() => validate({ catalog: { postgres: { url_env: 'not a name' } } })).to.throw(ConfigError, /catalog\.postgres\.url_env/u);
    });
  });

  describe('smtp (docs/decisions.md "E-mail notifications")', function () {
    it('reads host, port, TLS, user, from and timeout with defaults; the password from SVC_SMTP_PASSWORD or the variable password_env names', function () {
      expect(validate({ smtp: { host: 'smtp.example.com', from: 'runs@example.com' } }).smtp).to.deep.equal({
        host: 'smtp.example.com',
        port: 587,
        secure: false,
        requireTls: false,
        from: 'runs@example.com',
        timeoutMs: 10_000,
      });
      expect(validate({ smtp: { host: 'h', from: 'a@b', secure: true } }).smtp?.port).to.equal(465);
      expect(settingsFrom({ smtp: { host: 'h', from: 'Runs <a@b.example>', user: 'mailer', port: 2525, require_tls: true, timeout_ms: 500 } }, { SVC_SMTP_PASSWORD: 'pw-from-env' }).smtp).to.deep.equal({
        host: 'h',
        port: 2525,
        secure: false,
        requireTls: true,
        user: 'mailer',
        password: 'pw-from-env',
        from: 'Runs <a@b.example>',
        timeoutMs: 500,
      });
      expect(settingsFrom({ smtp: { host: 'h', from: 'a@b', user: 'mailer', password_env: 'MAIL_PW' } }, { MAIL_PW: 'other' }).smtp?.password).to.equal('other');
      expect(validate({}).smtp).to.equal(undefined);
    });

    it('refuses a user without its password variable, a password in the file, a from without @ or on two lines, naming the field', function () {
      expect(() => settingsFrom({ smtp: { host: 'h', from: 'a@b', user: 'mailer' } }, {})).to.throw(ConfigError, /smtp\.password_env: the environment variable SVC_SMTP_PASSWORD is not set/u);
      expect(() => validate({ smtp: { host: 'h', from: 'a@b', password: 'inline-secret' } })).to.throw(ConfigError, /smtp\.password\b/u);
      expect(() => validate({ smtp: { host: 'h', from: 'nobody' } })).to.throw(ConfigError, /smtp\.from/u);
      expect(() => validate({ smtp: { host: 'h', from: 'a@b\r\nBcc: x@y' } })).to.throw(ConfigError, /smtp\.from/u);
      expect(() => validate({ smtp: { from: 'a@b' } })).to.throw(ConfigError, /smtp\.host/u);
      expect(() => validate({ smtp: { host: 'h', from: 'a@b', timeout_ms: 10 } })).to.throw(ConfigError, /smtp\.timeout_ms/u);
    });
  });

  it('reads the optional agent name and description and connection name shown by discovery; an empty one is refused naming it', function () {
    const conn = '3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11';
    const accounts = (agent: Record<string, unknown>, connection: Record<string, unknown> = {}): unknown => ({
      accounts: [{ id: 'acct_a', agents: [{ id: 'agent_a', ...agent }], connections: [{ id: conn, type: 'postgresql', ...connection }] }],
    });
    const read = validate(accounts({ name: 'Reader', description: 'Reads invoices.' }, { name: 'Warehouse' })).accounts[0];
    expect(read?.agents).to.deep.equal([{ id: 'agent_a', name: 'Reader', description: 'Reads invoices.' }]);
    expect(read?.connections).to.deep.equal([{ id: conn, type: 'postgresql', name: 'Warehouse' }]);
    const bare = validate(accounts({})).accounts[0];
    expect(bare?.agents).to.deep.equal([{ id: 'agent_a' }]);
    expect(bare?.connections).to.deep.equal([{ id: conn, type: 'postgresql' }]);
    expect(() => validate(accounts({ description: '' }))).to.throw(ConfigError, /accounts\/0\/agents\/0\/description|accounts\[0\]\.agents\[0\]\.description/u);
    expect(() => validate(accounts({}, { name: '' }))).to.throw(ConfigError, /accounts\/0\/connections\/0\/name|accounts\[0\]\.connections\[0\]\.name/u);
    expect(() => validate(accounts({ description: 'x'.repeat(2001) }))).to.throw(ConfigError, /description/u);
  });

  it('SVC_CURSOR_KEY signs list cursors: read from the environment, refused under 32 bytes naming the variable, never echoed', function () {
    expect(loadSettings(EXAMPLE, {}).cursorKey).to.equal(undefined);
    expect(loadSettings(EXAMPLE, { SVC_CURSOR_KEY: 'k'.repeat(32) }).cursorKey).to.equal('k'.repeat(32));
    expect(() => loadSettings(EXAMPLE, { SVC_CURSOR_KEY: 'short-secret-value' })).to.throw(ConfigError, /SVC_CURSOR_KEY: must be at least 32 bytes/u);
    try {
      loadSettings(EXAMPLE, { SVC_CURSOR_KEY: 'short-secret-value' });
    } catch (error) {
      expect((error as Error).message).not.to.include('short-secret-value');
    }
  });

  it('a bad runs or redis field is refused naming it', function () {
    expect(() => validate({ runs: { retention_seconds: 5 } })).to.throw(ConfigError, /runs\.retention_seconds/u);
    expect(() => validate({ redis: { require_durable: 'yes' } })).to.throw(ConfigError, /redis\.require_durable/u);
  });

  describe('duplicate ids and digests (CONTRACT "Isolation between accounts"): refused naming both places', function () {
    const digest = (n: number) => n.toString(16).padStart(64, '0');
    const conn = '3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11';
    /** Two accounts that share nothing; each case below adds one duplicate. */
    const base = () => ({
      accounts: [
        {
          id: 'acct_a',
          api_keys: [{ id: 'key_a', sha256: digest(1) }],
          oauth_tokens: [{ id: 'tok_a', sha256: digest(2), scopes: ['runs:read'] }],
          agents: [{ id: 'agent_a0' }, { id: 'agent_a1' }, { id: 'a1' }],
          connections: [{ id: conn, type: 'sqlserver' }],
        },
        { id: 'acct_b', api_keys: [{ id: 'key_b', sha256: digest(3) }], agents: [{ id: 'agent_b' }] },
      ],
    });
    type Account = ReturnType<typeof base>['accounts'][number] & Record<string, unknown>;
    const cases: [string, (a: Account[]) => void, string][] = [
      ['an account id', (a) => a.push({ id: 'acct_a' } as Account), 'accounts[2].id: account "acct_a" is already defined at accounts[0]'],
      ['an agent id in another account', (a) => a[1]!.agents.unshift({ id: 'a1' }), 'accounts[1].agents[0].id: agent "a1" is already defined at accounts[0].agents[2]'],
      ['an agent id in the same account', (a) => a[0]!.agents.push({ id: 'agent_a0' }), 'accounts[0].agents[3].id: agent "agent_a0" is already defined at accounts[0].agents[0]'],
      ['an API key id in another account', (a) => a[1]!.api_keys.push({ id: 'key_a', sha256: digest(9) }), 'accounts[1].api_keys[1].id: credential "key_a" is already defined at accounts[0].api_keys[0]'],
      [
        'an OAuth token id that is an API key id (one space)',
        (a) => (a[1]!['oauth_tokens'] = [{ id: 'key_b', sha256: digest(9), scopes: ['runs:read'] }]),
        'accounts[1].oauth_tokens[0].id: credential "key_b" is already defined at accounts[1].api_keys[0]',
      ],
      ['a digest in another account', (a) => a[1]!.api_keys.push({ id: 'key_b2', sha256: digest(1) }), 'accounts[1].api_keys[1].sha256: this SHA-256 digest is already used at accounts[0].api_keys[0]'],
      [
        'a digest shared by an API key and an OAuth token',
        (a) => a[0]!.api_keys.push({ id: 'key_a2', sha256: digest(2) }),
        'accounts[0].oauth_tokens[0].sha256: this SHA-256 digest is already used at accounts[0].api_keys[1]',
      ],
      [
        'a connection id, in other letter case',
        (a) => (a[1]!['connections'] = [{ id: conn.toUpperCase(), type: 'postgresql' }]),
        `accounts[1].connections[0].id: connection "${conn}" is already defined at accounts[0].connections[0]`,
      ],
    ];
    for (const [what, change, message] of cases) {
      it(what, function () {
        const config = base();
        change(config.accounts as Account[]);
        expect(() => validate(config))
          .to.throw(DuplicateIdError)
          .with.property('message')
          .that.includes(message);
      });
    }

    it('the same id in different kinds (an account, an agent and a key named alike) is allowed', function () {
      const config = base();
      config.accounts[1]!.agents.push({ id: 'acct_a' }, { id: 'key_a' });
      expect(() => validate(config)).to.not.throw();
    });

    it('every duplicate is named, each with its first place', function () {
      const config = base();
      config.accounts[1]!.agents.push({ id: 'agent_a0' }, { id: 'agent_a1' });
      expect(() => validate(config))
        .to.throw(DuplicateIdError)
        .with.property('message')
        .that.matches(/accounts\[1\]\.agents\[1\]\.id: agent "agent_a0" is already defined at accounts\[0\]\.agents\[0\]\n {2}accounts\[1\]\.agents\[2\]\.id: agent "agent_a1" is already defined at accounts\[0\]\.agents\[1\]$/u);
    });
  });
});

/** Loads `raw` as a configuration file (JSON is YAML), as the server does. */
function validate(raw: unknown): ServerSettings {
  const dir = mkdtempSync(join(tmpdir(), 'svc-settings-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, JSON.stringify(raw));
  try {
    return loadSettings(path, {});
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
