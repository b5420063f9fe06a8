import type { SqlMessage, TdsCell } from './tds-protocol.js';
import type { TdsRequest, TdsResponse, TdsResult } from './tds-exchange.js';

/** A value held by an emulated table. */
export type EmulatedValue = string | number | boolean | null;

/** A row of an emulated table: column name → value. */
export type EmulatedRow = Record<string, EmulatedValue>;

/** Column types the emulator converts to, as SQL Server would; `any` keeps values as sent. */
export type EmulatedColumnType = 'int' | 'bigint' | 'float' | 'bit' | 'nvarchar' | 'any';

/** A column of an emulated table. */
export interface EmulatedColumn {
  readonly name: string;
  /** Default `any`. */
  readonly type?: EmulatedColumnType;
  /** `false`: NULL refused with error 515. Default `true`. */
  readonly nullable?: boolean;
  /** Part of the primary key `PK_<table>`: duplicates refused with error 2627. */
  readonly primaryKey?: boolean;
  /** nvarchar only: longer strings refused with error 2628. */
  readonly maxLength?: number;
}

/** `{schema, table}`, or `schema.table`, or `table` (schema `dbo`). */
export type EmulatedEntity = { readonly schema: string; readonly table: string } | string;

interface Table {
  readonly schema: string;
  readonly name: string;
  readonly columns: readonly Required<Omit<EmulatedColumn, 'maxLength'>>[];
  readonly maxLengths: ReadonlyMap<string, number>;
  rows: EmulatedRow[];
}

/** SQL Server's messages for the errors the emulator raises (sys.messages). */
export const sqlServerErrors = {
  /** 208: a table or view that does not exist (as written in the statement). */
  invalidObjectName: (name: string): SqlMessage => ({ number: 208, class: 16, message: `Invalid object name '${name}'.` }),
  /** 207: a column that does not exist. */
  invalidColumnName: (name: string): SqlMessage => ({ number: 207, class: 16, message: `Invalid column name '${name}'.` }),
  /** 2627: duplicate key of a PRIMARY KEY or UNIQUE constraint. */
  duplicateKey: (constraint: string, object: string, key: string, kind = 'PRIMARY KEY'): SqlMessage => ({
    number: 2627,
    class: 14,
    message: `Violation of ${kind} constraint '${constraint}'. Cannot insert duplicate key in object '${object}'. The duplicate key value is (${key}).`,
  }),
  /** 2601: duplicate key of a unique index. */
  duplicateIndexKey: (object: string, index: string, key: string): SqlMessage => ({
    number: 2601,
    class: 14,
    message: `Cannot insert duplicate key row in object '${object}' with unique index '${index}'. The duplicate key value is (${key}).`,
  }),
  /** 547: FOREIGN KEY or CHECK constraint conflict. */
  constraintConflict: (statement: 'INSERT' | 'UPDATE' | 'DELETE', kind: 'FOREIGN KEY' | 'CHECK', constraint: string, database: string, table: string, column: string): SqlMessage => ({
    number: 547,
    class: 16,
    message: `The ${statement} statement conflicted with the ${kind} constraint "${constraint}". The conflict occurred in database "${database}", table "${table}", column '${column}'.`,
  }),
  /** 515: NULL into a NOT NULL column. */
  nullNotAllowed: (column: string, table: string, statement: 'INSERT' | 'UPDATE'): SqlMessage => ({
    number: 515,
    class: 16,
    message: `Cannot insert the value NULL into column '${column}', table '${table}'; column does not allow nulls. ${statement} fails.`,
  }),
  /** 245: a string that is not a number of the column's type. */
  conversionFailed: (value: string, type: string): SqlMessage => ({
    number: 245,
    class: 16,
    message: `Conversion failed when converting the nvarchar value '${value}' to data type ${type}.`,
  }),
  /** 8114: conversion error. */
  conversionError: (from: string, to: string): SqlMessage => ({ number: 8114, class: 16, message: `Error converting data type ${from} to ${to}.` }),
  /** 8115: a number out of the column type's range. */
  arithmeticOverflow: (type: string): SqlMessage => ({ number: 8115, class: 16, message: `Arithmetic overflow error converting expression to data type ${type}.` }),
  /** 2628: a string longer than its column. */
  truncated: (table: string, column: string, value: string): SqlMessage => ({
    number: 2628,
    class: 16,
    message: `String or binary data would be truncated in table '${table}', column '${column}'. Truncated value: '${value}'.`,
  }),
  /** 8152: the same, as older servers word it. */
  truncatedLegacy: (): SqlMessage => ({ number: 8152, class: 16, message: 'String or binary data would be truncated.' }),
  /** 1205: chosen as deadlock victim. */
  deadlockVictim: (): SqlMessage => ({
    number: 1205,
    class: 13,
    state: 51,
    message: 'Transaction (Process ID 61) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction.',
  }),
  /** 229: permission denied. */
  permissionDenied: (action: string, object: string, database: string, schema: string): SqlMessage => ({
    number: 229,
    class: 14,
    state: 5,
    message: `The ${action} permission was denied on the object '${object}', database '${database}', schema '${schema}'.`,
  }),
  /** 102: syntax error. */
  syntax: (near: string): SqlMessage => ({ number: 102, class: 15, message: `Incorrect syntax near '${near}'.` }),
  /** 266: a batch ended with a transaction it opened still open. */
  transactionCount: (previous: number, current: number): SqlMessage => ({
    number: 266,
    class: 16,
    state: 2,
    message: `Transaction count after EXECUTE indicates a mismatching number of BEGIN and COMMIT statements. Previous count = ${previous}, current count = ${current}.`,
  }),
} as const;

// ------------------------------------------------------------------ tokenizer

type Token =
  | { readonly k: 'name'; readonly v: string; readonly word: boolean } // [quoted] or plain word
  | { readonly k: 'var'; readonly v: string } // @x or @@X
  | { readonly k: 'num'; readonly v: number }
  | { readonly k: 'str'; readonly v: string }
  | { readonly k: 'punct'; readonly v: string };

class SqlFailure extends Error {
  constructor(readonly sqlMessage: SqlMessage) {
    super(sqlMessage.message);
  }
}


/**
 * Reads a `]`- or `'`-delimited token from `start` (just past the opening delimiter), a
 * doubled delimiter standing for itself, as T-SQL quotes names and strings.
 * @returns the token's value and the index just past its closing delimiter.
 * @throws SqlFailure 105 when the token is not closed, as SQL Server answers.
 */
function readDelimited(sql: string, start: number, close: ']' | "'"): [string, number] {
  let v = '';
  let i = start;
  for (;;) {
    if (i >= sql.length) throw new SqlFailure({ number: 105, class: 15, message: `Unclosed quotation mark after the character string '${v}'.` });
    if (sql[i] === close) {
      if (sql[i + 1] !== close) return [v, i + 1];
      v += close;
      i += 2;
    } else {
      v += sql[i];
      i += 1;
    }
  }
}

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] ?? '';
    if (/\s/u.test(ch)) {
      i += 1;
    } else if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '[') {
      let v: string;
      [v, i] = readDelimited(sql, i + 1, ']');
      tokens.push({ k: 'name', v, word: false });
    } else if (ch === "'" || ((ch === 'N' || ch === 'n') && sql[i + 1] === "'")) {
      let v: string;
      [v, i] = readDelimited(sql, i + (ch === "'" ? 1 : 2), "'");
      tokens.push({ k: 'str', v });
    } else if (ch === '@') {
      const m = /^@@?[A-Za-z0-9_#$@]+/u.exec(sql.slice(i));
      if (m === null) throw new SqlFailure(sqlServerErrors.syntax('@'));
      tokens.push({ k: 'var', v: m[0].startsWith('@@') ? m[0].toUpperCase() : m[0].toLowerCase() });
      i += m[0].length;
    } else if (/[0-9]/u.test(ch)) {
      const m = /^[0-9]+(\.[0-9]+)?/u.exec(sql.slice(i)) ?? [''];
      tokens.push({ k: 'num', v: Number(m[0]) });
      i += m[0].length;
    } else if (/[A-Za-z_#]/u.test(ch)) {
      const m = /^[A-Za-z_#][A-Za-z0-9_#$@]*/u.exec(sql.slice(i)) ?? [''];
      tokens.push({ k: 'name', v: m[0], word: true });
      i += m[0].length;
    } else {
      const two = sql.slice(i, i + 2);
      if (['>=', '<=', '<>', '!='].includes(two)) {
        tokens.push({ k: 'punct', v: two });
        i += 2;
      } else {
        tokens.push({ k: 'punct', v: ch });
        i += 1;
      }
    }
  }
  return tokens;
}

// ------------------------------------------------------------------ parser

type Expr =
  | { readonly e: 'var'; readonly name: string }
  | { readonly e: 'rowcount' }
  | { readonly e: 'lit'; readonly value: EmulatedValue }
  | { readonly e: 'neg'; readonly of: Expr }
  | { readonly e: 'decimal'; readonly of: Expr };

interface ObjectName {
  readonly schema: string;
  readonly table: string;
  /** As written, for error messages (`dbo.t` or `t`). */
  readonly written: string;
}

type Statement =
  | { readonly s: 'set-option'; readonly option: string; readonly on: boolean }
  | { readonly s: 'set-var'; readonly name: string; readonly value: Expr }
  | { readonly s: 'declare'; readonly names: readonly string[] }
  | { readonly s: 'begin-tran' }
  | { readonly s: 'commit' }
  | { readonly s: 'rollback' }
  | { readonly s: 'block'; readonly body: readonly Statement[] }
  | { readonly s: 'if'; readonly left: Expr; readonly op: string; readonly right: Expr; readonly then: Statement; readonly else?: Statement }
  | { readonly s: 'insert'; readonly target: ObjectName; readonly columns: readonly string[]; readonly values: readonly Expr[] }
  | {
      readonly s: 'update';
      readonly target: ObjectName;
      readonly top: number | undefined;
      readonly assignments: readonly { readonly column: string; readonly value: Expr }[];
      readonly where: { readonly column: string; readonly value: Expr } | undefined;
    }
  | { readonly s: 'select'; readonly items: readonly { readonly value: Expr; readonly alias: string }[] };

class Parser {
  private at = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  script(): Statement[] {
    const out: Statement[] = [];
    while (this.peek() !== undefined) {
      if (this.punct(';')) continue;
      out.push(this.statement());
    }
    return out;
  }

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }

  private fail(): never {
    const t = this.peek();
    const near = t === undefined ? 'end of batch' : t.k === 'num' ? String(t.v) : t.v;
    throw new SqlFailure(sqlServerErrors.syntax(near));
  }

  private keyword(...words: string[]): boolean {
    const t = this.peek();
    if (t?.k === 'name' && t.word && words.includes(t.v.toUpperCase())) {
      this.at += 1;
      return true;
    }
    return false;
  }

  private expectKeyword(...words: string[]): void {
    if (!this.keyword(...words)) this.fail();
  }

  private punct(p: string): boolean {
    const t = this.peek();
    if (t?.k === 'punct' && t.v === p) {
      this.at += 1;
      return true;
    }
    return false;
  }

  private expectPunct(p: string): void {
    if (!this.punct(p)) this.fail();
  }

  private name(): string {
    const t = this.peek();
    if (t?.k !== 'name') this.fail();
    this.at += 1;
    return t.v;
  }

  private variable(): string {
    const t = this.peek();
    if (t?.k !== 'var') this.fail();
    this.at += 1;
    return t.v;
  }

  private objectName(): ObjectName {
    const first = this.name();
    if (!this.punct('.')) return { schema: 'dbo', table: first, written: first };
    const second = this.name();
    return { schema: first, table: second, written: `${first}.${second}` };
  }

  private expr(): Expr {
    const t = this.peek();
    if (t === undefined) this.fail();
    if (t.k === 'punct' && t.v === '-') {
      this.at += 1;
      return { e: 'neg', of: this.expr() };
    }
    this.at += 1;
    switch (t.k) {
      case 'var':
        return t.v === '@@ROWCOUNT' ? { e: 'rowcount' } : { e: 'var', name: t.v };
      case 'num':
        return { e: 'lit', value: t.v };
      case 'str':
        return { e: 'lit', value: t.v };
      case 'name':
        if (t.word && t.v.toUpperCase() === 'NULL') return { e: 'lit', value: null };
        if (t.word && t.v.toUpperCase() === 'CAST') return this.castToDecimal();
        break;
      case 'punct':
        break;
    }
    this.at -= 1;
    return this.fail();
  }

  // `CAST(expr AS decimal(p, s))`, the form the writer binds exact decimals with.
  private castToDecimal(): Expr {
    this.expectPunct('(');
    const of = this.expr();
    this.expectKeyword('AS');
    this.expectKeyword('DECIMAL', 'NUMERIC');
    this.expectPunct('(');
    this.expr();
    this.expectPunct(',');
    this.expr();
    this.expectPunct(')');
    this.expectPunct(')');
    return { e: 'decimal', of };
  }

  private statement(): Statement {
    if (this.keyword('SET')) {
      const t = this.peek();
      if (t?.k === 'var') {
        const name = this.variable();
        this.expectPunct('=');
        return { s: 'set-var', name, value: this.expr() };
      }
      const option = this.name().toUpperCase();
      if (this.keyword('ON')) return { s: 'set-option', option, on: true };
      if (this.keyword('OFF')) return { s: 'set-option', option, on: false };
      return this.fail();
    }
    if (this.keyword('DECLARE')) {
      const names: string[] = [];
      do {
        names.push(this.variable());
        this.keyword('AS');
        this.name();
        if (this.punct('(')) {
          while (!this.punct(')')) {
            if (this.peek() === undefined) this.fail();
            this.at += 1;
          }
        }
      } while (this.punct(','));
      return { s: 'declare', names };
    }
    if (this.keyword('BEGIN')) {
      if (this.keyword('TRAN', 'TRANSACTION')) return { s: 'begin-tran' };
      const body: Statement[] = [];
      while (!this.keyword('END')) {
        if (this.peek() === undefined) this.fail();
        if (this.punct(';')) continue;
        body.push(this.statement());
      }
      return { s: 'block', body };
    }
    if (this.keyword('COMMIT')) {
      this.keyword('TRAN', 'TRANSACTION');
      return { s: 'commit' };
    }
    if (this.keyword('ROLLBACK')) {
      this.keyword('TRAN', 'TRANSACTION');
      return { s: 'rollback' };
    }
    if (this.keyword('IF')) {
      const left = this.expr();
      const op = this.peek();
      if (op?.k !== 'punct' || !['=', '<>', '!=', '>', '<', '>=', '<='].includes(op.v)) this.fail();
      this.at += 1;
      const right = this.expr();
      const then = this.statement();
      this.punct(';');
      if (this.keyword('ELSE')) return { s: 'if', left, op: op.v, right, then, else: this.statement() };
      return { s: 'if', left, op: op.v, right, then };
    }
    if (this.keyword('INSERT')) {
      this.keyword('INTO');
      const target = this.objectName();
      this.expectPunct('(');
      const columns: string[] = [];
      do columns.push(this.name());
      while (this.punct(','));
      this.expectPunct(')');
      this.expectKeyword('VALUES');
      this.expectPunct('(');
      const values: Expr[] = [];
      do values.push(this.expr());
      while (this.punct(','));
      this.expectPunct(')');
      return { s: 'insert', target, columns, values };
    }
    if (this.keyword('UPDATE')) {
      let top: number | undefined;
      if (this.keyword('TOP')) {
        this.expectPunct('(');
        const t = this.peek();
        if (t?.k !== 'num') this.fail();
        this.at += 1;
        top = t.v;
        this.expectPunct(')');
      }
      const target = this.objectName();
      this.expectKeyword('SET');
      const assignments: { column: string; value: Expr }[] = [];
      do {
        const column = this.name();
        this.expectPunct('=');
        assignments.push({ column, value: this.expr() });
      } while (this.punct(','));
      let where: { column: string; value: Expr } | undefined;
      if (this.keyword('WHERE')) {
        const column = this.name();
        this.expectPunct('=');
        where = { column, value: this.expr() };
      }
      return { s: 'update', target, top, assignments, where };
    }
    if (this.keyword('SELECT')) {
      const items: { value: Expr; alias: string }[] = [];
      do {
        const value = this.expr();
        let alias = '';
        if (this.keyword('AS')) alias = this.name();
        items.push({ value, alias });
      } while (this.punct(','));
      return { s: 'select', items };
    }
    return this.fail();
  }
}

// ------------------------------------------------------------------ execution

interface Run {
  readonly params: ReadonlyMap<string, EmulatedValue | bigint>;
  readonly vars: Map<string, EmulatedValue>;
  readonly results: TdsResult[];
  nocount: boolean;
  xactAbort: boolean;
  rowcount: number;
  tranCount: number;
  snapshot: Map<string, EmulatedRow[]> | undefined;
}

function key(schema: string, table: string): string {
  return `${schema.toLowerCase()}.${table.toLowerCase()}`;
}

function entityKey(entity: EmulatedEntity): { schema: string; table: string } {
  if (typeof entity !== 'string') return entity;
  const dot = entity.indexOf('.');
  return dot === -1 ? { schema: 'dbo', table: entity } : { schema: entity.slice(0, dot), table: entity.slice(dot + 1) };
}

function same(a: EmulatedValue, b: EmulatedValue): boolean {
  // The default collation is case-insensitive; NULL equals nothing.
  if (a === null || b === null) return false;
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

function display(value: EmulatedValue): string {
  return value === null ? 'NULL' : typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
}

/**
 * A stateful stand-in for a few SQL Server tables, good enough for the RecordWriter
 * contract suite and end-to-end tests: it runs the small T-SQL subset the SQL Server
 * writer sends — `SET NOCOUNT|XACT_ABORT ON|OFF`, `DECLARE`, `SET @v = ...`,
 * `BEGIN TRANSACTION`, `COMMIT`, `ROLLBACK`, `IF ... BEGIN ... END ELSE ...`,
 * `INSERT INTO t (cols) VALUES (...)`, `UPDATE [TOP (n)] t SET c = ... WHERE c = ...`,
 * `SELECT expr [AS name]` — with `@@ROWCOUNT` semantics of SQL Server (set by each
 * statement; a plain assignment sets it to 1).
 *
 * It raises SQL Server's own errors: 208 unknown table, 207 unknown column, 245/8114/8115
 * conversions, 2628 too long, 515 NULL in a NOT NULL column, 2627 duplicate primary
 * key, 102 syntax, 266 a transaction left open. Every error ends the batch and rolls
 * back its open transaction (as with `SET XACT_ABORT ON`). Names compare
 * case-insensitively, as under SQL Server's default collation.
 */
export class TableEmulator {
  private readonly tables = new Map<string, Table>();

  /**
   * @param database - database name used in error messages that name one.
   */
  constructor(readonly database = 'emulated') {}

  /**
   * Creates (or replaces) a table.
   *
   * @param columns - names (type `any`, nullable) or full column definitions.
   * @param rows - initial rows; missing columns are NULL.
   */
  defineTable(entity: EmulatedEntity, columns: readonly (string | EmulatedColumn)[], rows: readonly EmulatedRow[] = []): void {
    const { schema, table } = entityKey(entity);
    const defs = columns.map((c) => (typeof c === 'string' ? { name: c } : c));
    const maxLengths = new Map(defs.flatMap((c) => (c.maxLength === undefined ? [] : [[c.name.toLowerCase(), c.maxLength] as const])));
    const full = defs.map((c) => ({ name: c.name, type: c.type ?? 'any', nullable: c.nullable ?? true, primaryKey: c.primaryKey ?? false }));
    const t: Table = { schema, name: table, columns: full, maxLengths, rows: [] };
    t.rows = rows.map((r) => Object.fromEntries(full.map((c) => [c.name, r[c.name] ?? null])));
    this.tables.set(key(schema, table), t);
  }

  /** Drops a table; no error when it does not exist. */
  dropTable(entity: EmulatedEntity): void {
    const { schema, table } = entityKey(entity);
    this.tables.delete(key(schema, table));
  }

  /** Copies of a table's rows in insertion order, or `undefined` for an unknown table. */
  rowsOf(entity: EmulatedEntity): EmulatedRow[] | undefined {
    const { schema, table } = entityKey(entity);
    return this.tables.get(key(schema, table))?.rows.map((r) => ({ ...r }));
  }

  /**
   * Runs one request: a SQL batch, or `sp_executesql` with its parameters. Other
   * procedures answer error 2812.
   */
  handle(request: TdsRequest): TdsResponse {
    if (request.kind === 'rpc' && request.sql === '') {
      return { results: [{ kind: 'error', number: 2812, class: 16, message: `Could not find stored procedure '${String(request.procedure)}'.` }] };
    }
    const run: Run = {
      params: new Map(request.parameters.map((p) => [p.name.toLowerCase(), p.value])),
      vars: new Map(),
      results: [],
      nocount: false,
      xactAbort: false,
      rowcount: 0,
      tranCount: 0,
      snapshot: undefined,
    };
    try {
      const script = new Parser(tokenize(request.sql)).script();
      for (const statement of script) this.execute(statement, run);
      if (run.tranCount > 0) {
        this.rollback(run);
        throw new SqlFailure(sqlServerErrors.transactionCount(0, 1));
      }
    } catch (error) {
      if (!(error instanceof SqlFailure)) throw error;
      if (run.tranCount > 0) this.rollback(run);
      run.results.push({ kind: 'error', ...error.sqlMessage });
    }
    return { results: run.results };
  }

  private execute(statement: Statement, run: Run): void {
    switch (statement.s) {
      case 'set-option':
        if (statement.option === 'NOCOUNT') run.nocount = statement.on;
        if (statement.option === 'XACT_ABORT') run.xactAbort = statement.on;
        run.rowcount = 0;
        return;
      case 'declare':
        for (const name of statement.names) run.vars.set(name, null);
        return;
      case 'set-var': {
        if (!run.vars.has(statement.name)) throw new SqlFailure({ number: 137, class: 15, message: `Must declare the scalar variable "${statement.name}".` });
        run.vars.set(statement.name, this.value(statement.value, run));
        run.rowcount = 1;
        return;
      }
      case 'begin-tran':
        if (run.tranCount === 0) run.snapshot = new Map([...this.tables.entries()].map(([k, t]) => [k, t.rows.map((r) => ({ ...r }))]));
        run.tranCount += 1;
        run.rowcount = 0;
        return;
      case 'commit':
        if (run.tranCount === 0) throw new SqlFailure({ number: 3902, class: 16, message: 'The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.' });
        run.tranCount -= 1;
        if (run.tranCount === 0) run.snapshot = undefined;
        run.rowcount = 0;
        return;
      case 'rollback':
        if (run.tranCount === 0) throw new SqlFailure({ number: 3903, class: 16, message: 'The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.' });
        this.rollback(run);
        run.rowcount = 0;
        return;
      case 'block':
        for (const s of statement.body) this.execute(s, run);
        return;
      case 'if': {
        const holds = compare(this.value(statement.left, run), statement.op, this.value(statement.right, run));
        run.rowcount = 0;
        if (holds) this.execute(statement.then, run);
        else if (statement.else !== undefined) this.execute(statement.else, run);
        return;
      }
      case 'insert':
        this.insert(statement, run);
        return;
      case 'update':
        this.update(statement, run);
        return;
      case 'select': {
        const values = statement.items.map((item) => this.value(item.value, run));
        run.results.push({
          kind: 'rows',
          columns: statement.items.map((item, i) => ({ name: item.alias, type: columnType(values[i] ?? null) })),
          rows: [values as TdsCell[]],
        });
        run.rowcount = 1;
        return;
      }
    }
  }

  private rollback(run: Run): void {
    for (const [k, rows] of run.snapshot ?? []) {
      const table = this.tables.get(k);
      if (table !== undefined) table.rows = rows;
    }
    run.snapshot = undefined;
    run.tranCount = 0;
  }

  private value(expr: Expr, run: Run): EmulatedValue {
    switch (expr.e) {
      case 'lit':
        return expr.value;
      case 'rowcount':
        return run.rowcount;
      case 'neg': {
        const v = this.value(expr.of, run);
        return typeof v === 'number' ? -v : v;
      }
      case 'decimal': {
        // The emulator keeps numbers as doubles: the exact digits are in the recorded
        // parameter (TdsServer.requests), which is what tests of exactness read.
        const v = this.value(expr.of, run);
        const text = typeof v === 'string' ? v.trim() : String(v);
        if (v === null) return null;
        if (!/^[+-]?(\d+\.?\d*|\.\d+)$/u.test(text)) throw new SqlFailure(sqlServerErrors.conversionError(typeof v === 'string' ? 'varchar' : 'float', 'numeric'));
        return Number(text);
      }
      case 'var': {
        if (run.vars.has(expr.name)) return run.vars.get(expr.name) ?? null;
        if (run.params.has(expr.name)) {
          const v = run.params.get(expr.name) ?? null;
          return typeof v === 'bigint' ? Number(v) : v;
        }
        throw new SqlFailure({ number: 137, class: 15, message: `Must declare the scalar variable "${expr.name}".` });
      }
    }
  }

  private table(name: ObjectName): Table {
    const table = this.tables.get(key(name.schema, name.table));
    if (table === undefined) throw new SqlFailure(sqlServerErrors.invalidObjectName(name.written));
    return table;
  }

  private column(table: Table, name: string): Table['columns'][number] {
    const column = table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (column === undefined) throw new SqlFailure(sqlServerErrors.invalidColumnName(name));
    return column;
  }

  private insert(statement: Extract<Statement, { s: 'insert' }>, run: Run): void {
    const table = this.table(statement.target);
    const columns = statement.columns.map((c) => this.column(table, c));
    if (columns.length !== statement.values.length) {
      throw new SqlFailure({ number: 109, class: 15, message: 'There are more columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.' });
    }
    const row: EmulatedRow = Object.fromEntries(table.columns.map((c) => [c.name, null]));
    columns.forEach((column, i) => {
      row[column.name] = this.convert(table, column, this.value(statement.values[i] ?? { e: 'lit', value: null }, run));
    });
    this.check(table, [row], [], 'INSERT');
    table.rows.push(row);
    run.rowcount = 1;
    if (!run.nocount) run.results.push({ kind: 'done', rowCount: 1 });
    else run.results.push({ kind: 'done' });
  }

  private update(statement: Extract<Statement, { s: 'update' }>, run: Run): void {
    const table = this.table(statement.target);
    const assignments = statement.assignments.map((a) => ({ column: this.column(table, a.column), value: this.value(a.value, run) }));
    const where = statement.where === undefined ? undefined : { column: this.column(table, statement.where.column), value: this.value(statement.where.value, run) };
    const keyValue = where === undefined ? undefined : this.convert(table, where.column, where.value);
    let matches = table.rows.filter((r) => where === undefined || same(r[where.column.name] ?? null, keyValue ?? null));
    if (statement.top !== undefined) matches = matches.slice(0, statement.top);
    const updated = matches.map((r) => {
      const copy = { ...r };
      for (const a of assignments) copy[a.column.name] = this.convert(table, a.column, a.value);
      return copy;
    });
    this.check(table, updated, matches, 'UPDATE');
    matches.forEach((row, i) => Object.assign(row, updated[i]));
    run.rowcount = matches.length;
    run.results.push(run.nocount ? { kind: 'done' } : { kind: 'done', rowCount: matches.length });
  }

  // NOT NULL and primary key checks of rows about to be written (`replacing` are the
  // rows they replace, which do not count as duplicates).
  private check(table: Table, rows: readonly EmulatedRow[], replacing: readonly EmulatedRow[], statement: 'INSERT' | 'UPDATE'): void {
    for (const row of rows) {
      for (const column of table.columns) {
        if (!column.nullable && row[column.name] === null) {
          throw new SqlFailure(sqlServerErrors.nullNotAllowed(column.name, `${this.database}.${table.schema}.${table.name}`, statement));
        }
      }
    }
    const pk = table.columns.filter((c) => c.primaryKey);
    if (pk.length === 0) return;
    const others = table.rows.filter((r) => !replacing.includes(r));
    const seen = [...others];
    for (const row of rows) {
      if (seen.some((other) => pk.every((c) => same(other[c.name] ?? null, row[c.name] ?? null)))) {
        throw new SqlFailure(sqlServerErrors.duplicateKey(`PK_${table.name}`, `${table.schema}.${table.name}`, pk.map((c) => display(row[c.name] ?? null)).join(', ')));
      }
      seen.push(row);
    }
  }

  // Implicit conversion of a bound value to the column's type, as SQL Server does it.
  private convert(table: Table, column: Table['columns'][number], value: EmulatedValue): EmulatedValue {
    if (value === null) return null;
    switch (column.type) {
      case 'any':
        return value;
      case 'int':
      case 'bigint': {
        const [min, max] = column.type === 'int' ? [-2_147_483_648, 2_147_483_647] : [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
        let n: number;
        if (typeof value === 'boolean') n = value ? 1 : 0;
        else if (typeof value === 'number') n = Math.trunc(value);
        else if (/^\s*[+-]?\d+\s*$/u.test(value)) n = Number(value);
        else throw new SqlFailure(sqlServerErrors.conversionFailed(value, column.type));
        if (n < min || n > max) throw new SqlFailure(sqlServerErrors.arithmeticOverflow(column.type));
        return n;
      }
      case 'float': {
        if (typeof value === 'boolean') return value ? 1 : 0;
        if (typeof value === 'number') return value;
        const n = Number(value);
        if (value.trim() === '' || !Number.isFinite(n)) throw new SqlFailure(sqlServerErrors.conversionError('nvarchar', 'float'));
        return n;
      }
      case 'bit': {
        if (typeof value === 'boolean') return value;
        if (typeof value === 'number') return value !== 0;
        const v = value.trim().toLowerCase();
        if (v === 'true' || v === '1') return true;
        if (v === 'false' || v === '0') return false;
        throw new SqlFailure(sqlServerErrors.conversionFailed(value, 'bit'));
      }
      case 'nvarchar': {
        const text = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
        const max = table.maxLengths.get(column.name.toLowerCase());
        if (max !== undefined && text.length > max) {
          throw new SqlFailure(sqlServerErrors.truncated(`${this.database}.${table.schema}.${table.name}`, column.name, text.slice(0, max)));
        }
        return text;
      }
    }
  }
}

function compare(left: EmulatedValue, op: string, right: EmulatedValue): boolean {
  if (left === null || right === null) return false;
  switch (op) {
    case '=':
      return same(left, right);
    case '<>':
    case '!=':
      return !same(left, right);
    case '>':
      return left > right;
    case '<':
      return left < right;
    case '>=':
      return left >= right;
    default:
      return left <= right;
  }
}

function columnType(value: EmulatedValue): 'int' | 'float' | 'bit' | 'nvarchar' | 'bigint' {
  if (typeof value === 'number') return Number.isInteger(value) ? (Math.abs(value) <= 2_147_483_647 ? 'int' : 'bigint') : 'float';
  if (typeof value === 'boolean') return 'bit';
  return value === null ? 'int' : 'nvarchar';
}
