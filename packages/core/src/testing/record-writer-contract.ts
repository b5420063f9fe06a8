import assert from 'node:assert/strict';
import type { Connection } from '../domain/connection.js';
import type { EntityName } from '../domain/entity-name.js';
import type { Row } from '../memory/in-memory-record-writer.js';
import type { RecordWriter } from '../ports/record-writer.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/**
 * What the {@link recordWriterContract} needs from an implementation under test.
 * Tables have the columns `id` (integer, not unique), `name` (text) and `qty` (integer).
 */
export interface RecordWriterHarness {
  readonly writer: RecordWriter;
  /** A `sqlserver` connection the writer can reach. */
  readonly connection: Connection;
  /** Creates the table `entity` with columns id, name, qty and these rows. */
  givenTable(entity: EntityName, rows: readonly Row[]): Promise<void>;
  /** The rows of `entity`, in insertion order. */
  rowsOf(entity: EntityName): Promise<Row[]>;
  /** Drops what it created and closes the writer. */
  close(): Promise<void>;
}

/**
 * The behaviour every {@link RecordWriter} shares (ports/record-writer.ts): the in-memory
 * writer, the SQL Server writer against the scripted TDS server, and against a real
 * server. Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a fresh harness for each test (closed after it).
 * @param runner - the runner to register with: `{ describe, it, beforeEach, afterEach }`
 *   from `node:test`, mocha or another BDD runner ({@link TestRunner}); default mocha's
 *   globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function recordWriterContract(name: string, makeHarness: () => Promise<RecordWriterHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'recordWriterContract');
  describe(`RecordWriter contract: ${name}`, function () {
    let h: RecordWriterHarness;
    const orders: EntityName = { schema: 'dbo', table: 'contract_orders' };

    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    it('inserts one row and answers rowsAffected 1', async function () {
      await h.givenTable(orders, []);
      const result = await h.writer.insert({ connection: h.connection, entity: orders, values: { id: 1, name: 'Zoë ✓', qty: 3 }, route: 'default' });
      assert.deepEqual(result, { ok: true, value: { rowsAffected: 1 } });
      assert.deepEqual(await h.rowsOf(orders), [{ id: 1, name: 'Zoë ✓', qty: 3 }]);
    });

    it('quotes identifiers holding ] and spaces instead of refusing or altering them', async function () {
      const odd: EntityName = { schema: 'dbo', table: 'we]ird table' };
      await h.givenTable(odd, []);
      const result = await h.writer.insert({ connection: h.connection, entity: odd, values: { id: 7, name: null, qty: 0 }, route: 'default' });
      assert.deepEqual(result, { ok: true, value: { rowsAffected: 1 } });
      assert.deepEqual(await h.rowsOf(odd), [{ id: 7, name: null, qty: 0 }]);
    });

    it('answers unknown_entity for a table that does not exist', async function () {
      const result = await h.writer.insert({
        connection: h.connection,
        entity: { schema: 'dbo', table: 'contract_missing' },
        values: { id: 1 },
        route: 'default',
      });
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.error.code, 'unknown_entity');
    });

    it('answers unknown_column for a column that does not exist', async function () {
      await h.givenTable(orders, []);
      const result = await h.writer.insert({ connection: h.connection, entity: orders, values: { id: 1, colour: 'red' }, route: 'default' });
      assert.equal(!result.ok && result.error.code, 'unknown_column');
      assert.deepEqual(await h.rowsOf(orders), []);
    });

    it('updates the one row the key selects', async function () {
      await h.givenTable(orders, [{ id: 1, name: 'a', qty: 1 }, { id: 2, name: 'b', qty: 2 }]);
      const result = await h.writer.update({ connection: h.connection, entity: orders, key: { column: 'id', value: 2 }, values: { qty: 20 }, route: 'default' });
      assert.deepEqual(result, { ok: true, value: { rowsAffected: 1 } });
      assert.deepEqual(await h.rowsOf(orders), [{ id: 1, name: 'a', qty: 1 }, { id: 2, name: 'b', qty: 20 }]);
    });

    it('answers rowsAffected 0 when the key selects no row', async function () {
      await h.givenTable(orders, [{ id: 1, name: 'a', qty: 1 }]);
      const result = await h.writer.update({ connection: h.connection, entity: orders, key: { column: 'id', value: 99 }, values: { qty: 5 }, route: 'default' });
      assert.deepEqual(result, { ok: true, value: { rowsAffected: 0 } });
      assert.deepEqual(await h.rowsOf(orders), [{ id: 1, name: 'a', qty: 1 }]);
    });

    it('answers ambiguous_key and changes nothing when the key selects two rows', async function () {
      const before = [{ id: 5, name: 'x', qty: 1 }, { id: 5, name: 'y', qty: 2 }];
      await h.givenTable(orders, before);
      const result = await h.writer.update({ connection: h.connection, entity: orders, key: { column: 'id', value: 5 }, values: { qty: 0 }, route: 'default' });
      assert.equal(!result.ok && result.error.code, 'ambiguous_key');
      assert.deepEqual(await h.rowsOf(orders), before);
    });
  });
}
