/**
 * `@svc/tds-server`: a scripted TDS 7.4 server on loopback that tedious (and so the SQL
 * Server writer, or the whole API server) can talk to, with a stateful table emulator as
 * its default handler. A private tool for tests and the bench; no package ships it.
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
  type TdsServerOptions,
} from './tds-server.js';
export type { TdsParameter, TdsRequest, TdsRequestHandler, TdsResponse, TdsResult } from './tds-exchange.js';
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
