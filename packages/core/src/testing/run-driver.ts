import type { Run } from '../domain/run.js';
import { DEFAULT_RUN_ATTEMPTS, DEFAULT_RUN_BACKOFF_MS, retryDelayMs, type InMemoryRuns } from '../memory/in-process-runs.js';
import type { ManualClock } from '../memory/system-clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { RunProcessor } from '../ports/run-processor.js';
import { RunLifecycle } from '../use-cases/run-lifecycle.js';

/** Options of {@link RunDriver}. */
export interface RunDriverOptions {
  /** The runs whose queue is drained (a core's `runs`, default `InMemoryRuns`). */
  readonly runs: InMemoryRuns;
  /** The processor under test. */
  readonly processor: RunProcessor;
  /** The clock the runs are stamped on; moved on by each backoff, never by real time. */
  readonly clock: ManualClock;
  /** Attempts per run; default 3, as the in-process worker. */
  readonly attempts?: number;
  /** First retry delay in ms, doubled per retry; default 1000, as the in-process worker. */
  readonly backoffMs?: number;
  /** Told when a run becomes final; default nobody. */
  readonly notifier?: Notifier;
}

/**
 * Drives queued runs through a processor the way the in-process worker does (core
 * `RunLifecycle`, the same attempts and doubling backoff), but one call at a time and on a
 * `ManualClock`: each backoff moves the clock on instead of waiting, so a test of a
 * processor's retries takes no real time and sees exact `updatedAt` values.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const core = createCore({ agents, clock }, { baseUrl });
 * await core.startRun.execute({ principal: inProcessPrincipal('acme'), agentId: 'a1', body: { message: 'hi' } });
 * const [run] = await new RunDriver({ runs: core.runs, processor: myProcessor, clock }).drain();
 * ```
 * Source: issue 12 "Testing kit"; docs/decisions.md "Run processors".
 */
export class RunDriver {
  private readonly lifecycle: RunLifecycle;
  private readonly attempts: number;
  private readonly backoffMs: number;

  /** @throws RangeError when `attempts` is not a whole number ≥ 1. */
  constructor(private readonly options: RunDriverOptions) {
    this.attempts = options.attempts ?? DEFAULT_RUN_ATTEMPTS;
    this.backoffMs = options.backoffMs ?? DEFAULT_RUN_BACKOFF_MS;
    if (!Number.isInteger(this.attempts) || this.attempts < 1) throw new RangeError('attempts must be a whole number ≥ 1');
    this.lifecycle = new RunLifecycle({
      store: options.runs.store,
      processor: options.processor,
      clock: options.clock,
      ...(options.notifier !== undefined ? { notifier: options.notifier } : {}),
    });
  }

  /**
   * Takes the oldest queued run and processes it until it is final or its attempts are
   * spent, moving the clock on by each backoff.
   * @returns the run as stored at the end, or `undefined` when no run was queued.
   */
  async next(): Promise<Run | undefined> {
    const runId = this.options.runs.queue.take();
    if (runId === undefined) return undefined;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.lifecycle.attempt(runId, { lastAttempt: attempt >= this.attempts, maxAttempts: this.attempts });
      if (outcome.kind !== 'retry') break;
      this.options.clock.advanceMs(retryDelayMs(this.backoffMs, attempt));
    }
    return this.options.runs.store.get(runId);
  }

  /** Runs {@link RunDriver.next} until no run is queued (runs queued meanwhile included). @returns the runs, in order. */
  async drain(): Promise<Run[]> {
    const done: Run[] = [];
    for (let run = await this.next(); run !== undefined; run = await this.next()) done.push(run);
    return done;
  }
}
