import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { sha256Hex } from '@svc/core';
import { loadSettings } from '../src/settings.js';
import { readmeCommands, run, secretOf, type Ran } from './support/admin-cli.js';
import { REPO_ROOT, tempDir } from './support/server-process.js';

/** The README section whose shell block this test runs, line by line. */
const SECTION = '### A catalog for several instances (PostgreSQL)';


describe('README "A catalog for several instances (PostgreSQL)": every command shown works as written', function () {
  this.timeout(120_000);
  // The README's schema `svc` stands for one of this test's own, dropped after.
  const schema = `pgreadme_${process.pid}_${Date.now().toString(36)}`;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let db: pg.Client | undefined;

  before(async function () {
    dir = await tempDir();
  });

  after(async function () {
    await db?.query(`drop schema if exists "${schema}" cascade`);
    await db?.end();
    await dir?.remove();
  });

  it('runs each line with bash from the repository root (catalog.yaml in a temporary directory, the schema a fresh one)', async function () {
    const lines = readmeCommands(await readFile(join(REPO_ROOT, 'README.md'), 'utf8'), SECTION);
    const config = join(dir.path, 'catalog.yaml');
    // Each line runs in its own shell: the exported URL is handed to the lines after it.
    const env: Record<string, string | null> = { SVC_CONFIG: null, SVC_CATALOG_URL: null };
    const quoted = (out: Ran): string[] => [...out.stdout.matchAll(/"([^"]+)"/gu)].map((m) => m[1]!);
    const row = async (sql: string, ...values: unknown[]): Promise<Record<string, unknown> | undefined> => (await db!.query(sql, values)).rows[0] as Record<string, unknown> | undefined;
    const effects: Record<string, (out: Ran, line: string) => Promise<unknown>> = {
      export: async (_out, line) => {
        env['SVC_CATALOG_URL'] = /^export SVC_CATALOG_URL=(\S+)/u.exec(line)![1]!;
        db = new pg.Client({ connectionString: env['SVC_CATALOG_URL'], connectionTimeoutMillis: 5000 });
        await db.connect();
      },
      printf: async () => expect(loadSettings(config, {}).catalog?.postgres).to.deep.include({ urlEnv: 'SVC_CATALOG_URL', schema }),
      migrate: async (out) => {
        expect(out.stdout).to.match(/^applied \d+ migrations: 0001_catalog_tables/u);
        expect(await row('select count(*)::int as n from information_schema.tables where table_schema = $1', schema)).to.deep.equal({ n: 8 });
      },
      'accounts add': async (out) => expect(await row(`select id from "${schema}".accounts where id = $1`, quoted(out)[0])).to.not.equal(undefined),
      'agents add': async (out) => expect(await row(`select account_id from "${schema}".agents where id = $1`, quoted(out)[0])).to.deep.equal({ account_id: quoted(out)[1] }),
      'keys create': async (out) => {
        const secret = secretOf(out, 'svc-');
        expect(await row(`select sha256 from "${schema}".credentials where id = $1`, quoted(out)[0])).to.deep.equal({ sha256: sha256Hex(secret) });
      },
      'webhook-endpoints add': async (out) =>
        expect(await row(`select account_id, url, secret_env, secret_encrypted from "${schema}".webhook_endpoints where id = $1`, quoted(out)[0])).to.deep.equal({
          account_id: quoted(out)[1],
          url: 'https://hooks.example.com/svc',
          secret_env: 'SVC_WEBHOOK_SECRET_CI',
          secret_encrypted: null,
        }),
      'config validate': async (out) => expect(out.stdout).to.match(/ is valid: 1 accounts, 1 API keys, 0 OAuth tokens, 1 agents, 0 connections/u),
      'keys revoke': async (out) => {
        const revoked = await row(`select revoked_at from "${schema}".credentials where id = $1`, quoted(out)[0]);
        expect(revoked?.['revoked_at']).to.be.instanceOf(Date);
      },
    };

    const ran: string[] = [];
    for (const line of lines) {
      const words = /^(export|printf) /u.exec(line) ?? /pnpm admin((?: [a-z][a-z-]*(?= |$)){1,2})/u.exec(line);
      const key = words === null ? line : words[1]!.trim();
      const effect = effects[key];
      expect(effect, `no effect check for the README line: ${line}`).to.be.a('function');
      const command = line.replace(/(?<=\s)catalog\.yaml\b/gu, config).replace(/schema: svc\\n/u, `schema: ${schema}\\n`);
      const out = await run('bash', ['-c', command], env);
      expect(out.code, `${line}\n${out.stdout}\n${out.stderr}`).to.equal(0);
      await effect!(out, line);
      ran.push(key);
    }
    expect(ran).to.deep.equal(['export', 'printf', 'migrate', 'accounts add', 'agents add', 'keys create', 'webhook-endpoints add', 'config validate', 'keys revoke']);
  });
});
