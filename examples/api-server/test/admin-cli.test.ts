import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse, stringify } from 'yaml';
import { sha256Hex } from '@svc/core';
import { apiKey, bearer, call, expectData, expectProblem } from '../../../tools/test-support/http.js';
import { loadSettings } from '../src/settings.js';
import { admin, secretOf, type Ran } from './support/admin-cli.js';
import { addresses, AGENTS, e2eConfig, SECRETS, SQL_A } from './support/fixture.js';
import { startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

const EXAMPLE = fileURLToPath(new URL('../config.example.yaml', import.meta.url));

interface RawAccount {
  id: string;
  api_keys?: { id: string; sha256: string; scopes?: string[]; expires_at?: string }[];
  oauth_tokens?: { id: string; sha256: string; scopes: string[]; expires_at?: string }[];
  agents?: { id: string; name?: string }[];
  connections?: { id: string; type: string; sqlserver?: Record<string, unknown> }[];
}

/** Exit code, one line on stderr, nothing on stdout, no stack trace: how every failure looks. */
function expectFailure(out: Ran, code: number, ...mentions: string[]): void {
  expect(out.code, `${out.stdout}\n${out.stderr}`).to.equal(code);
  expect(out.stderr.endsWith('\n') && out.stderr.split('\n').length === 2, `one line: ${out.stderr}`).to.equal(true);
  expect(out.stderr).to.not.match(/^\s+at /mu);
  expect(out.stdout).to.equal('');
  for (const m of mentions) expect(out.stderr).to.include(m);
}

function expectDone(out: Ran): void {
  expect(out.code, `${out.stdout}\n${out.stderr}`).to.equal(0);
  expect(out.stderr).to.equal('');
}

describe('svc-server, the admin CLI (built, as a child process)', function () {
  this.timeout(60_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  /** A copy of config.example.yaml. */
  let config: string;
  const accounts = async (): Promise<RawAccount[]> => (parse(await readFile(config, 'utf8')) as { accounts: RawAccount[] }).accounts;

  beforeEach(async function () {
    dir = await tempDir();
    config = join(dir.path, 'config.yaml');
    await copyFile(EXAMPLE, config);
  });
  afterEach(async function () {
    await dir.remove();
  });

  it('keys create prints the secret once, writes only its digest, and leaves every other line of the file as it was (comments too)', async function () {
    const before = await readFile(config, 'utf8');
    const out = await admin(['keys', 'create', 'key_ci', '--account', 'acct_example', '--config', config]);
    expectDone(out);
    const secret = secretOf(out, 'svc-');
    const after = await readFile(config, 'utf8');
    expect(after).to.not.include(secret);
    const key = (await accounts())[0]!.api_keys!.find((k) => k.id === 'key_ci');
    expect(key).to.deep.equal({ id: 'key_ci', sha256: sha256Hex(secret) });
    // Exactly two lines added, after the last API key; the rest byte for byte (comments, alignment).
    const added = `      - id: key_ci\n        sha256: ${sha256Hex(secret)}\n`;
    const at = before.indexOf('    oauth_tokens:');
    expect(after).to.equal(before.slice(0, at) + added + before.slice(at));
    expect(after).to.include('    # Secrets are never stored: only their SHA-256 digest.');
    expect(after).to.include('  require_durable: false     # true: refuse to start unless Redis has appendonly yes, appendfsync\n');
  });

  it('keys, tokens, agents and connections minted with the CLI work on a server started with the file; a rotated secret and a revoked key do not', async function () {
    const at = await addresses();
    const path = await writeConfig(dir.path, e2eConfig(at), 'e2e.yaml');
    const cli = (...args: string[]) => admin([...args, '--config', path]);
    const created = await cli('keys', 'create', 'key_cli', '--account', 'acct_a');
    const token = await cli('tokens', 'create', 'tok_cli', '--account', 'acct_a', '--scope', 'runs:write', '--expires-in-days', '1');
    const rotating = await cli('keys', 'create', 'key_rot', '--account', 'acct_a');
    for (const out of [created, token, rotating]) expectDone(out);
    const rotated = await cli('keys', 'rotate', 'key_rot');
    expectDone(rotated);
    const agent = await cli('agents', 'add', 'agent_cli', '--account', 'acct_a', '--name', 'From the CLI');
    expectDone(agent);
    expectDone(await cli('keys', 'revoke', 'key_a1'));
    const settings = loadSettings(path, {});
    expect(settings.accounts[0]!.oauthTokens.find((t) => t.id === 'tok_cli')?.scopes).to.deep.equal(['runs:write']);
    expect(settings.accounts[0]!.oauthTokens.find((t) => t.id === 'tok_cli')?.expiresAt?.getTime()).to.be.within(Date.now() + 86_000_000, Date.now() + 86_400_000);

    const server: ServerProcess = await startServerProcess(path, at.url, at.egressUrl);
    try {
      const write = (secret: string) => call(at.url, 'POST', `/api/v1/connections/${SQL_A}/records`, { headers: apiKey(secret), json: { entity: 'dbo.orders', values: { sku: 'CLI' } } });
      expectData(await write(secretOf(created, 'svc-')), 201);
      expectData(await write(secretOf(rotated, 'svc-')), 201);
      expectProblem(await write(secretOf(rotating, 'svc-')), 401, 'invalid_credential');
      expectProblem(await write(SECRETS.keyA), 401, 'invalid_credential');
      expectData(await call(at.url, 'POST', `/api/v1/agents/agent_cli/run`, { headers: bearer(secretOf(token, 'svcpt_')), json: { message: 'from the CLI token' } }), 202);
      expectData(await call(at.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: bearer(secretOf(token, 'svcpt_')), json: { message: 'x' } }), 202);
    } finally {
      await server.kill();
    }
  });

  it('a change that would define an id or a digest twice is refused naming both places (exit 5); nothing is written, no secret shown', async function () {
    const before = await readFile(config, 'utf8');
    const results = await Promise.all([
      // Credential ids are one space across API keys and OAuth tokens.
      admin(['keys', 'create', 'tok_example', '--account', 'acct_example', '--config', config]),
      admin(['tokens', 'create', 'key_example', '--account', 'acct_example', '--scope', 'runs:read', '--config', config]),
      admin(['accounts', 'add', 'acct_example', '--config', config]),
      admin(['agents', 'add', 'agent_example', '--account', 'acct_example', '--config', config]),
      admin(['connections', 'add', '3F1C2A9E-5B7D-4E21-9C3A-0D8E6F4B2A11', '--account', 'acct_example', '--type', 'postgresql', '--config', config]),
    ]);
    // Both places, in file order: the new API key comes before the OAuth tokens of its account.
    expectFailure(results[0]!, 5, 'accounts[0].oauth_tokens[0].id: credential "tok_example" is already defined at accounts[0].api_keys[1]', 'nothing was written');
    expectFailure(results[1]!, 5, 'accounts[0].oauth_tokens[1].id: credential "key_example" is already defined at accounts[0].api_keys[0]');
    expectFailure(results[2]!, 5, 'accounts[1].id: account "acct_example" is already defined at accounts[0]');
    expectFailure(results[3]!, 5, 'accounts[0].agents[1].id: agent "agent_example" is already defined at accounts[0].agents[0]');
    expectFailure(results[4]!, 5, 'accounts[0].connections[2].id: connection "3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11" is already defined at accounts[0].connections[0]');
    expect(await readFile(config, 'utf8')).to.equal(before);
  });

  it('an agent id already used in another account is refused too', async function () {
    expectDone(await admin(['accounts', 'add', 'acct_two', '--config', config]));
    const out = await admin(['agents', 'add', 'agent_example', '--account', 'acct_two', '--config', config]);
    expectFailure(out, 5, 'accounts[1].agents[0].id: agent "agent_example" is already defined at accounts[0].agents[0]');
  });

  it('a missing id or account is not found (exit 4) and changes nothing', async function () {
    const before = await readFile(config, 'utf8');
    const results = await Promise.all([
      admin(['keys', 'revoke', 'nope', '--config', config]),
      admin(['keys', 'rotate', 'nope', '--config', config]),
      // An OAuth token is not an API key.
      admin(['keys', 'revoke', 'tok_example', '--config', config]),
      admin(['tokens', 'revoke', 'key_example', '--config', config]),
      admin(['keys', 'create', 'k', '--account', 'acct_nope', '--config', config]),
      admin(['agents', 'remove', 'nope', '--config', config]),
      admin(['connections', 'remove', '00000000-0000-4000-8000-000000000000', '--config', config]),
      admin(['accounts', 'remove', 'nope', '--config', config]),
      admin(['agents', 'list', '--account', 'nope', '--config', config]),
    ]);
    expectFailure(results[0]!, 4, 'svc-server keys revoke: no API key "nope"');
    expectFailure(results[1]!, 4, 'svc-server keys rotate: no API key "nope"');
    expectFailure(results[2]!, 4, 'no API key "tok_example"');
    expectFailure(results[3]!, 4, 'no OAuth token "key_example"');
    expectFailure(results[4]!, 4, 'no account "acct_nope"');
    expectFailure(results[5]!, 4, 'no agent "nope"');
    expectFailure(results[6]!, 4, 'no connection "00000000-0000-4000-8000-000000000000"');
    expectFailure(results[7]!, 4, 'no account "nope"');
    expectFailure(results[8]!, 4, 'no account "nope"');
    expect(await readFile(config, 'utf8')).to.equal(before);
  });

  it('revoke and remove take the entry out; rotate keeps id, account and expiry and changes only the digest', async function () {
    const cli = (...args: string[]) => admin([...args, '--config', config]);
    const connection = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
    const before = await readFile(config, 'utf8');
    const removed = await cli('agents', 'remove', 'agent_example');
    // Exactly the entry's lines go (its list, now empty, is `[]`); the rest byte for byte.
    expect(await readFile(config, 'utf8')).to.equal(before.replace('    agents:\n      - id: agent_example\n        name: Example agent\n        description: Summarises the uploaded documents.\n', '    agents: []\n'));
    const results = [
      await cli('tokens', 'revoke', 'tok_example'),
      removed,
      await cli('connections', 'remove', connection.toUpperCase()),
      await cli('keys', 'rotate', 'key_example'),
    ];
    for (const out of results) expectDone(out);
    expect(results[0]!.stdout).to.equal(`OAuth token "tok_example" of account "acct_example" revoked in the YAML file ${config}\n`);
    const [account] = await accounts();
    expect(account!.oauth_tokens).to.deep.equal([]);
    expect(account!.agents).to.deep.equal([]);
    expect(account!.connections!.map((c) => c.id)).to.deep.equal(['3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11']);
    expect(account!.api_keys).to.deep.equal([{ id: 'key_example', sha256: sha256Hex(secretOf(results[3]!, 'svc-')) }]);
    expect(loadSettings(config, {}).accounts).to.have.length(1);
  });

  it('accounts remove refuses an account that still owns anything (exit 5) unless --force; an empty one goes', async function () {
    const refused = await admin(['accounts', 'remove', 'acct_example', '--config', config]);
    expectFailure(refused, 5, 'account "acct_example" still owns 1 API key, 1 OAuth token, 1 agent, 2 connections', '--force');
    expectDone(await admin(['accounts', 'add', 'acct_empty', '--config', config]));
    expectDone(await admin(['accounts', 'remove', 'acct_empty', '--config', config]));
    expectDone(await admin(['accounts', 'remove', 'acct_example', '--force', '--config', config]));
    expect(await accounts()).to.deep.equal([]);
    // Comments outside the account are still there.
    expect(await readFile(config, 'utf8')).to.include('# Mark operations deprecated');
  });

  it('connections add writes a sqlserver database by its password variable, or a new UUID for a demo one; partial details are a usage error', async function () {
    const full = await admin([
      'connections', 'add', 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', '--account', 'acct_example', '--type', 'sqlserver',
      '--host', 'db.example', '--port', '14330', '--database', 'crm', '--user', 'writer', '--password-env', 'CRM_PASSWORD', '--no-encrypt',
      '--config', config,
    ]);
    expectDone(full);
    const demo = await admin(['connections', 'add', '--account', 'acct_example', '--type', 'postgresql', '--config', config]);
    expectDone(demo);
    const id = /connection "([0-9a-f-]{36})"/u.exec(demo.stdout)?.[1];
    const [account] = await accounts();
    expect(account!.connections!.slice(2)).to.deep.equal([
      {
        id: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
        type: 'sqlserver',
        sqlserver: { host: 'db.example', port: 14330, database: 'crm', user: 'writer', password_env: 'CRM_PASSWORD', encrypt: false, trust_server_certificate: false },
      },
      { id, type: 'postgresql' },
    ]);
    const partial = await admin(['connections', 'add', '--account', 'acct_example', '--type', 'sqlserver', '--host', 'h', '--config', config]);
    expectFailure(partial, 2, 'svc-server connections add: a sqlserver database needs --host, --database, --user and --password-env (missing --database)');
  });

  it('list commands print a table or JSON (--output json), digests only', async function () {
    expectDone(await admin(['accounts', 'add', 'acct_two', '--config', config]));
    const created = await admin(['tokens', 'create', 'tok_two', '--account', 'acct_two', '--scope', 'runs:read', '--config', config]);
    expectDone(created);
    const [keysTable, tokensJson, tokensOfTwo, accountsJson, agentsTable, connectionsJson] = await Promise.all([
      admin(['keys', 'list', '--config', config]),
      admin(['tokens', 'list', '--output', 'json', '--config', config]),
      admin(['tokens', 'list', '--account', 'acct_two', '-o', 'json', '--config', config]),
      admin(['accounts', 'list', '--output', 'json', '--config', config]),
      admin(['agents', 'list', '--config', config]),
      admin(['connections', 'list', '--output', 'json', '--config', config]),
    ]);
    for (const out of [keysTable, tokensJson, tokensOfTwo, accountsJson, agentsTable, connectionsJson]) expectDone(out);
    expect(keysTable.stdout.split('\n')[0]).to.match(/^ID +ACCOUNT +SHA256 +EXPIRES_AT$/u);
    expect(keysTable.stdout.split('\n')[1]).to.match(/^key_example +acct_example +9f2c4a7e0b3d… +-$/u);
    const secret = secretOf(created, 'svcpt_');
    expect(JSON.parse(tokensJson.stdout)).to.deep.equal([
      {
        id: 'tok_example',
        account_id: 'acct_example',
        sha256: '4b7e0a3d6f9c2e5b8a1d4f7c0e3a6d9b2f5c8e1a4d7b0f3c6e9a2d5b8f1c4e7a',
        scopes: ['runs:write', 'runs:read'],
        expires_at: '2027-01-01T00:00:00.000Z',
      },
      { id: 'tok_two', account_id: 'acct_two', sha256: sha256Hex(secret), scopes: ['runs:read'], expires_at: null },
    ]);
    expect((JSON.parse(tokensOfTwo.stdout) as { id: string }[]).map((t) => t.id)).to.deep.equal(['tok_two']);
    expect(JSON.parse(accountsJson.stdout)).to.deep.equal([
      { id: 'acct_example', api_keys: 1, oauth_tokens: 1, agents: 1, connections: 2 },
      { id: 'acct_two', api_keys: 0, oauth_tokens: 1, agents: 0, connections: 0 },
    ]);
    expect(agentsTable.stdout).to.match(/^ID +ACCOUNT +NAME\nagent_example +acct_example +Example agent\n$/u);
    const connections = JSON.parse(connectionsJson.stdout) as { id: string; sqlserver: Record<string, unknown> | null }[];
    expect(connections[0]!.sqlserver).to.include({ password_env: 'SALES_DB_PASSWORD', database: 'sales' });
    expect(connections[1]!.sqlserver).to.equal(null);
    for (const out of [keysTable, tokensJson, tokensOfTwo]) expect(out.stdout).to.not.include(secret);
  });

  it('config validate names every bad field of an invalid file (exit 3); changes to an invalid file are refused before anything is written', async function () {
    const valid = await admin(['config', 'validate', '--config', config]);
    expectDone(valid);
    expect(valid.stdout).to.equal(`the YAML file ${config} is valid: 1 accounts, 1 API keys, 1 OAuth tokens, 1 agents, 2 connections\n`);

    const broken = join(dir.path, 'broken.yaml');
    const raw = parse(await readFile(config, 'utf8')) as { accounts: RawAccount[]; log_level: string };
    raw.log_level = 'loud';
    raw.accounts.push({ id: 'acct_two', agents: [{ id: 'agent_example' }] });
    await writeFile(broken, stringify(raw));
    const before = await readFile(broken, 'utf8');
    const [invalid, change] = await Promise.all([
      admin(['config', 'validate', '--config', broken]),
      admin(['accounts', 'add', 'acct_three', '--config', broken]),
    ]);
    expectFailure(invalid, 3, 'invalid configuration: log_level: must be equal to one of the allowed values');
    expectFailure(change, 3, 'log_level');
    // Past the schema, a duplicate is named with both places.
    raw.log_level = 'info';
    await writeFile(broken, stringify(raw));
    expectFailure(await admin(['config', 'validate', '--config', broken]), 3, 'accounts[1].agents[0].id: agent "agent_example" is already defined at accounts[0].agents[0]');
    expect(before).to.include('loud');

    const yamlError = join(dir.path, 'not-yaml.yaml');
    await writeFile(yamlError, 'accounts: [unclosed\n  id: x\n');
    expectFailure(await admin(['config', 'validate', '--config', yamlError]), 3, 'not-yaml.yaml is not valid YAML');
  });

  it('a change that leaves the file invalid is refused (exit 3) naming the field; the file is unchanged', async function () {
    const before = await readFile(config, 'utf8');
    const out = await admin(['agents', 'add', 'has space', '--account', 'acct_example', '--config', config]);
    expectFailure(out, 3, 'accounts[0].agents[1].id', 'nothing was written');
    expect(await readFile(config, 'utf8')).to.equal(before);
  });

  it('a missing file is catalog unavailable (exit 69); no --config and no SVC_CONFIG is a usage error (exit 2); SVC_CONFIG names the file', async function () {
    const [missing, none, fromEnv] = await Promise.all([
      admin(['keys', 'list', '--config', join(dir.path, 'nowhere.yaml')]),
      admin(['keys', 'list']),
      admin(['keys', 'list', '--output', 'json'], { SVC_CONFIG: config }),
    ]);
    expectFailure(missing, 69, 'svc-server keys list: cannot read the configuration file', 'nowhere.yaml');
    expectFailure(none, 2, 'svc-server keys list: no configuration file: pass --config FILE or set SVC_CONFIG');
    expectDone(fromEnv);
    expect((JSON.parse(fromEnv.stdout) as { id: string }[]).map((k) => k.id)).to.deep.equal(['key_example']);
  });

  it('migrate on a YAML catalog says there is nothing to migrate, in one line (exit 0)', async function () {
    const out = await admin(['migrate', '--config', config]);
    expectDone(out);
    expect(out.stdout).to.equal(`nothing to migrate: the catalog is the YAML file ${config}\n`);
  });

  it('usage errors are one line naming the command and exit 2, never a stack trace or the help text', async function () {
    const cases: [string[], string][] = [
      [[], 'svc-server: missing command: one of keys, tokens, accounts, agents, connections, webhook-endpoints, config, migrate'],
      [['keys'], 'svc-server keys: missing command: one of create, list, revoke, rotate'],
      [['frob'], "svc-server: unknown command 'frob'"],
      [['keys', 'delete'], "svc-server keys: unknown command 'delete'"],
      [['keys', 'create', 'k', '--account', 'acct_example', '--kind', 'api_key', '--config', config], "svc-server keys create: unknown option '--kind'"],
      [['keys', 'create', '--account', 'acct_example', '--config', config], "svc-server keys create: missing required argument 'id'"],
      [['keys', 'create', 'k', '--config', config], "svc-server keys create: required option '-a, --account <id>' not specified"],
      [['keys', 'create', 'k', '--account', 'acct_example', '--expires-in-days', '0', '--config', config], 'must be a positive number of days'],
      [['tokens', 'create', 't', '--account', 'acct_example', '--config', config], "svc-server tokens create: required option '-s, --scope <scope>' not specified"],
      [['tokens', 'create', 't', '--account', 'acct_example', '--scope', 'admin', '--config', config], 'must be one of runs:write, runs:read'],
      [['tokens', 'rotate', 't', '--config', config], "svc-server tokens: unknown command 'rotate'"],
      [['keys', 'list', '--output', 'xml', '--config', config], "argument 'xml' is invalid. Allowed choices are table, json."],
      [['keys', 'list', '--confg', config], "svc-server keys list: unknown option '--confg' (Did you mean --config?)"],
      [['connections', 'add', '--account', 'acct_example', '--type', 'postgresql', '--host', 'h', '--config', config], '--host is for --type sqlserver only'],
      [['connections', 'add', '--account', 'acct_example', '--type', 'sqlserver', '--port', 'x', '--config', config], 'must be a TCP port'],
    ];
    const before = await readFile(config, 'utf8');
    const results = await Promise.all(cases.map(([args]) => admin(args)));
    for (const [i, out] of results.entries()) expectFailure(out, 2, cases[i]![1]);
    expect(await readFile(config, 'utf8')).to.equal(before);
  });

  it('--help works on every command and subcommand (exit 0, on stdout) and lists the exit codes', async function () {
    const seen: string[] = [];
    const visit = async (path: string[]): Promise<void> => {
      const out = await admin([...path, '--help']);
      expectDone(out);
      expect(out.stdout).to.match(new RegExp(`^Usage: ${['svc-server', ...path].join(' ')} `, 'u'));
      expect(out.stdout).to.include('Exit codes:').and.include('69  catalog unavailable');
      seen.push(path.join(' '));
      const commands = /\nCommands:\n([\s\S]*?)\n\n/u.exec(out.stdout)?.[1] ?? '';
      const names = [...commands.matchAll(/^ {2}([a-z][a-z-]*)/gmu)].map((m) => m[1]!).filter((n) => n !== 'help');
      await Promise.all(names.map((name) => visit([...path, name])));
    };
    await visit([]);
    expect(seen.sort()).to.deep.equal(
      [
        '',
        'accounts', 'accounts add', 'accounts list', 'accounts remove',
        'agents', 'agents add', 'agents list', 'agents remove',
        'config', 'config validate',
        'connections', 'connections add', 'connections list', 'connections remove',
        'keys', 'keys create', 'keys list', 'keys revoke', 'keys rotate',
        'migrate',
        'tokens', 'tokens create', 'tokens list', 'tokens revoke',
        'webhook-endpoints', 'webhook-endpoints add', 'webhook-endpoints list', 'webhook-endpoints remove',
      ].sort(),
    );
    const viaHelp = await admin(['help', 'keys']);
    expectDone(viaHelp);
    expect(viaHelp.stdout).to.match(/^Usage: svc-server keys /u);
  });
});
