import type { Run } from '../domain/run.js';
import type { RateLimitRule } from '../domain/rate-limit.js';
import type { RateLimitCharge, RateLimitStore } from '../ports/rate-limit-store.js';
import type { InsertCommand, RecordWriter, UpdateCommand, WriteError, WriteOutcome } from '../ports/record-writer.js';
import type { Result } from '../domain/result.js';
import type { RunQueue } from '../ports/run-queue.js';
import type { RateLimitScope, Telemetry } from '../ports/telemetry.js';

/** The scope of a rule, from its key (`credential:…` or `agent:…`, core `rulesFor`). */
function scopeOf(rule: RateLimitRule): RateLimitScope {
  return rule.key.startsWith('agent:') ? 'agent' : 'credential';
}

/**
 * A {@link RateLimitStore} that tells {@link Telemetry.rateLimitDecision} what each charge
 * decided, per window: every window `allowed` when the request was charged; each full
 * window `refused` when it was not. Counts nothing itself: `inner` does.
 */
export class ObservedRateLimitStore implements RateLimitStore {
  constructor(
    private readonly inner: RateLimitStore,
    private readonly telemetry: Telemetry,
  ) {}

  /** See {@link RateLimitStore.chargeAll}; rejects as `inner` does (then nothing is counted). */
  chargeAll(rules: readonly RateLimitRule[]): Promise<RateLimitCharge> {
    // `then`, not an async frame: one promise fewer on every authenticated request.
    return this.inner.chargeAll(rules).then((charge) => {
      for (let i = 0; i < rules.length; i++) {
        const rule = rules[i] as RateLimitRule;
        if (charge.charged) this.telemetry.rateLimitDecision(scopeOf(rule), 'allowed');
        else if ((charge.windows[i]?.count ?? 0) >= rule.limit) this.telemetry.rateLimitDecision(scopeOf(rule), 'refused');
      }
      return charge;
    });
  }
}

/** A {@link RunQueue} that counts every run it accepted ({@link Telemetry.runStarted}). */
export class ObservedRunQueue implements RunQueue {
  constructor(
    private readonly inner: RunQueue,
    private readonly telemetry: Telemetry,
  ) {}

  /** See {@link RunQueue.enqueue}; a rejected enqueue promised nothing and is not counted. */
  enqueue(run: Run): Promise<void> {
    return this.inner.enqueue(run).then(() => this.telemetry.runStarted());
  }
}

/**
 * A {@link RecordWriter} that times every write and tells {@link Telemetry.recordWrite}
 * its connection, outcome (`ok`, the error code, or `error` when `inner` rejected) and
 * duration in seconds (`performance.now()`, monotonic).
 */
export class ObservedRecordWriter implements RecordWriter {
  constructor(
    private readonly inner: RecordWriter,
    private readonly telemetry: Telemetry,
  ) {}

  /** See {@link RecordWriter.insert}. */
  insert(command: InsertCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.observe(command.connection.connectionId, () => this.inner.insert(command));
  }

  /** See {@link RecordWriter.update}. */
  update(command: UpdateCommand): Promise<Result<WriteOutcome, WriteError>> {
    return this.observe(command.connection.connectionId, () => this.inner.update(command));
  }

  // A `then`, not an async frame (docs/ARCHITECTURE.md "Style to follow"): one promise
  // fewer a row write. A throw of `write` itself is a rejection, counted as `error`.
  private observe(connectionId: string, write: () => Promise<Result<WriteOutcome, WriteError>>): Promise<Result<WriteOutcome, WriteError>> {
    const started = performance.now();
    let written: Promise<Result<WriteOutcome, WriteError>>;
    try {
      written = write();
    } catch (error) {
      written = Promise.reject(error);
    }
    return written.then(
      (result) => {
        this.telemetry.recordWrite(connectionId, result.ok ? 'ok' : result.error.code, (performance.now() - started) / 1000);
        return result;
      },
      (error: unknown) => {
        this.telemetry.recordWrite(connectionId, 'error', (performance.now() - started) / 1000);
        throw error;
      },
    );
  }
}
