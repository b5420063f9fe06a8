/**
 * `@svc/example-testing-with-fakes`: a small piece of an embedding service, and (in
 * `test/`) its tests written against the fakes of `@svc/core/testing`.
 */
import { ok, type DomainError, type InsertRecord, type Principal, type RateLimitPolicy, type RecordWriteErrorCode, type Result } from '@svc/core';

/** The table orders are written to. */
export const ORDERS_TABLE = 'dbo.orders';

/** An order, as the embedding service knows it. */
export interface Order {
  readonly id: number;
  readonly sku: string;
  readonly quantity: number;
  readonly paid: boolean;
  /** Free text; `null` when there is none. */
  readonly note: string | null;
}

/**
 * Writes orders as rows of {@link ORDERS_TABLE} on a customer's connection, through the
 * core's {@link InsertRecord} use case (so the core's rules apply: validation, account
 * visibility, writable connection types, rate limits).
 */
export class OrderRecorder {
  /**
   * @param insertRecord - the core's use case, wired with whatever writer the service uses.
   * @param connectionId - the customer's connection the orders go to.
   * @param rateLimits - the core's rate-limit policy each call is charged by.
   */
  constructor(
    private readonly insertRecord: InsertRecord,
    private readonly connectionId: string,
    private readonly rateLimits: Pick<RateLimitPolicy, 'meterFor'>,
  ) {}

  /**
   * Records one order on behalf of `principal`.
   * @returns nothing on success, or the core's error (its `detail` is safe to show).
   */
  async record(principal: Principal, order: Order): Promise<Result<void, DomainError<RecordWriteErrorCode>>> {
    const result = await this.insertRecord.execute({
      principal,
      meter: this.rateLimits.meterFor(principal),
      connectionId: this.connectionId,
      body: {
        entity: ORDERS_TABLE,
        values: { id: order.id, sku: order.sku, qty: order.quantity, paid: order.paid, note: order.note },
      },
      route: 'default',
    });
    return result.ok ? ok(undefined) : result;
  }
}
export { Summarizer, type SummaryModel } from './summarizer.js';
