/**
 * `@svc/adapter-sqlserver/testing`: test support, not part of the main entry. A scripted
 * TDS 7.4 server on loopback that tedious (and so the SQL Server writer, or the whole
 * API server) can talk to, with a stateful table emulator as its default handler.
 */
export {
  TdsServer,
  SP_EXECUTESQL_ID,
  loginFailed,
  requireLogin,
  type TdsConnectionInfo,
  type TdsLogin,
  type TdsLoginHandler,
  type TdsLoginResponse,
  type TdsParameter,
  type TdsRequest,
  type TdsRequestHandler,
  type TdsResponse,
  type TdsResult,
  type TdsServerOptions,
} from './tds-server.js';
export {
  TableEmulator,
  sqlServerErrors,
  type EmulatedColumn,
  type EmulatedColumnType,
  type EmulatedEntity,
  type EmulatedRow,
  type EmulatedValue,
} from './table-emulator.js';
export type { SqlMessage, TdsCell, TdsColumnType, TdsValue } from './tds-protocol.js';
