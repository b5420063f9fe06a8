import type { SqlServerPoolStats } from '@svc/adapter-sqlserver';
import type { InsertCommand, RecordWriter, Result, UpdateCommand, WriteError, WriteOutcome } from '@svc/core';

/**
 * Sends each write to the writer of its connection: configured SQL Server connections
 * to the SQL Server writer, connections without database details (development) to the
 * in-memory demo tables.
 */
export class RoutingRecordWriter implements RecordWriter {
  /**
   * @param emulated - ids of the connections served by `demo`.
   * @param sqlServer - writer of every other connection; absent when none is configured.
   * @param demo - in-memory writer.
   */
  constructor(
    private readonly emulated: ReadonlySet<string>,
    private readonly sqlServer: RecordWriter | undefined,
    private readonly demo: RecordWriter,
  ) {}

  private pick(connectionId: string): RecordWriter {
    if (this.emulated.has(connectionId)) return this.demo;
    // Only configured sqlserver connections reach here, and each has a writer: a bug if not.
    if (this.sqlServer === undefined) throw new Error(`no SQL Server writer for connection ${connectionId}`);
    return this.sqlServer;
  }

  insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.pick(command.connection.connectionId).insert(command);
  }

  update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.pick(command.connection.connectionId).update(command);
  }

  /** The SQL Server writer's pools (adapter-sqlserver `poolStats`); none without one. */
  poolStats(): readonly SqlServerPoolStats[] {
    return (this.sqlServer as { poolStats?(): readonly SqlServerPoolStats[] } | undefined)?.poolStats?.() ?? [];
  }

  /** Closes the SQL Server pools (the demo tables hold nothing to close). */
  async close(): Promise<void> {
    await (this.sqlServer as { close?(): Promise<void> } | undefined)?.close?.();
  }
}
