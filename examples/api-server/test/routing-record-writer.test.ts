import { expect } from 'chai';
import { ok, type InsertCommand, type RecordWriter } from '@svc/core';
import type { SqlServerConnectionSettings } from '@svc/adapter-sqlserver';
import { RoutingRecordWriter, type ClosableRecordWriter, type WriteTarget } from '../src/routing-record-writer.js';

// The writer of a server on a PostgreSQL catalog (README "A catalog for several instances
// (PostgreSQL)"): each write asks the catalog where its connection's writes go.
const CONNECTION = '3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11';
const details = (host: string): SqlServerConnectionSettings => ({ host, port: 1433, database: 'sales', user: 'svc', password: 'pw', encrypt: true, trustServerCertificate: false });
const insert = (connectionId = CONNECTION): InsertCommand => ({
  connection: { connectionId, accountId: 'acct_a', type: 'sqlserver' },
  entity: { schema: 'dbo', table: 'orders' },
  values: { id: 2, sku: 'B-2', qty: 1, note: null, status: 'new' },
  route: 'default',
});

/** A SQL Server writer stand-in that records the host it was made for and whether it was closed. */
class FakeWriter implements ClosableRecordWriter {
  closed = false;
  writes = 0;
  constructor(readonly host: string) {}
  insert: RecordWriter['insert'] = () => Promise.resolve((this.writes++, ok({ rowsAffected: 1 })));
  update: RecordWriter['update'] = () => Promise.resolve((this.writes++, ok({ rowsAffected: 1 })));
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

describe('RoutingRecordWriter on catalog routes (resolved at each write)', function () {
  it('makes a connection\'s writer at its first write, keeps it while its details stay, and replaces it (closing the old one) when they change', async function () {
    let target: WriteTarget = { kind: 'sqlserver', details: details('db-1') };
    const made: FakeWriter[] = [];
    const writer = new RoutingRecordWriter(new Map(), undefined, undefined, {
      resolve: () => Promise.resolve(target),
      sqlServer: () => Promise.resolve((_id, d) => (made.push(new FakeWriter(d.host)), made.at(-1)!)),
    });
    expect(writer.connectionIds()).to.deep.equal([]);
    await Promise.all([writer.insert(insert()), writer.insert(insert())]);
    expect(made.map((w) => w.host)).to.deep.equal(['db-1']);
    expect(made[0]!.writes).to.equal(2);

    target = { kind: 'sqlserver', details: details('db-2') };
    await writer.insert(insert());
    expect(made.map((w) => [w.host, w.writes, w.closed])).to.deep.equal([
      ['db-1', 2, true],
      ['db-2', 1, false],
    ]);

    // Details removed: in-memory demo tables (dbo.orders); the SQL Server writer is retired.
    target = { kind: 'demo' };
    expect((await writer.insert(insert())).ok).to.equal(true);
    expect(made[1]!.closed).to.equal(true);
    expect(made).to.have.length(2);
    await writer.close();
  });

  it('rejects a write when the catalog cannot answer, without making a writer', async function () {
    const writer = new RoutingRecordWriter(new Map(), undefined, undefined, {
      resolve: () => Promise.reject(new Error('catalog lost')),
      sqlServer: () => Promise.reject(new Error('not reached')),
    });
    let failure: unknown;
    await writer.insert(insert()).catch((e: unknown) => (failure = e));
    expect((failure as Error).message).to.equal('catalog lost');
    expect(writer.connectionIds()).to.deep.equal([]);
  });
});
