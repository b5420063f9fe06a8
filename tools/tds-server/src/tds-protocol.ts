/**
 * The parts of TDS 7.4 (MS-TDS) the scripted server speaks, hand-rolled on purpose: a
 * test server must not share the client library's code, or a bug in one would hide in
 * the other. Section numbers refer to MS-TDS.
 */

/** Packet types (MS-TDS 2.2.3.1.1). */
export const PACKET = {
  sqlBatch: 0x01,
  rpc: 0x03,
  tabularResult: 0x04,
  attention: 0x06,
  login7: 0x10,
  prelogin: 0x12,
} as const;

const STATUS_EOM = 0x01;
const STATUS_IGNORE = 0x02;
const HEADER_LENGTH = 8;

/** One reassembled client message (one or more packets up to end-of-message). */
export interface TdsMessage {
  /** Packet type, see {@link PACKET}. */
  readonly type: number;
  /** The client asked the server to ignore this message (cancel before it was sent). */
  readonly ignore: boolean;
  readonly payload: Buffer;
}

/**
 * Reassembles packets (MS-TDS 2.2.3) from a byte stream into messages.
 */
export class MessageReader {
  private buffered: Buffer = Buffer.alloc(0);
  private parts: Buffer[] = [];

  /** Adds bytes read from the socket; returns every message they complete. */
  push(chunk: Buffer): TdsMessage[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const messages: TdsMessage[] = [];
    while (this.buffered.length >= HEADER_LENGTH) {
      const length = this.buffered.readUInt16BE(2);
      if (length < HEADER_LENGTH) throw new Error(`TDS packet length ${length} is shorter than its header`);
      if (this.buffered.length < length) break;
      const type = this.buffered.readUInt8(0);
      const status = this.buffered.readUInt8(1);
      this.parts.push(this.buffered.subarray(HEADER_LENGTH, length));
      this.buffered = this.buffered.subarray(length);
      if ((status & STATUS_EOM) !== 0) {
        messages.push({ type, ignore: (status & STATUS_IGNORE) !== 0, payload: Buffer.concat(this.parts) });
        this.parts = [];
      }
    }
    return messages;
  }
}

/** Splits a server message into packets of at most `packetSize` bytes (MS-TDS 2.2.3). */
export function packets(type: number, payload: Buffer, packetSize: number): Buffer[] {
  const room = packetSize - HEADER_LENGTH;
  const out: Buffer[] = [];
  let offset = 0;
  let id = 1;
  do {
    const body = payload.subarray(offset, offset + room);
    offset += body.length;
    const header = Buffer.alloc(HEADER_LENGTH);
    header.writeUInt8(type, 0);
    header.writeUInt8(offset >= payload.length ? STATUS_EOM : 0, 1);
    header.writeUInt16BE(HEADER_LENGTH + body.length, 2);
    header.writeUInt16BE(0, 4); // SPID
    header.writeUInt8(id % 256, 6);
    header.writeUInt8(0, 7); // window
    out.push(header, body);
    id += 1;
  } while (offset < payload.length);
  return out;
}

// ---------------------------------------------------------------- primitive writers

function ucs2(text: string): Buffer {
  return Buffer.from(text, 'utf16le');
}

/** B_VARCHAR: 1-byte length in characters, UCS-2 text. */
export function bVarchar(text: string): Buffer {
  const body = ucs2(text);
  return Buffer.concat([Buffer.from([body.length / 2]), body]);
}

/** US_VARCHAR: 2-byte length in characters, UCS-2 text. */
export function usVarchar(text: string): Buffer {
  const body = ucs2(text);
  const length = Buffer.alloc(2);
  length.writeUInt16LE(body.length / 2);
  return Buffer.concat([length, body]);
}

function bVarbyte(bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

function withUInt16Length(tokenType: number, body: Buffer): Buffer {
  const head = Buffer.alloc(3);
  head.writeUInt8(tokenType, 0);
  head.writeUInt16LE(body.length, 1);
  return Buffer.concat([head, body]);
}

// ---------------------------------------------------------------- PRELOGIN (2.2.6.5)

/** The PRELOGIN answer: version 16.0, encryption not supported, no MARS. */
export function preloginResponse(): Buffer {
  const options: [number, Buffer][] = [
    [0x00, Buffer.from([16, 0, 0x07, 0xd0, 0, 0])], // VERSION 16.0.2000.0
    [0x01, Buffer.from([0x02])], // ENCRYPTION: ENCRYPT_NOT_SUP
    [0x02, Buffer.from([0x00])], // INSTOPT
    [0x03, Buffer.alloc(4)], // THREADID
    [0x04, Buffer.from([0x00])], // MARS off
  ];
  const table = Buffer.alloc(options.length * 5 + 1);
  let dataOffset = table.length;
  options.forEach(([token, data], i) => {
    table.writeUInt8(token, i * 5);
    table.writeUInt16BE(dataOffset, i * 5 + 1);
    table.writeUInt16BE(data.length, i * 5 + 3);
    dataOffset += data.length;
  });
  table.writeUInt8(0xff, options.length * 5);
  return Buffer.concat([table, ...options.map(([, data]) => data)]);
}

// ---------------------------------------------------------------- LOGIN7 (2.2.6.4)

/** What the client sent in LOGIN7 (the password is decoded, for credential checks). */
export interface Login7 {
  /** e.g. 0x74000004 for TDS 7.4. */
  readonly tdsVersion: number;
  /** Packet size the client asks for, in bytes. */
  readonly packetSize: number;
  readonly hostName: string;
  readonly userName: string;
  readonly password: string;
  readonly appName: string;
  readonly serverName: string;
  readonly database: string;
}

function login7String(payload: Buffer, at: number, password = false): string {
  const offset = payload.readUInt16LE(at);
  const chars = payload.readUInt16LE(at + 2);
  const bytes = Buffer.from(payload.subarray(offset, offset + chars * 2));
  if (password) {
    // 2.2.6.4: each byte was nibble-swapped, then XORed with 0xA5.
    for (let i = 0; i < bytes.length; i += 1) {
      const b = (bytes[i] ?? 0) ^ 0xa5;
      bytes[i] = ((b & 0x0f) << 4) | (b >> 4);
    }
  }
  return bytes.toString('utf16le');
}

/** Parses a LOGIN7 payload. */
export function parseLogin7(payload: Buffer): Login7 {
  return {
    tdsVersion: payload.readUInt32LE(4),
    packetSize: payload.readUInt32LE(8),
    hostName: login7String(payload, 36),
    userName: login7String(payload, 40),
    password: login7String(payload, 44, true),
    appName: login7String(payload, 48),
    serverName: login7String(payload, 52),
    database: login7String(payload, 68),
  };
}

// ---------------------------------------------------------------- tokens (2.2.7)

/** LOGINACK (2.2.7.14): TDS 7.4, interface SQL_TSQL. */
export function loginAckToken(): Buffer {
  const version = Buffer.alloc(4);
  version.writeUInt32BE(0x74000004);
  return withUInt16Length(0xad, Buffer.concat([Buffer.from([0x01]), version, bVarchar('Microsoft SQL Server'), Buffer.from([16, 0, 0x07, 0xd0])]));
}

/** SQL_Latin1_General_CP1_CI_AS as a 5-byte TDS collation (2.2.5.1.2). */
export const DEFAULT_COLLATION = Buffer.from([0x09, 0x04, 0xd0, 0x00, 0x34]);

/** ENVCHANGE (2.2.7.9) with B_VARCHAR values: 1 database, 2 language, 4 packet size. */
export function envChangeToken(type: 1 | 2 | 4, newValue: string, oldValue: string): Buffer {
  return withUInt16Length(0xe3, Buffer.concat([Buffer.from([type]), bVarchar(newValue), bVarchar(oldValue)]));
}

/** ENVCHANGE type 7: SQL collation. */
export function collationChangeToken(collation: Buffer): Buffer {
  return withUInt16Length(0xe3, Buffer.concat([Buffer.from([7]), bVarbyte(collation), bVarbyte(Buffer.alloc(0))]));
}

/** A SQL Server error or message, as in sys.messages. */
export interface SqlMessage {
  /** Error number, e.g. 208. */
  readonly number: number;
  /** Message text as SQL Server words it. */
  readonly message: string;
  /** Severity; 11..16 are user errors, 0..10 informational. Default 16. */
  readonly class?: number;
  /** State. Default 1. */
  readonly state?: number;
  /** Line of the batch. Default 1. */
  readonly lineNumber?: number;
}

/** ERROR (0xAA) or INFO (0xAB) token (2.2.7.10, 2.2.7.13). */
export function messageToken(message: SqlMessage, server: string, info = false): Buffer {
  const head = Buffer.alloc(6);
  head.writeUInt32LE(message.number, 0);
  head.writeUInt8(message.state ?? 1, 4);
  head.writeUInt8(message.class ?? (info ? 0 : 16), 5);
  const line = Buffer.alloc(4);
  line.writeUInt32LE(message.lineNumber ?? 1);
  return withUInt16Length(info ? 0xab : 0xaa, Buffer.concat([head, usVarchar(message.message), bVarchar(server), bVarchar(''), line]));
}

/** DONE status bits (2.2.7.6). */
export const DONE = { final: 0x00, more: 0x01, error: 0x02, count: 0x10, attention: 0x20 } as const;

/** Current command values of DONE tokens (2.2.7.6). */
export const CURCMD = { none: 0, select: 0xc1, insert: 0xc3, delete: 0xc4, update: 0xc5, execute: 0xe0 } as const;

/** DONE (0xFD), DONEPROC (0xFE) or DONEINPROC (0xFF) with a 64-bit row count. */
export function doneToken(kind: 'done' | 'doneProc' | 'doneInProc', status: number, curCmd: number, rowCount = 0): Buffer {
  const token = Buffer.alloc(13);
  token.writeUInt8(kind === 'done' ? 0xfd : kind === 'doneProc' ? 0xfe : 0xff, 0);
  token.writeUInt16LE(status, 1);
  token.writeUInt16LE(curCmd, 3);
  token.writeBigUInt64LE(BigInt(rowCount), 5);
  return token;
}

/** RETURNSTATUS (2.2.7.18). */
export function returnStatusToken(status: number): Buffer {
  const token = Buffer.alloc(5);
  token.writeUInt8(0x79, 0);
  token.writeInt32LE(status, 1);
  return token;
}

/** Column types a scripted result set can carry. */
export type TdsColumnType = 'int' | 'bigint' | 'float' | 'bit' | 'nvarchar';

/** A value of a scripted result set. */
export type TdsCell = string | number | bigint | boolean | null;

/** COLMETADATA (2.2.7.4): nullable columns of the given types. */
export function colMetadataToken(columns: readonly { readonly name: string; readonly type: TdsColumnType }[]): Buffer {
  const count = Buffer.alloc(2);
  count.writeUInt16LE(columns.length);
  const parts: Buffer[] = [Buffer.from([0x81]), count];
  for (const column of columns) {
    const head = Buffer.alloc(6); // UserType (4) = 0, Flags (2) = nullable
    head.writeUInt16LE(0x0001, 4);
    parts.push(head, typeInfo(column.type), bVarchar(column.name));
  }
  return Buffer.concat(parts);
}

function typeInfo(type: TdsColumnType): Buffer {
  switch (type) {
    case 'int':
      return Buffer.from([0x26, 4]);
    case 'bigint':
      return Buffer.from([0x26, 8]);
    case 'float':
      return Buffer.from([0x6d, 8]);
    case 'bit':
      return Buffer.from([0x68, 1]);
    case 'nvarchar': {
      const info = Buffer.alloc(8);
      info.writeUInt8(0xe7, 0);
      info.writeUInt16LE(8000, 1);
      DEFAULT_COLLATION.copy(info, 3);
      return info;
    }
  }
}

/** ROW (2.2.7.19) of values matching `columns`. */
export function rowToken(columns: readonly { readonly type: TdsColumnType }[], values: readonly TdsCell[]): Buffer {
  const parts: Buffer[] = [Buffer.from([0xd1])];
  columns.forEach((column, i) => parts.push(cell(column.type, values[i] ?? null)));
  return Buffer.concat(parts);
}

function cell(type: TdsColumnType, value: TdsCell): Buffer {
  if (type === 'nvarchar') {
    if (value === null) return Buffer.from([0xff, 0xff]);
    const body = ucs2(String(value));
    const length = Buffer.alloc(2);
    length.writeUInt16LE(body.length);
    return Buffer.concat([length, body]);
  }
  if (value === null) return Buffer.from([0]);
  switch (type) {
    case 'int': {
      const b = Buffer.alloc(5);
      b.writeUInt8(4, 0);
      b.writeInt32LE(Number(value), 1);
      return b;
    }
    case 'bigint': {
      const b = Buffer.alloc(9);
      b.writeUInt8(8, 0);
      b.writeBigInt64LE(BigInt(value), 1);
      return b;
    }
    case 'float': {
      const b = Buffer.alloc(9);
      b.writeUInt8(8, 0);
      b.writeDoubleLE(Number(value), 1);
      return b;
    }
    case 'bit':
      return Buffer.from([1, value === true || value === 1 || value === '1' ? 1 : 0]);
  }
}

// ---------------------------------------------------------------- requests

/** A parameter value as decoded from the wire. */
export type TdsValue = string | number | bigint | boolean | null;

/** One RPC parameter as sent (2.2.6.6 ParameterData). */
export interface WireParameter {
  /** Name with its `@`, e.g. `@p0`; empty for positional parameters. */
  readonly name: string;
  /** Wire type, e.g. `intn(4)`, `nvarchar(8000)`, `nvarchar(max)`. */
  readonly wireType: string;
  readonly value: TdsValue;
}

/** A decoded RPC request (2.2.6.6). */
export interface WireRpc {
  /** Procedure name, or the id of a special procedure (10 is `sp_executesql`). */
  readonly procedure: string | number;
  readonly parameters: readonly WireParameter[];
}

/** Skips ALL_HEADERS (2.2.5.3), which TDS 7.2+ requests start with. */
function skipAllHeaders(payload: Buffer): number {
  return payload.readUInt32LE(0);
}

/** The text of a SQL batch request (2.2.6.7). */
export function parseSqlBatch(payload: Buffer): string {
  return payload.subarray(skipAllHeaders(payload)).toString('utf16le');
}

class Cursor {
  constructor(
    private readonly buffer: Buffer,
    public offset: number,
  ) {}

  get done(): boolean {
    return this.offset >= this.buffer.length;
  }

  u8(): number {
    const v = this.buffer.readUInt8(this.offset);
    this.offset += 1;
    return v;
  }

  u16(): number {
    const v = this.buffer.readUInt16LE(this.offset);
    this.offset += 2;
    return v;
  }

  u32(): number {
    const v = this.buffer.readUInt32LE(this.offset);
    this.offset += 4;
    return v;
  }

  bytes(n: number): Buffer {
    const v = this.buffer.subarray(this.offset, this.offset + n);
    if (v.length !== n) throw new Error('TDS request ends inside a value');
    this.offset += n;
    return v;
  }

  /** PLP value (2.2.5.2.3): null, or the chunks up to the terminator. */
  plp(): Buffer | null {
    const total = this.buffer.readBigUInt64LE(this.offset);
    this.offset += 8;
    if (total === 0xffffffffffffffffn) return null;
    const chunks: Buffer[] = [];
    for (let length = this.u32(); length !== 0; length = this.u32()) chunks.push(this.bytes(length));
    return Buffer.concat(chunks);
  }
}

function readInt(bytes: Buffer): number | bigint {
  switch (bytes.length) {
    case 1:
      return bytes.readUInt8(0);
    case 2:
      return bytes.readInt16LE(0);
    case 4:
      return bytes.readInt32LE(0);
    case 8: {
      const v = bytes.readBigInt64LE(0);
      return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    default:
      throw new Error(`integer of ${bytes.length} bytes`);
  }
}

function readFloat(bytes: Buffer): number {
  return bytes.length === 4 ? bytes.readFloatLE(0) : bytes.readDoubleLE(0);
}

// Type info then value of one parameter (2.2.5.4, 2.2.5.5); the types a JSON value can
// be sent as, plus the fixed-length ones.
function readTypedValue(c: Cursor): { wireType: string; value: TdsValue } {
  const type = c.u8();
  const fixed: Record<number, [string, number, (b: Buffer) => TdsValue]> = {
    0x30: ['tinyint', 1, readInt],
    0x34: ['smallint', 2, readInt],
    0x38: ['int', 4, readInt],
    0x7f: ['bigint', 8, readInt],
    0x3b: ['real', 4, readFloat],
    0x3e: ['float', 8, readFloat],
    0x32: ['bit', 1, (b) => b.readUInt8(0) !== 0],
  };
  const f = fixed[type];
  if (f !== undefined) return { wireType: f[0], value: f[2](c.bytes(f[1])) };
  switch (type) {
    case 0x1f: // NULLTYPE
      return { wireType: 'null', value: null };
    case 0x26: // INTN
    case 0x6d: // FLTN
    case 0x68: {
      // BITN
      const max = c.u8();
      const length = c.u8();
      const name = type === 0x26 ? 'intn' : type === 0x6d ? 'fltn' : 'bitn';
      if (length === 0) return { wireType: `${name}(${max})`, value: null };
      const bytes = c.bytes(length);
      const value = type === 0x26 ? readInt(bytes) : type === 0x6d ? readFloat(bytes) : bytes.readUInt8(0) !== 0;
      return { wireType: `${name}(${max})`, value };
    }
    case 0x6a: // DECIMALN
    case 0x6c: {
      // NUMERICN (2.2.5.5.1.6): sign byte (1 = positive), then the unscaled integer in
      // little-endian bytes; decoded to exact decimal text so a test sees every digit.
      c.u8(); // max length
      const precision = c.u8();
      const scale = c.u8();
      const wireType = `${type === 0x6a ? 'decimal' : 'numeric'}(${precision}, ${scale})`;
      const length = c.u8();
      if (length === 0) return { wireType, value: null };
      const bytes = c.bytes(length);
      let unscaled = 0n;
      for (let i = bytes.length - 1; i >= 1; i -= 1) unscaled = (unscaled << 8n) | BigInt(bytes[i] ?? 0);
      const digits = unscaled.toString().padStart(scale + 1, '0');
      const text = scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
      return { wireType, value: `${bytes[0] === 1 ? '' : '-'}${text}` };
    }
    case 0xe7: // NVARCHAR
    case 0xef: // NCHAR
    case 0xa7: // VARCHAR
    case 0xaf: {
      // CHAR
      const max = c.u16();
      c.bytes(5); // collation
      const wide = type === 0xe7 || type === 0xef;
      const name = { 0xe7: 'nvarchar', 0xef: 'nchar', 0xa7: 'varchar', 0xaf: 'char' }[type] ?? 'char';
      const decode = (b: Buffer): string => b.toString(wide ? 'utf16le' : 'latin1');
      if (max === 0xffff) {
        const body = c.plp();
        return { wireType: `${name}(max)`, value: body === null ? null : decode(body) };
      }
      const length = c.u16();
      return { wireType: `${name}(${max})`, value: length === 0xffff ? null : decode(c.bytes(length)) };
    }
    default:
      throw new Error(`parameter of TDS type 0x${type.toString(16)} is not supported by the scripted server`);
  }
}

/** Parses an RPC request (2.2.6.6). */
export function parseRpc(payload: Buffer): WireRpc {
  const c = new Cursor(payload, skipAllHeaders(payload));
  const nameLength = c.u16();
  const procedure = nameLength === 0xffff ? c.u16() : c.bytes(nameLength * 2).toString('utf16le');
  c.u16(); // option flags
  const parameters: WireParameter[] = [];
  while (!c.done) {
    const name = c.bytes(c.u8() * 2).toString('utf16le');
    c.u8(); // status flags (by-ref, default)
    const { wireType, value } = readTypedValue(c);
    parameters.push({ name, wireType, value });
  }
  return { procedure, parameters };
}

/**
 * Splits the `@params` declaration of `sp_executesql` ("@p0 int, @p1 nvarchar(4000)")
 * into name → declared type (lower case).
 */
export function parseDeclarations(declarations: string): Map<string, string> {
  const out = new Map<string, string>();
  let depth = 0;
  let current = '';
  const flush = (): void => {
    const m = /^\s*(@\S+)\s+(.+?)\s*$/su.exec(current);
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[1].toLowerCase(), m[2].replace(/\s+output$/iu, '').toLowerCase());
    current = '';
  };
  for (const ch of declarations) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) flush();
    else current += ch;
  }
  flush();
  return out;
}
