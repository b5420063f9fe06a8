import { recordWriterContract } from '@svc/core/testing';
import { SqlServerRecordWriter } from '@svc/adapter-sqlserver';
import { TdsServer, type EmulatedRow } from '@svc/tds-server';
import { aSqlServerConnection, CONNECTION_ID, settingsFor } from './support.js';

// The writer passes the same suite as the in-memory fake (docs/ARCHITECTURE.md "Style to
// follow"), here against the scripted server's table emulator over real TDS; the same
// suite runs against a real SQL Server in real-sqlserver.test.ts.
recordWriterContract('SqlServerRecordWriter on the scripted TDS server', async () => {
  const server = await TdsServer.start();
  const writer = new SqlServerRecordWriter({ connections: { [CONNECTION_ID]: settingsFor(server.port) } });
  return {
    writer,
    connection: aSqlServerConnection(),
    givenTable: (entity, rows) =>
      Promise.resolve(
        server.emulator.defineTable(
          entity,
          [
            { name: 'id', type: 'int' },
            { name: 'name', type: 'nvarchar' },
            { name: 'qty', type: 'int' },
          ],
          // The contract's rows hold plain JSON scalars, never an ExactNumber.
          rows as readonly EmulatedRow[],
        ),
      ),
    rowsOf: (entity) => Promise.resolve(server.emulator.rowsOf(entity) ?? []),
    close: async () => {
      await writer.close();
      await server.close();
    },
  };
});
