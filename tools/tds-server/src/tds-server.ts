import { EventEmitter, once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { TableEmulator } from './table-emulator.js';
import {
  collationChangeToken,
  colMetadataToken,
  CURCMD,
  DEFAULT_COLLATION,
  DONE,
  doneToken,
  envChangeToken,
  loginAckToken,
  MessageReader,
  messageToken,
  PACKET,
  packets,
  parseDeclarations,
  parseLogin7,
  parseRpc,
  parseSqlBatch,
  preloginResponse,
  returnStatusToken,
  rowToken,
  type Login7,
  type SqlMessage,
  type TdsMessage,
} from './tds-protocol.js';
import type { TdsRequest, TdsRequestHandler, TdsResult } from './tds-exchange.js';

/** `sp_executesql`'s id among the special procedures (MS-TDS 2.2.6.6, ProcID 10). */
export const SP_EXECUTESQL_ID = 10;

/** A login attempt: LOGIN7 as sent, and where it came from. */
export interface TdsLogin extends Login7 {
  readonly connectionId: number;
  readonly clientAddress: string;
}

/** How the server answers a LOGIN7. */
export interface TdsLoginResponse {
  /** Wait this long first, in milliseconds. */
  readonly delayMs?: number;
  /** Close the socket instead of answering. */
  readonly drop?: boolean;
  /** Refuse with this error (SQL Server sends 18456), then close. Absent: log in. */
  readonly error?: SqlMessage;
}

/** Decides logins; default: every login succeeds. */
export type TdsLoginHandler = (login: TdsLogin) => TdsLoginResponse;

/** A TCP connection the server accepted. */
export interface TdsConnectionInfo {
  readonly id: number;
  /** Client source address, e.g. `127.0.0.1`. */
  readonly clientAddress: string;
  readonly clientPort: number;
  /** The login, once received (password left out). */
  login?: Omit<TdsLogin, 'password'>;
  /** True once the socket closed, from either side. */
  closed: boolean;
}

/** Options of {@link TdsServer}. */
export interface TdsServerOptions {
  /** Answers requests; default: {@link TdsServer.emulator}. */
  readonly handler?: TdsRequestHandler;
  /** Decides logins; default: accept. See {@link requireLogin}. */
  readonly login?: TdsLoginHandler;
  /** Address to listen on; default `127.0.0.1`. */
  readonly host?: string;
}

/** SQL Server's answer to a wrong user or password (error 18456, state 8). */
export function loginFailed(user: string): SqlMessage {
  return { number: 18456, class: 14, state: 1, message: `Login failed for user '${user}'.` };
}

/** A login handler accepting only this user name and password, as SQL Server would. */
export function requireLogin(user: string, password: string): TdsLoginHandler {
  return (login) => (login.userName === user && login.password === password ? {} : { error: loginFailed(login.userName) });
}

// tedious sends its session options as the first SQL batch of every connection: a list
// of `set ...` lines and nothing else.
const SESSION_SETUP = /^(?:\s*set\s+[^\n;]+)+\s*$/iu;

interface Session {
  readonly info: TdsConnectionInfo;
  readonly socket: Socket;
  readonly reader: MessageReader;
  packetSize: number;
  loggedIn: boolean;
  /** The request being answered, until its answer is written. */
  pending: { cancelled: boolean; timer: NodeJS.Timeout | undefined; wake: (() => void) | undefined } | undefined;
  /** Messages wait here while a request is answered: TDS is one request at a time. */
  queue: TdsMessage[];
}

/**
 * A scripted SQL Server for tests: speaks enough TDS 7.4 over TCP for tedious (PRELOGIN
 * without encryption, LOGIN7 → LOGINACK with ENVCHANGE database / collation / packet
 * size, SQL batch and RPC requests including `sp_executesql` with typed parameters,
 * ATTENTION). It records every request (SQL text, parameter names, declared types,
 * values) and every connection's client source address, and answers per script: DONE
 * with or without a row count, result sets, ERROR tokens, login failure, a delay, or a
 * dropped socket. Its default handler is a {@link TableEmulator}.
 *
 * Listens on 127.0.0.1 and a free port ({@link port}); {@link close} closes every
 * socket and timer. Source: MS-TDS 2.2 (messages, tokens), 3.2.5 (client states the
 * answers must fit).
 *
 * Events: `connection` (TdsConnectionInfo), `request` (TdsRequest), `disconnect`
 * (TdsConnectionInfo).
 */
export class TdsServer extends EventEmitter {
  /** Every request received, in order (not tedious's per-connection session setup). */
  readonly requests: TdsRequest[] = [];
  /** Every connection accepted, in order. */
  readonly connections: TdsConnectionInfo[] = [];
  /** The stateful table emulator behind the default handler. */
  readonly emulator = new TableEmulator();
  /** Answers requests; replace it to script a test. */
  handler: TdsRequestHandler;
  /** Decides logins; replace it to script a test. */
  login: TdsLoginHandler;
  /**
   * When true, ATTENTION packets are counted and otherwise ignored: a server too hung to
   * acknowledge a cancel (MS-TDS 3.2.5.7: the client waits for DONE_ATTN).
   */
  ignoreAttention = false;
  /** How many ATTENTION packets arrived. */
  attentions = 0;

  private readonly server: Server;
  private readonly sessions = new Set<Session>();
  private readonly host: string;
  private closing: Promise<void> | undefined;

  private constructor(options: TdsServerOptions) {
    super();
    this.handler = options.handler ?? ((request) => this.emulator.handle(request));
    this.login = options.login ?? (() => ({}));
    this.host = options.host ?? '127.0.0.1';
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Starts a server on `host` (default 127.0.0.1) and a free port. */
  static async start(options: TdsServerOptions = {}): Promise<TdsServer> {
    const server = new TdsServer(options);
    server.server.listen(0, server.host);
    await once(server.server, 'listening');
    return server;
  }

  /** The TCP port the server listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Connections whose socket is still open. */
  get openConnections(): number {
    return this.connections.filter((c) => !c.closed).length;
  }

  /** Stops listening, destroys every socket and timer; resolves once all are closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const closed = once(this.server, 'close');
      this.server.close();
      const sockets = [...this.sessions].map((s) => {
        this.cancelPending(s);
        const done = s.socket.destroyed ? Promise.resolve() : once(s.socket, 'close').then(() => undefined);
        s.socket.destroy();
        return done;
      });
      await Promise.all([closed, ...sockets]);
    })();
    return this.closing;
  }

  private accept(socket: Socket): void {
    const info: TdsConnectionInfo = {
      id: this.connections.length + 1,
      clientAddress: socket.remoteAddress ?? '',
      clientPort: socket.remotePort ?? 0,
      closed: false,
    };
    this.connections.push(info);
    const session: Session = { info, socket, reader: new MessageReader(), packetSize: 4096, loggedIn: false, pending: undefined, queue: [] };
    this.sessions.add(session);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      let messages: TdsMessage[];
      try {
        messages = session.reader.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const message of messages) this.receive(session, message);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      info.closed = true;
      this.cancelPending(session);
      this.sessions.delete(session);
      this.emit('disconnect', info);
    });
    this.emit('connection', info);
  }

  private receive(session: Session, message: TdsMessage): void {
    if (message.type === PACKET.attention) {
      this.attentions += 1;
      if (this.ignoreAttention) return;
      this.attention(session);
      return;
    }
    if (session.pending !== undefined) {
      session.queue.push(message);
      return;
    }
    void this.answer(session, message);
  }

  private async answer(session: Session, message: TdsMessage): Promise<void> {
    const pending: NonNullable<Session['pending']> = { cancelled: false, timer: undefined, wake: undefined };
    session.pending = pending;
    try {
      await this.dispatch(session, message, pending);
    } catch {
      // A request the scripted server cannot parse, or a handler that threw: a real
      // server would not hang up, but a test should fail loudly, so the socket closes.
      session.socket.destroy();
    }
    if (session.pending === pending) session.pending = undefined;
    const next = session.queue.shift();
    if (next !== undefined && !session.socket.destroyed) void this.answer(session, next);
  }

  private async dispatch(session: Session, message: TdsMessage, pending: NonNullable<Session['pending']>): Promise<void> {
    switch (message.type) {
      case PACKET.prelogin:
        this.send(session, preloginResponse());
        return;
      case PACKET.login7:
        await this.logIn(session, parseLogin7(message.payload), pending);
        return;
      case PACKET.sqlBatch:
      case PACKET.rpc: {
        if (message.ignore) {
          // The client cancelled before sending all of it (MS-TDS 2.2.3.1.2): answer
          // with an empty DONE and do not run it.
          this.send(session, doneToken('done', DONE.final, CURCMD.none));
          return;
        }
        const request = this.decode(session, message);
        if (request === undefined) {
          this.send(session, doneToken('done', DONE.final, CURCMD.none));
          return;
        }
        this.requests.push(request);
        this.emit('request', request);
        const response = await this.handler(request);
        await this.wait(response.delayMs, pending);
        if (pending.cancelled) return;
        if (response.drop === true) {
          session.socket.destroy();
          return;
        }
        this.send(session, render(request.kind, response.results ?? [], 'SCRIPTED'));
        return;
      }
      default:
        session.socket.destroy();
    }
  }

  private async logIn(session: Session, login: Login7, pending: NonNullable<Session['pending']>): Promise<void> {
    session.packetSize = login.packetSize > 512 && login.packetSize <= 32_767 ? login.packetSize : 4096;
    const attempt: TdsLogin = { ...login, connectionId: session.info.id, clientAddress: session.info.clientAddress };
    const { password: _password, ...recorded } = attempt;
    session.info.login = recorded;
    const response = this.login(attempt);
    await this.wait(response.delayMs, pending);
    if (response.drop === true) {
      session.socket.destroy();
      return;
    }
    if (response.error !== undefined) {
      this.send(session, Buffer.concat([messageToken(response.error, 'SCRIPTED'), doneToken('done', DONE.error, CURCMD.none)]));
      session.socket.end();
      return;
    }
    session.loggedIn = true;
    const database = login.database === '' ? 'master' : login.database;
    this.send(
      session,
      Buffer.concat([
        envChangeToken(1, database, 'master'),
        messageToken({ number: 5701, class: 0, message: `Changed database context to '${database}'.` }, 'SCRIPTED', true),
        collationChangeToken(DEFAULT_COLLATION),
        envChangeToken(2, 'us_english', ''),
        loginAckToken(),
        envChangeToken(4, String(session.packetSize), String(session.packetSize)),
        doneToken('done', DONE.final, CURCMD.none),
      ]),
    );
  }

  private decode(session: Session, message: TdsMessage): TdsRequest | undefined {
    if (!session.loggedIn) throw new Error('request before login');
    const where = { connectionId: session.info.id, clientAddress: session.info.clientAddress };
    if (message.type === PACKET.sqlBatch) {
      const sql = parseSqlBatch(message.payload);
      if (SESSION_SETUP.test(sql)) return undefined;
      return { ...where, kind: 'batch', sql, parameters: [] };
    }
    const rpc = parseRpc(message.payload);
    const isExecuteSql = rpc.procedure === SP_EXECUTESQL_ID || (typeof rpc.procedure === 'string' && /^(sys\.)?sp_executesql$/iu.test(rpc.procedure));
    if (!isExecuteSql) {
      return { ...where, kind: 'rpc', procedure: rpc.procedure, sql: '', parameters: rpc.parameters.map((p) => ({ name: p.name, type: p.wireType, value: p.value })) };
    }
    const [statement, declarations, ...rest] = rpc.parameters;
    const declared = parseDeclarations(typeof declarations?.value === 'string' ? declarations.value : '');
    return {
      ...where,
      kind: 'rpc',
      procedure: rpc.procedure,
      sql: typeof statement?.value === 'string' ? statement.value : '',
      parameters: rest.map((p) => ({ name: p.name, type: declared.get(p.name.toLowerCase()) ?? p.wireType, value: p.value })),
    };
  }

  // MS-TDS 3.2.5.7 / 3.3.5.3: after an ATTENTION the client reads the (cut short) answer
  // of the cancelled request, then a message holding only DONE with DONE_ATTN.
  private attention(session: Session): void {
    const pending = session.pending;
    if (pending !== undefined && !pending.cancelled) {
      this.cancelPending(session);
      this.send(session, doneToken('done', DONE.final, CURCMD.none));
    }
    this.send(session, doneToken('done', DONE.attention, CURCMD.none));
  }

  private cancelPending(session: Session): void {
    const pending = session.pending;
    if (pending === undefined) return;
    pending.cancelled = true;
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    pending.timer = undefined;
    pending.wake?.();
  }

  private wait(ms: number | undefined, pending: NonNullable<Session['pending']>): Promise<void> {
    if (ms === undefined || ms <= 0 || pending.cancelled) return Promise.resolve();
    return new Promise((resolve) => {
      pending.wake = resolve;
      pending.timer = setTimeout(resolve, ms);
    });
  }

  private send(session: Session, payload: Buffer): void {
    if (session.socket.destroyed || !session.socket.writable) return;
    for (const packet of packets(PACKET.tabularResult, payload, session.packetSize)) session.socket.write(packet);
  }
}

/**
 * Tokens of an answer. An RPC's statements end in DONEINPROC, the call in RETURNSTATUS
 * and DONEPROC; a batch's statements end in DONE (MS-TDS 2.2.7.6).
 */
function render(kind: 'batch' | 'rpc', results: readonly TdsResult[], server: string): Buffer {
  const parts: Buffer[] = [];
  const statementDone = kind === 'rpc' ? 'doneInProc' : 'done';
  let failed = false;
  results.forEach((result, i) => {
    const more = kind === 'rpc' || i < results.length - 1 ? DONE.more : 0;
    switch (result.kind) {
      case 'done':
        parts.push(doneToken(statementDone, more | (result.rowCount === undefined ? 0 : DONE.count), CURCMD.none, result.rowCount ?? 0));
        break;
      case 'rows':
        parts.push(colMetadataToken(result.columns));
        for (const row of result.rows) parts.push(rowToken(result.columns, row));
        parts.push(doneToken(statementDone, more | DONE.count, CURCMD.select, result.rows.length));
        break;
      case 'error':
        failed = true;
        parts.push(messageToken(result, server), doneToken(statementDone, more | DONE.error, CURCMD.none));
        break;
      case 'info':
        parts.push(messageToken(result, server, true));
        if (i === results.length - 1 && kind === 'batch') parts.push(doneToken('done', DONE.final, CURCMD.none));
        break;
    }
  });
  if (kind === 'rpc') parts.push(returnStatusToken(failed ? -6 : 0), doneToken('doneProc', failed ? DONE.error : DONE.final, CURCMD.execute));
  if (parts.length === 0) parts.push(doneToken('done', DONE.final, CURCMD.none));
  return Buffer.concat(parts);
}
