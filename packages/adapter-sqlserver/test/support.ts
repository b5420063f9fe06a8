import type { Connection } from '@svc/core';
import { SqlServerRecordWriter, type SqlServerConnectionSettings, type SqlServerRecordWriterSettings } from '@svc/adapter-sqlserver';
import type { TdsServer } from '@svc/tds-server';

/** The connection every test writes to. */
export const CONNECTION_ID = '3f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11';
/** A second connection, for per-connection pools. */
export const OTHER_CONNECTION_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

/** Distinctive secrets, so a test can prove they never reach a detail or a log line. */
export const USER = 'svc_writer_user';
export const PASSWORD = 'Secret-Passw0rd!';

/** A `sqlserver` connection with this id. */
export function aSqlServerConnection(connectionId = CONNECTION_ID): Connection {
  return { connectionId, accountId: 'acct_a', type: 'sqlserver' };
}

/** Settings reaching the scripted server on `port`. */
export function settingsFor(port: number, overrides: Partial<SqlServerConnectionSettings> = {}): SqlServerConnectionSettings {
  return { host: '127.0.0.1', port, database: 'orders_db', user: USER, password: PASSWORD, encrypt: false, trustServerCertificate: true, ...overrides };
}

export { RecordingLogger } from '@svc/core/testing';

/**
 * Writers made by a test, closed after it: `make(server, settings)` gives a writer
 * whose only connection is {@link CONNECTION_ID} on `server`.
 */
export class Writers {
  private readonly made: SqlServerRecordWriter[] = [];

  make(server: TdsServer, settings: Partial<SqlServerRecordWriterSettings> = {}): SqlServerRecordWriter {
    const writer = new SqlServerRecordWriter({ connections: { [CONNECTION_ID]: settingsFor(server.port) }, ...settings });
    this.made.push(writer);
    return writer;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.made.splice(0).map((w) => w.close()));
  }
}
