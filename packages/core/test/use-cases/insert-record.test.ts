import { expect } from 'chai';
import { aConnection, ACCOUNT_B, aPrincipal } from '@svc/core/testing';
import { aRecordWrite, aWorld, CONNECTION, FixedRecordWriter, metered, ORDERS, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('InsertRecord', function () {
  let w: World;
  beforeEach(function () {
    w = aWorld();
  });

  /** Inserts `body` on the default connection and returns the paths of its issues. */
  async function issuePathsOf(body: unknown): Promise<string[]> {
    const { result } = await w.insertRecord.execute(aRecordWrite(body));
    const error = errorOf(result);
    expect(error.code).to.equal('validation_failed');
    return (error.errors ?? []).map((i) => i.path);
  }

  describe('a valid insert', function () {
    it('writes the row and answers rows_affected 1', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1, sku: 'A-1' } }));
      expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal([{ id: 1, sku: 'A-1' }]);
    });

    it('accepts a value of each type: string, number, boolean and null', async function () {
      const values = { sku: 'A-1', qty: 3.5, paid: false, note: null };
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values }));
      expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal([values]);
    });

    it('passes connection, entity, values and the default route to the writer', async function () {
      await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 7 } }));
      expect(w.writer.received).to.deep.equal([
        { connection: CONNECTION, entity: { schema: 'dbo', table: 'orders' }, values: { id: 7 }, route: 'default' },
      ]);
    });

    it('passes the egress route on to the writer', async function () {
      await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { route: 'egress' }));
      expect(w.writer.received.map((c) => c.route)).to.deep.equal(['egress']);
    });

    it('reads X-Svc-Egress in any case, and an absent header as the default route', async function () {
      await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { route: { egressHeader: 'TRUE' } }));
      await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 2 } }, { route: { egressHeader: 'False' } }));
      await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 3 } }, { route: { egressHeader: undefined } }));
      expect(w.writer.received.map((c) => c.route)).to.deep.equal(['egress', 'default', 'default']);
    });

    it('refuses an X-Svc-Egress header that is not a boolean with invalid_header, before the writer', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { route: { egressHeader: 'yes' } }));
      expect(errorOf(result).code).to.equal('invalid_header');
      expect(w.writer.received).to.have.length(0);
    });

    it('finds the connection whatever the case of its UUID', async function () {
      const { result } = await w.insertRecord.execute(
        aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { connectionId: CONNECTION.connectionId.toUpperCase() }),
      );
      expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
    });
  });

  describe('entity', function () {
    const accepted: readonly [string, { schema: string; table: string }][] = [
      ['dbo.t', { schema: 'dbo', table: 't' }],
      ['dbo.[x]', { schema: 'dbo', table: '[x]' }],
      ['dbo.my table', { schema: 'dbo', table: 'my table' }],
      ['dbo.we]ird', { schema: 'dbo', table: 'we]ird' }],
      [`${'s'.repeat(128)}.${'t'.repeat(128)}`, { schema: 's'.repeat(128), table: 't'.repeat(128) }],
    ];
    for (const [entity, parts] of accepted) {
      it(`accepts ${JSON.stringify(entity.length > 40 ? `${entity.slice(0, 12)}… (parts of 128)` : entity)} and passes it to the writer unchanged`, async function () {
        w.writer.defineTable(entity, ['id']);
        const { result } = await w.insertRecord.execute(aRecordWrite({ entity, values: { id: 1 } }));
        expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
        expect(w.writer.received[0]?.entity).to.deep.equal(parts);
        expect(w.writer.rowsOf(entity)).to.deep.equal([{ id: 1 }]);
      });
    }

    const refused: readonly [string, string, RegExp][] = [
      ['without a schema', 'orders', /two parts/],
      ['of three parts', 'a.b.c', /two parts/],
      ['with an empty schema', '.t', /schema part must not be empty/],
      ['with an empty table', 'dbo.', /table part must not be empty/],
      ['with a schema of 129 characters', `${'s'.repeat(129)}.t`, /schema part must be at most 128 characters/],
      ['with a table of 129 characters', `dbo.${'t'.repeat(129)}`, /table part must be at most 128 characters/],
      ['with a NUL', 'dbo.or\u0000ders', /control characters/],
      ['with a line feed', 'dbo.orders\n', /control characters/],
      ['with a DEL', 'dbo\u007f.orders', /control characters/],
      ['with a C1 control', 'dbo.\u009borders', /control characters/],
      ['empty', '', /two parts/],
    ];
    for (const [what, entity, message] of refused) {
      it(`refuses an entity ${what} at /entity, without calling the writer`, async function () {
        const { result } = await w.insertRecord.execute(aRecordWrite({ entity, values: { id: 1 } }));
        const error = errorOf(result);
        expect(error.code).to.equal('validation_failed');
        expect(error.errors).to.have.length(1);
        expect(error.errors?.[0]?.path).to.equal('/entity');
        expect(error.errors?.[0]?.message).to.match(message);
        expect(error.detail).to.match(/^\/entity: /);
        expect(w.writer.received).to.have.length(0);
      });
    }

    it('refuses an entity that is not a string', async function () {
      expect(await issuePathsOf({ entity: 42, values: { id: 1 } })).to.deep.equal(['/entity']);
    });
  });

  describe('values', function () {
    it('refuses an object value with an issue at /values/<column>', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1, note: { a: 1 } } }));
      const error = errorOf(result);
      expect(error.code).to.equal('validation_failed');
      expect(error.errors).to.deep.equal([{ path: '/values/note', message: 'must be a string or a number or a boolean or null' }]);
      expect(w.writer.received).to.have.length(0);
    });

    it('refuses an array value with an issue at /values/<column>', async function () {
      expect(await issuePathsOf({ entity: ORDERS, values: { sku: ['A', 'B'] } })).to.deep.equal(['/values/sku']);
    });

    it('reports every bad value, each at its own path', async function () {
      expect(await issuePathsOf({ entity: ORDERS, values: { id: 1, sku: [], note: {} } })).to.have.members(['/values/sku', '/values/note']);
    });

    it('escapes a column name holding / and ~ in the issue path (RFC 6901)', async function () {
      expect(await issuePathsOf({ entity: ORDERS, values: { 'a/b~c': {} } })).to.deep.equal(['/values/a~1b~0c']);
    });

    it('refuses NaN and Infinity, which an embedder can pass without JSON, as numbers that cannot be written (invalid_value)', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { qty: Number.NaN, id: Number.POSITIVE_INFINITY } }));
      expect(errorOf(result).code).to.equal('invalid_value');
      expect((errorOf(result).errors ?? []).map((i) => i.path)).to.have.members(['/values/qty', '/values/id']);
    });

    it('refuses empty values', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: {} }));
      expect(errorOf(result).errors).to.deep.equal([{ path: '/values', message: 'must have at least 1 member(s)' }]);
      expect(w.writer.received).to.have.length(0);
    });

    it('refuses values that are not an object', async function () {
      expect(await issuePathsOf({ entity: ORDERS, values: [1, 2] })).to.deep.equal(['/values']);
      expect(await issuePathsOf({ entity: ORDERS, values: 'id=1' })).to.deep.equal(['/values']);
    });

    const badColumns: readonly [string, string, RegExp][] = [
      ['a dot', 'a.b', /must not contain a dot/],
      ['129 characters', 'c'.repeat(129), /at most 128 characters/],
      ['a control character', 'qty\t', /control characters/],
      ['nothing', '', /must not be empty/],
    ];
    for (const [what, column, message] of badColumns) {
      it(`refuses a column name of ${what} at /values/<column>`, async function () {
        const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { [column]: 1 } }));
        const error = errorOf(result);
        expect(error.code).to.equal('validation_failed');
        expect(error.errors).to.have.length(1);
        expect(error.errors?.[0]?.path).to.equal(`/values/${column}`);
        expect(error.errors?.[0]?.message).to.match(message);
        expect(w.writer.received).to.have.length(0);
      });
    }

    it('counts a column name in UTF-16 code units, as it does an entity part: 64 emoji pass, 65 are refused', async function () {
      const ok64 = '😀'.repeat(64);
      w.writer.defineTable('dbo.emoji', [ok64]);
      expect(valueOf((await w.insertRecord.execute(aRecordWrite({ entity: 'dbo.emoji', values: { [ok64]: 1 } }))).result)).to.deep.equal({
        rows_affected: 1,
      });
      const long = '😀'.repeat(65);
      const entity = await w.insertRecord.execute(aRecordWrite({ entity: `dbo.${long}`, values: { id: 1 } }));
      expect(errorOf(entity.result).errors).to.deep.equal([{ path: '/entity', message: 'table part must be at most 128 characters' }]);
      const column = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { [long]: 1 } }));
      expect(errorOf(column.result).errors).to.deep.equal([{ path: `/values/${long}`, message: 'column name must be at most 128 characters' }]);
      expect(w.writer.received).to.have.length(1);
    });

    it('accepts a column name of 128 characters, with spaces and ]', async function () {
      const long = 'c'.repeat(128);
      w.writer.defineTable('dbo.wide', [long, 'odd ]name']);
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: 'dbo.wide', values: { [long]: 1, 'odd ]name': 'x' } }));
      expect(valueOf(result)).to.deep.equal({ rows_affected: 1 });
      expect(w.writer.received[0]?.values).to.deep.equal({ [long]: 1, 'odd ]name': 'x' });
    });
  });

  describe('body', function () {
    it('refuses an unknown member', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 }, key_column: 'id' }));
      expect(errorOf(result).errors).to.deep.equal([{ path: '/key_column', message: 'is not a member of this request body' }]);
      expect(w.writer.received).to.have.length(0);
    });

    it('names each missing member', async function () {
      expect(await issuePathsOf({})).to.have.members(['/entity', '/values']);
    });

    for (const body of [null, [], 'dbo.orders', 42]) {
      it(`refuses a body that is not an object: ${JSON.stringify(body)}`, async function () {
        const { result } = await w.insertRecord.execute(aRecordWrite(body));
        const error = errorOf(result);
        expect(error.errors).to.deep.equal([{ path: '', message: 'must be a JSON object' }]);
        expect(error.detail).to.equal('request body: must be a JSON object');
      });
    }
  });

  describe('connection', function () {
    it('refuses a connection type other than sqlserver with writes_not_supported, never calling the writer', async function () {
      const postgres = aConnection({ connectionId: '6c9b1d7e-0f3a-4b52-8e61-2a4d5c7e9f10', type: 'postgresql' });
      w.connections.add(postgres);
      const { result } = await w.insertRecord.execute(
        aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { connectionId: postgres.connectionId }),
      );
      const error = errorOf(result);
      expect(error.code).to.equal('writes_not_supported');
      expect(error.detail).to.contain('postgresql');
      expect(w.writer.received).to.have.length(0);
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal([]);
    });

    it("answers another account's connection exactly like a missing one", async function () {
      const foreignId = 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d';
      const missing = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { connectionId: foreignId }));
      w.connections.add(aConnection({ connectionId: foreignId, accountId: ACCOUNT_B }));
      const foreign = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { connectionId: foreignId }));
      expect(errorOf(foreign.result).code).to.equal('not_found');
      expect(errorOf(foreign.result)).to.deep.equal(errorOf(missing.result));
      expect(w.writer.received).to.have.length(0);
    });

    it("answers not_found, not writes_not_supported, for another account's postgresql connection", async function () {
      const foreign = aConnection({ connectionId: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e', accountId: ACCOUNT_B, type: 'postgresql' });
      w.connections.add(foreign);
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { connectionId: foreign.connectionId }));
      expect(errorOf(result).code).to.equal('not_found');
    });

    it('answers a caller of another account not_found for our connection', async function () {
      const { result } = await w.insertRecord.execute(
        aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { principal: aPrincipal({ accountId: ACCOUNT_B, credentialId: 'key_b' }) }),
      );
      expect(errorOf(result).code).to.equal('not_found');
      expect(w.writer.received).to.have.length(0);
    });

    for (const connectionId of ['not-a-uuid', '', '3f1c2a9e5b7d4e219c3a0d8e6f4b2a11', `${CONNECTION.connectionId}x`, '<script>']) {
      it(`answers not_found for the malformed connection id ${JSON.stringify(connectionId)}, without echoing it`, async function () {
        const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }, { connectionId }));
        const error = errorOf(result);
        expect(error).to.deep.equal({ code: 'not_found', detail: 'The connection was not found.' });
        expect(w.writer.received).to.have.length(0);
      });
    }
  });

  describe('writer errors', function () {
    it('passes unknown_entity through', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: 'dbo.missing', values: { id: 1 } }));
      const error = errorOf(result);
      expect(error.code).to.equal('unknown_entity');
      expect(error.detail).to.contain('dbo.missing');
    });

    it('passes unknown_column through and writes nothing', async function () {
      const { result } = await w.insertRecord.execute(aRecordWrite({ entity: ORDERS, values: { id: 1, colour: 'red' } }));
      expect(errorOf(result).code).to.equal('unknown_column');
      expect(w.writer.rowsOf(ORDERS)).to.deep.equal([]);
    });

    it('passes any other write error through unchanged', async function () {
      const writer = new FixedRecordWriter({ code: 'constraint_violation', detail: 'Constraint PK_orders was violated.' });
      const insert = metered(w.coreWith({ recordWriter: writer }).insertRecord, w.rateLimits);
      const { result } = await insert.execute(aRecordWrite({ entity: ORDERS, values: { id: 1 } }));
      expect(errorOf(result)).to.deep.equal({ code: 'constraint_violation', detail: 'Constraint PK_orders was violated.' });
      expect(writer.received).to.have.length(1);
    });
  });
});
