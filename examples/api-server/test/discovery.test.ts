// Discovery of agents and connections end to end (docs/CONTRACT.md "Discovery";
// docs/decisions.md "Discovery: agents and connections"): the API server as a child process,
// with the accounts in its configuration file and in a PostgreSQL catalog, called over HTTP.
import { expect } from 'chai';
import { migrateCatalog } from '@svc/adapter-postgres';
import { addresses, AGENT_B, AGENTS, e2eConfig, PG_A, SECRETS, SQL_A, SQL_B, type Addresses } from './support/fixture.js';
import { CATALOG_TEST_URL, dropSchema, fillCatalog, type AccountEntry } from './support/catalog-database.js';
import { everyPage } from './support/paging.js';
import { startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';
import { apiKey, bearer, call, expectData, expectProblem, type Answer } from '../../../tools/test-support/http.js';

const A = apiKey(SECRETS.keyA);
const B = apiKey(SECRETS.keyB);
/** Where the egress route's traffic leaves from: every connection shows it. */
const EGRESS_SOURCE = '127.0.0.1';
/** A SQL Server connection of A with database details: none of them may appear in an answer (the leak scan registers them). */
const SQL_DETAILED = 'd15c0000-0000-4000-8000-000000000001';
const DETAILS = { host: '127.0.0.3', port: 1433, database: 'disc_sales_db', user: 'disc_writer_user', password_env: 'DISC_DB_PASSWORD', encrypt: false, trust_server_certificate: true };
const DB_PASSWORD = 'disc-Db-Password-7Hq2Lm9Xz';

/** A's agents beyond the fixture's: enough for several pages. */
const MORE_AGENTS_A = Array.from({ length: 21 }, (_, i) => ({
  id: `agent_disc_${String(i).padStart(2, '0')}`,
  name: `Discovery agent ${i}`,
  ...(i % 2 === 0 ? { description: `Handles case ${i}.` } : {}),
}));
const MORE_CONNECTIONS_A = [
  { id: 'd15c0000-0000-4000-8000-00000000000a', type: 'postgresql', name: 'Analytics' },
  { id: 'D15C0000-0000-4000-8000-00000000000B', type: 'sqlserver' },
  { id: 'd15c0000-0000-4000-8000-00000000000c', type: 'snowflake', name: 'Lake' },
  { id: SQL_DETAILED, type: 'sqlserver', name: 'Sales', sqlserver: DETAILS },
];
const MORE_AGENTS_B = [{ id: 'agent_disc_b1' }, { id: 'agent_disc_b2', name: 'Only B sees me' }];
const MORE_CONNECTIONS_B = [{ id: 'd15c0000-0000-4000-8000-0000000000b1', type: 'postgresql', name: 'B warehouse' }];

const ALL_AGENTS_A = [...Object.values(AGENTS), ...MORE_AGENTS_A.map((a) => a.id)].sort();
const ALL_CONNECTIONS_A = [SQL_A, PG_A, ...MORE_CONNECTIONS_A.map((c) => c.id.toLowerCase())].sort();
const IDS_OF_B = [AGENT_B, SQL_B, ...MORE_AGENTS_B.map((a) => a.id), ...MORE_CONNECTIONS_B.map((c) => c.id)];

/** Every page from `path` on `base` (support `everyPage`). */
const pages = (base: string, path: string, headers: Record<string, string>): Promise<Answer[]> => everyPage(`${base}${path}`, headers, undefined, 30);

type Catalog = 'configuration file' | 'PostgreSQL catalog';

for (const catalog of ['configuration file', 'PostgreSQL catalog'] as const satisfies readonly Catalog[]) describe(`discovery of agents and connections end to end on the ${catalog} (child process)`, function () {
  this.timeout(60_000);
  const schema = `disc_${process.pid}_${Date.now().toString(36)}`;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let at: Addresses;
  let server: ServerProcess;

  before(async function () {
    dir = await tempDir();
    at = await addresses();
    const config = e2eConfig(at);
    config['egress'] = { ...(config['egress'] as Record<string, unknown>), source_address: EGRESS_SOURCE };
    const accounts = config['accounts'] as AccountEntry[];
    config['accounts'] = [
      { ...accounts[0], agents: [...(accounts[0]?.agents ?? []), ...MORE_AGENTS_A], connections: [...(accounts[0]?.connections ?? []), ...MORE_CONNECTIONS_A] },
      { ...accounts[1], agents: [...(accounts[1]?.agents ?? []), ...MORE_AGENTS_B], connections: [...(accounts[1]?.connections ?? []), ...MORE_CONNECTIONS_B] },
    ];
    if (catalog === 'PostgreSQL catalog') {
      await migrateCatalog({ connection: CATALOG_TEST_URL, schema });
      await fillCatalog(schema, config['accounts'] as AccountEntry[]);
      delete config['accounts'];
      config['catalog'] = { postgres: { schema } };
    }
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl, 20_000, { SVC_CATALOG_URL: CATALOG_TEST_URL, DISC_DB_PASSWORD: DB_PASSWORD });
  });

  after(async function () {
    await server?.kill();
    await dir?.remove();
    if (catalog === 'PostgreSQL catalog') await dropSchema(schema);
  });

  it("A pages through its agents to the last page (limit 10: 3 pages; default 20: 2), in id order, and reads each; B's are never there", async function () {
    const tens = await pages(at.url, '/api/v1/agents?limit=10', A);
    expect(tens.map((p) => (p.body as { data: unknown[] }).data.length)).to.deep.equal([10, 10, 5]);
    const listed = tens.flatMap((p) => (p.body as { data: Record<string, unknown>[] }).data);
    expect(listed.map((a) => a['agent_id'])).to.deep.equal(ALL_AGENTS_A);
    tens.forEach((p, i) => expect((p.body as { next_cursor: string | null }).next_cursor === null, `page ${i}`).to.equal(i === tens.length - 1));
    const twenties = await pages(at.url, '/api/v1/agents', A);
    expect(twenties.flatMap((p) => (p.body as { data: { agent_id: string }[] }).data.map((a) => a.agent_id))).to.deep.equal(ALL_AGENTS_A);
    expect(twenties).to.have.length(2);
    // By id (agent_b is a prefix of agent_bounds), and by text for the UUIDs.
    for (const id of listed.map((a) => String(a['agent_id']))) expect(IDS_OF_B).to.not.include(id);
    for (const page of [...tens, ...twenties]) for (const id of IDS_OF_B.filter((i) => i.includes('-'))) expect(page.text).to.not.include(id);

    for (const agent of listed) {
      const id = String(agent['agent_id']);
      const read = expectData<Record<string, unknown>>(await call(at.url, 'GET', `/api/v1/agents/${id}`, { headers: A }), 200);
      expect(read).to.deep.equal(agent);
      const configured = MORE_AGENTS_A.find((a) => a.id === id);
      expect(read).to.include({ agent_id: id, name: configured?.name ?? null, description: configured?.description ?? null, run_url: `${at.url}/api/v1/agents/${id}/run`, mcp_url: `${at.url}/api/v1/agents/${id}/mcp` });
      if (catalog === 'configuration file') expect(read['created_at']).to.equal(null);
      else expect(Date.parse(String(read['created_at']))).to.be.closeTo(Date.now(), 120_000);
    }
  });

  it("A pages through its connections (an unwrapped array, Link only) and reads each: writable, egress_source_address, records_url; never a host, user, database or password", async function () {
    const threes = await pages(at.url, '/api/v1/connections?limit=3', A);
    expect(threes.map((p) => (p.body as unknown[]).length)).to.deep.equal([3, 3]);
    const listed = threes.flatMap((p) => p.body as Record<string, unknown>[]);
    expect(listed.map((c) => c['connection_id'])).to.deep.equal(ALL_CONNECTIONS_A);
    for (const page of threes) {
      for (const id of IDS_OF_B) expect(page.text).to.not.include(id);
      for (const value of [DETAILS.host, DETAILS.user, DETAILS.database, DETAILS.password_env, DB_PASSWORD]) expect(page.text).to.not.include(value);
    }
    for (const connection of listed) {
      const id = String(connection['connection_id']);
      const read = expectData<Record<string, unknown>>(await call(at.url, 'GET', `/api/v1/connections/${id.toUpperCase()}`, { headers: A }), 200);
      expect(read).to.deep.equal(connection);
      expect(Object.keys(read).sort()).to.deep.equal(['connection_id', 'created_at', 'egress_source_address', 'name', 'records_url', 'type', 'writable']);
      expect(read).to.include({ writable: read['type'] === 'sqlserver', egress_source_address: EGRESS_SOURCE, records_url: `${at.url}/api/v1/connections/${id}/records` });
    }
    expect(listed.find((c) => c['connection_id'] === SQL_DETAILED)).to.include({ type: 'sqlserver', name: 'Sales', writable: true });
    expect(listed.find((c) => c['connection_id'] === PG_A)).to.include({ type: 'postgresql', name: null, writable: false });
  });

  it("B lists only its own, and A's agents and connections answer B exactly as missing ones (404)", async function () {
    const agentsOfB = (await pages(at.url, '/api/v1/agents?limit=1', B)).flatMap((p) => (p.body as { data: { agent_id: string }[] }).data.map((a) => a.agent_id));
    expect(agentsOfB).to.deep.equal([AGENT_B, ...MORE_AGENTS_B.map((a) => a.id)].sort());
    const connectionsOfB = (await pages(at.url, '/api/v1/connections?limit=1', B)).flatMap((p) => (p.body as { connection_id: string }[]).map((c) => c.connection_id));
    expect(connectionsOfB).to.deep.equal([SQL_B, ...MORE_CONNECTIONS_B.map((c) => c.id)].sort());
    for (const [foreign, missing] of [
      [`/api/v1/agents/${AGENTS.main}`, '/api/v1/agents/agent_nope'],
      [`/api/v1/connections/${SQL_DETAILED}`, '/api/v1/connections/d15c0000-0000-4000-8000-00000000ffff'],
    ] as const) {
      const f = await call(at.url, 'GET', foreign, { headers: B });
      const m = await call(at.url, 'GET', missing, { headers: B });
      expectProblem(f, 404, 'not_found');
      const strip = (a: Answer, id: string): string => JSON.stringify({ ...(a.body as Record<string, unknown>), request_id: null }).replace(id, '<id>');
      expect(strip(f, foreign.split('/').pop() ?? '')).to.equal(strip(m, missing.split('/').pop() ?? ''));
    }
  });

  it('refuses an OAuth token (401 unsupported_credential), a bad limit and a bad cursor (400 naming them); the egress listener serves none of it', async function () {
    for (const path of ['/api/v1/agents', `/api/v1/agents/${AGENTS.main}`, '/api/v1/connections', `/api/v1/connections/${SQL_A}`]) {
      expectProblem(await call(at.url, 'GET', path, { headers: bearer(SECRETS.tokenWrite) }), 401, 'unsupported_credential');
      expectProblem(await call(at.egressUrl, 'GET', path, { headers: A }), 404, 'not_found');
    }
    expect(expectProblem(await call(at.url, 'GET', '/api/v1/agents?limit=500', { headers: A }), 400, 'validation_failed').errors?.[0]?.path).to.equal('/limit');
    expect(expectProblem(await call(at.url, 'GET', '/api/v1/connections?cursor=forged', { headers: A }), 400, 'invalid_cursor').errors?.[0]?.path).to.equal('/cursor');
  });
});
