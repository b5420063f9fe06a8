import { expect } from 'chai';
import { aConnection, ACCOUNT_B } from '@svc/core/testing';
import { aRecordWrite, aWorld, CONNECTION, FixedRecordWriter, metered, ORDERS, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('UpdateRecord', function () {
  let w: World;
  const rows = [
    { id: 1, sku: 'A-1', qty: 1, paid: false, note: null },
    { id: 2, sku: 'B-2', qty: 2, paid: false, note: null },
  ];
  beforeEach(function () {
    w = aWorld();
    w.writer.defineTable(ORDERS, ['id', 'sku', 'qty', 'paid', 'note'], rows);
  });

  /** Updates with `body` on the default connection and returns the paths of its issues. */
  async function issuePathsOf(body: unknown): Promise<string[]> {
    const { result } = await w.updateRecord.execute(aRecordWrite(body));
    const error = errorOf(result);
    expect(error.code).to.equal('validation_failed');
    expect(w.writer.received).to.have.length(0);
    return (error.errors ?? []).map((i) => i.path);
  }

  it('updates the row the key selects and answers rows_affected 1', async function () {
    const { result } = await w.updateRecord.execute(
      aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 2, values: { qty: 20, paid: true, note: 'rush' } }),
    );
    expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
    expect(w.writer.rowsOf(ORDERS)).to.deep.equal([rows[0], { id: 2, sku: 'B-2', qty: 20, paid: true, note: 'rush' }]);
  });

  it('passes the key, the values and the route to the writer', async function () {
    await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'sku', key_value: 'A-1', values: { note: null } }, { route: 'egress' }));
    expect(w.writer.received).to.deep.equal([
      {
        connection: CONNECTION,
        entity: { schema: 'dbo', table: 'orders' },
        key: { column: 'sku', value: 'A-1' },
        values: { note: null },
        route: 'egress',
      },
    ]);
  });

  it('accepts a key_value of each type: string, number and boolean', async function () {
    for (const keyValue of ['A-1', 1, true]) {
      const column = typeof keyValue === 'string' ? 'sku' : typeof keyValue === 'number' ? 'id' : 'paid';
      const { result } = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: column, key_value: keyValue, values: { note: 'x' } }));
      expect(result.ok, `key_value ${String(keyValue)}`).to.equal(true);
    }
    expect(w.writer.received.map((c) => ('key' in c ? c.key.value : undefined))).to.deep.equal(['A-1', 1, true]);
  });

  it('answers rows_affected 0 when the key selects no row', async function () {
    const { result } = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 99, values: { qty: 5 } }));
    expect(valueOf(result)).to.deep.equal({ rows_affected: 0 });
    expect(w.writer.rowsOf(ORDERS)).to.deep.equal(rows);
  });

  it('passes ambiguous_key through and changes nothing when the key selects two rows', async function () {
    const { result } = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'paid', key_value: false, values: { qty: 0 } }));
    expect(errorOf(result).code).to.equal('ambiguous_key');
    expect(w.writer.rowsOf(ORDERS)).to.deep.equal(rows);
  });

  it('passes unknown_entity and unknown_column through', async function () {
    const missing = await w.updateRecord.execute(aRecordWrite({ entity: 'dbo.missing', key_column: 'id', key_value: 1, values: { qty: 0 } }));
    expect(errorOf(missing.result).code).to.equal('unknown_entity');
    const column = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'colour', key_value: 'red', values: { qty: 0 } }));
    expect(errorOf(column.result).code).to.equal('unknown_column');
  });

  it('passes any other write error through unchanged', async function () {
    const writer = new FixedRecordWriter({ code: 'connection_timeout', detail: 'The database did not answer in time.' });
    const update = metered(w.coreWith({ recordWriter: writer }).updateRecord, w.rateLimits);
    const { result } = await update.execute(aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 0 } }));
    expect(errorOf(result)).to.deep.equal({ code: 'connection_timeout', detail: 'The database did not answer in time.' });
  });

  describe('validation', function () {
    it('refuses a null key_value at /key_value', async function () {
      expect(await issuePathsOf({ entity: ORDERS, key_column: 'id', key_value: null, values: { qty: 1 } })).to.deep.equal(['/key_value']);
    });

    it('refuses an object or array key_value at /key_value', async function () {
      expect(await issuePathsOf({ entity: ORDERS, key_column: 'id', key_value: { id: 1 }, values: { qty: 1 } })).to.deep.equal(['/key_value']);
      expect(await issuePathsOf({ entity: ORDERS, key_column: 'id', key_value: [1], values: { qty: 1 } })).to.deep.equal(['/key_value']);
    });

    it('requires all of entity, key_column, key_value and values', async function () {
      expect(await issuePathsOf({})).to.have.members(['/entity', '/key_column', '/key_value', '/values']);
      expect(await issuePathsOf({ entity: ORDERS, values: { qty: 1 } })).to.have.members(['/key_column', '/key_value']);
    });

    it('refuses a key_column that breaks the identifier rules, naming the rule', async function () {
      const { result } = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: 'o.id', key_value: 1, values: { qty: 1 } }));
      expect(errorOf(result).errors).to.deep.equal([{ path: '/key_column', message: 'must not contain a dot' }]);
      expect(await issuePathsOf({ entity: ORDERS, key_column: '', key_value: 1, values: { qty: 1 } })).to.deep.equal(['/key_column']);
      expect(await issuePathsOf({ entity: ORDERS, key_column: 'k'.repeat(129), key_value: 1, values: { qty: 1 } })).to.deep.equal(['/key_column']);
    });

    it('counts key_column and column names in UTF-16 code units, like entity parts', async function () {
      const long = '😀'.repeat(65);
      const { result } = await w.updateRecord.execute(aRecordWrite({ entity: ORDERS, key_column: long, key_value: 1, values: { [long]: 1 } }));
      expect(errorOf(result).errors).to.have.deep.members([
        { path: '/key_column', message: 'must be at most 128 characters' },
        { path: `/values/${long}`, message: 'column name must be at most 128 characters' },
      ]);
      expect(w.writer.received).to.have.length(0);
    });

    it('refuses an object value at /values/<column>, and empty values', async function () {
      expect(await issuePathsOf({ entity: ORDERS, key_column: 'id', key_value: 1, values: { note: { a: 1 } } })).to.deep.equal(['/values/note']);
      expect(await issuePathsOf({ entity: ORDERS, key_column: 'id', key_value: 1, values: {} })).to.deep.equal(['/values']);
    });

    it('refuses a bad entity at /entity', async function () {
      expect(await issuePathsOf({ entity: 'orders', key_column: 'id', key_value: 1, values: { qty: 1 } })).to.deep.equal(['/entity']);
    });

    it('refuses an unknown member', async function () {
      expect(await issuePathsOf({ entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 1 }, where: 'id = 1' })).to.deep.equal([
        '/where',
      ]);
    });
  });

  describe('connection', function () {
    it('refuses a connection type other than sqlserver with writes_not_supported, never calling the writer', async function () {
      const mysql = aConnection({ connectionId: '6c9b1d7e-0f3a-4b52-8e61-2a4d5c7e9f10', type: 'mysql' });
      w.connections.add(mysql);
      const { result } = await w.updateRecord.execute(
        aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 0 } }, { connectionId: mysql.connectionId }),
      );
      expect(errorOf(result).code).to.equal('writes_not_supported');
      expect(w.writer.received).to.have.length(0);
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal(rows);
    });

    it("answers another account's connection exactly like a missing one", async function () {
      const id = 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d';
      const body = { entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 0 } };
      const missing = await w.updateRecord.execute(aRecordWrite(body, { connectionId: id }));
      w.connections.add(aConnection({ connectionId: id, accountId: ACCOUNT_B }));
      const foreign = await w.updateRecord.execute(aRecordWrite(body, { connectionId: id }));
      expect(errorOf(foreign.result).code).to.equal('not_found');
      expect(errorOf(foreign.result)).to.deep.equal(errorOf(missing.result));
      expect(w.writer.received).to.have.length(0);
    });

    it('answers not_found for a malformed connection id', async function () {
      const { result } = await w.updateRecord.execute(
        aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 0 } }, { connectionId: '../../etc' }),
      );
      expect(errorOf(result)).to.deep.equal({ code: 'not_found', detail: 'The connection was not found.' });
    });

    it('refuses an X-Svc-Egress header that is not a boolean with invalid_header', async function () {
      const { result } = await w.updateRecord.execute(
        aRecordWrite({ entity: ORDERS, key_column: 'id', key_value: 1, values: { qty: 0 } }, { route: { egressHeader: '1' } }),
      );
      expect(errorOf(result).code).to.equal('invalid_header');
      expect(w.writer.received).to.have.length(0);
    });
  });
});
