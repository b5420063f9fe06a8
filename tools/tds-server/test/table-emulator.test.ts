import { expect } from 'chai';
import { TableEmulator, type TdsParameter, type TdsRequest, type TdsResult } from '@svc/tds-server';

function rpc(sql: string, parameters: Record<string, string | number | boolean | null> = {}): TdsRequest {
  const list: TdsParameter[] = Object.entries(parameters).map(([name, value]) => ({ name, type: 'any', value }));
  return { connectionId: 1, clientAddress: '127.0.0.1', kind: 'rpc', procedure: 10, sql, parameters: list };
}

function errorNumbers(results: readonly TdsResult[] | undefined): number[] {
  return (results ?? []).flatMap((r) => (r.kind === 'error' ? [r.number] : []));
}

describe('TableEmulator (the scripted server’s default handler)', function () {
  let db: TableEmulator;

  beforeEach(function () {
    db = new TableEmulator('shop');
    db.defineTable('dbo.items', [
      { name: 'id', type: 'int', primaryKey: true },
      { name: 'name', type: 'nvarchar', nullable: false, maxLength: 5 },
      { name: 'qty', type: 'int' },
      { name: 'paid', type: 'bit' },
    ]);
  });

  it('tracks @@ROWCOUNT as SQL Server does: set by each statement, 1 after an assignment', function () {
    db.defineTable('dbo.items', ['id'], [{ id: 1 }, { id: 1 }, { id: 2 }]);
    const { results } = db.handle(rpc('DECLARE @n int; UPDATE dbo.items SET id = 3 WHERE id = 1; SET @n = @@ROWCOUNT; SELECT @n AS a, @@ROWCOUNT AS b'));
    expect(results?.at(-1)).to.deep.equal({ kind: 'rows', columns: [{ name: 'a', type: 'int' }, { name: 'b', type: 'int' }], rows: [[2, 1]] });
    expect(results?.[0]).to.deep.equal({ kind: 'done', rowCount: 2 });
  });

  it('converts bound values to the column types and raises 245, 8115, 2628, 515 and 2627 with their messages', function () {
    const cases: [Record<string, string | number | boolean | null>, number, string][] = [
      [{ '@id': 'abc', '@name': 'a' }, 245, "Conversion failed when converting the nvarchar value 'abc' to data type int."],
      [{ '@id': 2 ** 31, '@name': 'a' }, 8115, 'Arithmetic overflow error converting expression to data type int.'],
      [{ '@id': 1, '@name': 'toolong' }, 2628, "String or binary data would be truncated in table 'shop.dbo.items', column 'name'. Truncated value: 'toolo'."],
      [{ '@id': 1, '@name': null }, 515, "Cannot insert the value NULL into column 'name', table 'shop.dbo.items'; column does not allow nulls. INSERT fails."],
    ];
    for (const [params, number, message] of cases) {
      const { results } = db.handle(rpc('INSERT INTO [dbo].[items] ([id], [name]) VALUES (@id, @name)', params));
      expect(results).to.deep.equal([{ kind: 'error', number, class: 16, message }]);
    }
    db.handle(rpc('INSERT INTO items (id, name, paid) VALUES (@id, @name, @paid)', { '@id': '7', '@name': 'x', '@paid': 1 }));
    const duplicate = db.handle(rpc('INSERT INTO items (id, name) VALUES (7, N\'y\')'));
    expect(duplicate.results).to.deep.equal([
      { kind: 'error', number: 2627, class: 14, message: "Violation of PRIMARY KEY constraint 'PK_items'. Cannot insert duplicate key in object 'dbo.items'. The duplicate key value is (7)." },
    ]);
    expect(db.rowsOf('dbo.items')).to.deep.equal([{ id: 7, name: 'x', qty: null, paid: true }]);
  });

  it('rolls back a transaction on error, and reports 266 for a batch that leaves one open', function () {
    db.handle(rpc("INSERT INTO items (id, name) VALUES (1, N'a')"));
    const failed = db.handle(rpc("BEGIN TRANSACTION; UPDATE items SET qty = 5 WHERE id = 1; INSERT INTO items (id, name) VALUES (1, N'b'); COMMIT;"));
    expect(errorNumbers(failed.results)).to.deep.equal([2627]);
    const open = db.handle(rpc('BEGIN TRAN; UPDATE items SET qty = 6 WHERE id = 1'));
    expect(errorNumbers(open.results)).to.deep.equal([266]);
    expect(db.rowsOf('dbo.items')).to.deep.equal([{ id: 1, name: 'a', qty: null, paid: null }]);
  });

  it('answers 102 for SQL outside its subset, and 208 / 207 for unknown names', function () {
    expect(errorNumbers(db.handle(rpc('DELETE FROM items')).results)).to.deep.equal([102]);
    expect(db.handle(rpc('UPDATE [sales].[missing] SET a = 1')).results).to.deep.equal([{ kind: 'error', number: 208, class: 16, message: "Invalid object name 'sales.missing'." }]);
    expect(db.handle(rpc("UPDATE items SET [it's] = 1")).results).to.deep.equal([{ kind: 'error', number: 207, class: 16, message: "Invalid column name 'it's'." }]);
  });

  it('compares names and strings case-insensitively, as the default collation does', function () {
    db.handle(rpc("INSERT INTO DBO.ITEMS (ID, NAME) VALUES (1, N'Abc')"));
    db.defineTable('dbo.tags', ['tag', 'n'], [{ tag: 'Red', n: 1 }]);
    const { results } = db.handle(rpc("UPDATE dbo.tags SET n = 2 WHERE tag = N'RED'"));
    expect(results).to.deep.equal([{ kind: 'done', rowCount: 1 }]);
    expect(db.rowsOf('DBO.Items')?.[0]?.name).to.equal('Abc');
  });
});
