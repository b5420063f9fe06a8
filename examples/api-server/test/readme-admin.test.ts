import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { sha256Hex } from '@svc/core';
import { loadSettings } from '../src/settings.js';
import { readmeCommands, run, secretOf, type Ran } from './support/admin-cli.js';
import { REPO_ROOT, tempDir } from './support/server-process.js';

/** The README section whose shell blocks this test runs, line by line. */
const SECTION = '### The admin CLI: `svc-server`';


/** The lists of an account in the file, and their entries. */
interface Lists {
  api_keys: { id: string; sha256: string };
  oauth_tokens: { id: string; sha256: string; scopes: string[]; expires_at?: string };
  agents: { id: string; name?: string };
  connections: { id: string; type: string; sqlserver?: { host: string } };
}
type RawAccount = { id: string } & { [K in keyof Lists]?: Lists[K][] };

describe('README "The admin CLI": every command shown works as written (exit 0 and its effect), on a temporary config.yaml', function () {
  this.timeout(120_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async function () {
    dir = await tempDir();
  });
  afterEach(async function () {
    await dir.remove();
  });

  it('runs each line with bash from the repository root, config.yaml standing for a file in a temporary directory', async function () {
    const lines = readmeCommands(await readFile(join(REPO_ROOT, 'README.md'), 'utf8'), SECTION);
    expect(lines.length).to.be.above(10);
    const config = join(dir.path, 'config.yaml');
    const example = await readFile(join(REPO_ROOT, 'examples/api-server/config.example.yaml'), 'utf8');
    const accounts = async (): Promise<RawAccount[]> => (parse(await readFile(config, 'utf8')) as { accounts: RawAccount[] }).accounts;
    const all = async <K extends keyof Lists>(key: K): Promise<Lists[K][]> => (await accounts()).flatMap((a) => (a[key] ?? []) as Lists[K][]);
    /** The last secret each credential id was given. */
    const secrets = new Map<string, string>();
    /** `"x"` quoted in the output, in order. */
    const quoted = (out: Ran) => [...out.stdout.matchAll(/"([^"]+)"/gu)].map((m) => m[1]!);

    /** What each command must have done, by its command words. */
    const effects: Record<string, (out: Ran, line: string) => Promise<unknown>> = {
      cp: async () => expect(await readFile(config, 'utf8')).to.equal(example),
      'accounts add': async (out) => expect((await accounts()).map((a) => a.id)).to.include(quoted(out)[0]),
      'keys create': async (out) => {
        const [id] = quoted(out);
        const secret = secretOf(out, 'svc-');
        expect((await all('api_keys')).find((k) => k.id === id)?.sha256).to.equal(sha256Hex(secret));
        expect(await readFile(config, 'utf8')).to.not.include(secret);
        secrets.set(id!, secret);
      },
      'tokens create': async (out, line) => {
        const [id] = quoted(out);
        const secret = secretOf(out, 'svcpt_');
        const token = (await all('oauth_tokens')).find((t) => t.id === id);
        expect(token?.sha256).to.equal(sha256Hex(secret));
        expect(token?.scopes).to.deep.equal([...line.matchAll(/--scope (\S+)/gu)].map((m) => m[1]));
        expect(Date.parse(token?.expires_at ?? '')).to.be.above(Date.now());
      },
      'agents add': async (out, line) => {
        const agent = (await all('agents')).find((g) => g.id === quoted(out)[0]);
        expect(agent?.name).to.equal(/--name "([^"]+)"/u.exec(line)?.[1]);
      },
      'connections add': async (out, line) => {
        const connection = (await all('connections')).find((k) => k.id === quoted(out)[0]);
        expect(connection?.sqlserver?.host).to.equal(/--host (\S+)/u.exec(line)?.[1]);
      },
      'keys list': async (out) => {
        const listed = JSON.parse(out.stdout) as { id: string; sha256: string }[];
        expect(listed.map((k) => [k.id, k.sha256])).to.deep.equal((await all('api_keys')).map((k) => [k.id, k.sha256]));
        for (const secret of secrets.values()) expect(out.stdout).to.not.include(secret);
      },
      'keys rotate': async (out) => {
        const [id] = quoted(out);
        const secret = secretOf(out, 'svc-');
        expect(secret).to.not.equal(secrets.get(id!));
        expect((await all('api_keys')).find((k) => k.id === id)?.sha256).to.equal(sha256Hex(secret));
        secrets.set(id!, secret);
      },
      'keys revoke': async (out) => expect((await all('api_keys')).map((k) => k.id)).to.not.include(quoted(out)[0]),
      'tokens revoke': async (out) => expect((await all('oauth_tokens')).map((k) => k.id)).to.not.include(quoted(out)[0]),
      'config validate': async (out) => expect(out.stdout).to.match(/ is valid: \d+ accounts/u),
      migrate: async (out) => expect(out.stdout).to.match(/^nothing to migrate: /u),
      '--help': async (out) => expect(out.stdout).to.match(/^Usage: svc-server /mu).and.include('Exit codes:'),
    };

    const ran: string[] = [];
    for (const line of lines) {
      const words = /^cp /u.test(line) ? 'cp' : /(?:pnpm admin|admin\/main\.js)((?: [a-z]+(?= |$)){0,2})( --help)?/u.exec(line);
      const key = typeof words === 'string' ? words : words === null ? line : (words[1]!.trim() || words[2]!.trim());
      const effect = effects[key];
      expect(effect, `no effect check for the README line: ${line}`).to.be.a('function');
      const out = await run('bash', ['-c', line.replace(/(?<=[\s=])config\.yaml\b/gu, config)], { SVC_CONFIG: null });
      expect(out.code, `${line}\n${out.stdout}\n${out.stderr}`).to.equal(0);
      await effect!(out, line);
      // After every command: still a file the server accepts, comments where they were.
      loadSettings(config, {});
      expect(await readFile(config, 'utf8')).to.include('    # Secrets are never stored: only their SHA-256 digest.');
      ran.push(key);
    }
    expect(ran).to.include.members(['accounts add', 'keys create', 'tokens create', 'keys rotate', 'keys revoke', 'config validate', 'migrate', '--help']);
  });
});
