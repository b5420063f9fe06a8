/**
 * The scripted TDS server of `@svc/tds-server` in its own process (so it
 * shares a core with neither the load generator nor the API server), with the bench's
 * table `dbo.bench_rows` in its table emulator. Prints one JSON line, `{"port": N}`,
 * once it listens; stops on SIGTERM.
 */
import { TdsServer } from '@svc/tds-server';
import { INSERT_TABLE } from '../fixtures.js';

const entity = `${INSERT_TABLE.schema}.${INSERT_TABLE.table}`;
const defineTable = (s: TdsServer) =>
  s.emulator.defineTable(entity, [
    { name: 'sku', type: 'nvarchar' },
    { name: 'qty', type: 'int' },
    { name: 'note', type: 'nvarchar' },
  ]);

const server = await TdsServer.start({ host: '127.0.0.1' });
defineTable(server);
// The server records every request and the emulator keeps every row: under load both
// would grow for nothing, and their growth would slow the floor the API is compared to.
let seen = 0;
server.on('request', () => {
  if (++seen % 1000 !== 0) return;
  server.requests.splice(0);
  defineTable(server);
});
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.once('SIGTERM', () => {
  void server.close().finally(() => process.exit(0));
});
