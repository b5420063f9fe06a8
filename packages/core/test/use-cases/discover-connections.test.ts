import { expect } from 'chai';
import { createCore, DependencyUnavailableError, type ConnectionView, type PageQuery } from '@svc/core';
import { ACCOUNT_B, aConnection, aPrincipal, FailingConnectionCatalog, InMemoryConnectionCatalog } from '@svc/core/testing';
import { aRecordWrite, aWorld, BASE_URL, CONNECTION, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

const PG = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const OF_B = '11111111-2222-4333-8444-555555555555';

describe('ListConnections and GetConnection (discovery)', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
    w.connections.add(aConnection({ connectionId: PG.toUpperCase(), type: 'postgresql', name: 'Analytics', createdAt: new Date('2026-01-02T03:04:05Z') }));
    w.connections.add(aConnection({ connectionId: OF_B, accountId: ACCOUNT_B }));
  });

  it('shows type, name, writable (sqlserver only), egress_source_address (null when not configured) and records_url; nothing else', async function () {
    const { items, nextCursor: next } = valueOf((await w.listConnections.execute({ principal: aPrincipal() })).result);
    expect(next).to.equal(undefined);
    expect(items).to.deep.equal([
      { connection_id: CONNECTION.connectionId, type: 'sqlserver', name: null, writable: true, egress_source_address: null, records_url: `${BASE_URL}/api/v1/connections/${CONNECTION.connectionId}/records`, created_at: null },
      { connection_id: PG, type: 'postgresql', name: 'Analytics', writable: false, egress_source_address: null, records_url: `${BASE_URL}/api/v1/connections/${PG}/records`, created_at: '2026-01-02T03:04:05.000Z' },
    ] satisfies ConnectionView[]);
  });

  it('shows the configured egress source address on every connection', async function () {
    const core = createCore({ connections: new InMemoryConnectionCatalog([aConnection(), aConnection({ connectionId: PG, type: 'postgresql' })]) }, { baseUrl: `${BASE_URL}/`, egressSourceAddress: '203.0.113.7' });
    const { items } = valueOf(await core.listConnections.execute({ principal: aPrincipal() }));
    expect(items.map((c) => [c.egress_source_address, c.records_url])).to.deep.equal([
      ['203.0.113.7', `${BASE_URL}/api/v1/connections/${CONNECTION.connectionId}/records`],
      ['203.0.113.7', `${BASE_URL}/api/v1/connections/${PG}/records`],
    ]);
    expect(valueOf(await core.getConnection.execute({ principal: aPrincipal(), connectionId: PG })).egress_source_address).to.equal('203.0.113.7');
  });

  it("pages in ascending lower-case id order to the last page, never listing another account's", async function () {
    const ids = Array.from({ length: 9 }, (_, i) => `0000000${i}-0000-4000-8000-000000000000`);
    for (const id of ids) w.connections.add(aConnection({ connectionId: id.toUpperCase() }));
    const expected = [...ids, CONNECTION.connectionId, PG].sort();
    const seen: string[] = [];
    let page: PageQuery = { limit: 4 };
    let pages = 0;
    for (;;) {
      pages += 1;
      const value = valueOf((await w.listConnections.execute({ principal: aPrincipal(), page })).result);
      seen.push(...value.items.map((c) => c.connection_id));
      if (value.nextCursor === undefined) break;
      page = { limit: 4, cursor: value.nextCursor };
    }
    expect({ seen, pages }).to.deep.equal({ seen: expected, pages: 3 });
    expect(seen).to.not.include(OF_B);
  });

  it('refuses a bad limit or cursor naming the parameter', async function () {
    expect(errorOf((await w.listConnections.execute({ principal: aPrincipal(), page: { limit: 0 } })).result).errors?.[0]?.path).to.equal('/limit');
    expect(errorOf((await w.listConnections.execute({ principal: aPrincipal(), page: { cursor: '%%' } })).result).errors?.[0]?.path).to.equal('/cursor');
  });

  it("reads one connection by its id in any case; another account's, a missing one and a malformed id answer as row writes do", async function () {
    const view = valueOf((await w.getConnection.execute({ principal: aPrincipal(), connectionId: PG.toUpperCase() })).result);
    expect(view).to.include({ connection_id: PG, type: 'postgresql', writable: false });
    expect(Object.keys(view).sort()).to.deep.equal(['connection_id', 'created_at', 'egress_source_address', 'name', 'records_url', 'type', 'writable']);
    const missingId = '11111111-2222-4333-8444-555555555556';
    const foreign = errorOf((await w.getConnection.execute({ principal: aPrincipal(), connectionId: OF_B })).result);
    const missing = errorOf((await w.getConnection.execute({ principal: aPrincipal(), connectionId: missingId })).result);
    expect(foreign).to.deep.equal({ code: 'not_found', detail: `Connection ${OF_B} was not found.` });
    expect(missing).to.deep.equal({ code: 'not_found', detail: `Connection ${missingId} was not found.` });
    // The same answer a row write gives (one detail for a connection not found, whatever the operation).
    const write = errorOf((await w.insertRecord.execute(aRecordWrite({ entity: 'dbo.orders', values: { id: 1 } }, { connectionId: OF_B }))).result);
    expect(write).to.deep.equal(foreign);
    expect(errorOf((await w.getConnection.execute({ principal: aPrincipal(), connectionId: 'not-a-uuid' })).result)).to.deep.equal({ code: 'not_found', detail: 'The connection was not found.' });
  });

  it('rejects with DependencyUnavailableError when the catalog is lost, after charging (HTTP 503)', async function () {
    const connections = new FailingConnectionCatalog(w.connections).failWith('unavailable');
    const core = w.coreWith({ connections });
    const meter = core.rateLimits.meterFor(aPrincipal());
    await core.listConnections.execute({ principal: aPrincipal(), meter }).then(
      () => expect.fail('resolved'),
      (error: unknown) => expect(error).to.be.instanceOf(DependencyUnavailableError),
    );
    expect(meter.charged).to.equal(true);
    expect(connections.failures).to.equal(1);
  });
});
