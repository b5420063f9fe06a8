import type { InsertCommand, RecordWriter, Result, UpdateCommand, WriteError, WriteOutcome } from '@svc/core';

/**
 * Sends each write to the writer of its connection: configured SQL Server connections
 * to the SQL Server writer, connections without database details (development) to the
 * in-memory demo tables.
 */
export class RoutingRecordWriter implements RecordWriter {
  /**
   * @param emulated - ids of the connections served by `demo`.
   * @param sqlServer - writer of every other connection.
   * @param demo - in-memory writer.
   */
  constructor(
    private readonly emulated: ReadonlySet<string>,
    private readonly sqlServer: RecordWriter,
    private readonly demo: RecordWriter,
  ) {}

  private pick(connectionId: string): RecordWriter {
    return this.emulated.has(connectionId) ? this.demo : this.sqlServer;
  }

  insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.pick(command.connection.connectionId).insert(command);
  }

  update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.pick(command.connection.connectionId).update(command);
  }

  /** Closes the SQL Server pools (the demo tables hold nothing to close). */
  async close(): Promise<void> {
    await (this.sqlServer as { close?(): Promise<void> }).close?.();
  }
}
