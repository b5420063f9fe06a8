// What a request is and how it is answered, apart from the server that carries them: the
// table emulator answers requests and the server delivers them, so both import these
// shapes from here rather than from each other (which was an import cycle).
import type { SqlMessage, TdsCell, TdsColumnType, TdsValue } from './tds-protocol.js';

/** A parameter of a recorded request, with the type its sender declared. */
export interface TdsParameter {
  /** Name with its `@`, e.g. `@p0`. */
  readonly name: string;
  /**
   * Declared SQL type in lower case, e.g. `int`, `bigint`, `float`, `bit`,
   * `nvarchar(4000)` (from `sp_executesql`'s `@params`), or the wire type (`intn(4)`)
   * of a parameter no declaration names.
   */
  readonly type: string;
  /** The value; integers beyond 2^53 arrive as `bigint`. */
  readonly value: TdsValue;
}

/** A request as the server received it. */
export interface TdsRequest {
  /** Id of the TCP connection (1, 2, ... in accept order). */
  readonly connectionId: number;
  /** Source address of that connection as the server saw it, e.g. `127.0.0.2`. */
  readonly clientAddress: string;
  /** `batch` for a SQL batch, `rpc` for a remote procedure call. */
  readonly kind: 'batch' | 'rpc';
  /** RPC only: procedure name or special-procedure id (10 = `sp_executesql`). */
  readonly procedure?: string | number;
  /** The SQL text: the batch, or `sp_executesql`'s `@statement`. */
  readonly sql: string;
  /** The parameters, without `sp_executesql`'s `@statement` and `@params`. */
  readonly parameters: readonly TdsParameter[];
}

/** One result of a scripted answer, in order. */
export type TdsResult =
  /** A statement that returned no rows; `rowCount` absent means NOCOUNT (no count sent). */
  | { readonly kind: 'done'; readonly rowCount?: number }
  /** A result set. */
  | {
      readonly kind: 'rows';
      readonly columns: readonly { readonly name: string; readonly type: TdsColumnType }[];
      readonly rows: readonly (readonly TdsCell[])[];
    }
  /** An ERROR token with a real SQL Server number and message. */
  | ({ readonly kind: 'error' } & SqlMessage)
  /** An INFO token (PRINT, warnings). */
  | ({ readonly kind: 'info' } & SqlMessage);

/** How the server answers one request. */
export interface TdsResponse {
  /** Wait this long before answering, in milliseconds; an ATTENTION cuts it short. */
  readonly delayMs?: number;
  /** After the delay, close the socket instead of answering (a dropped connection). */
  readonly drop?: boolean;
  /** What to answer (ignored with `drop`); none: one DONE without a count. */
  readonly results?: readonly TdsResult[];
}

/** Answers a request: a script, the table emulator, or both. */
export type TdsRequestHandler = (request: TdsRequest) => TdsResponse | Promise<TdsResponse>;
