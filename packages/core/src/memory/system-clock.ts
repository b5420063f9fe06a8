import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Clock } from '../ports/clock.js';

/** The real time; `sleep` is a Node timer. */
export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }

  /** See {@link Clock.sleep}. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepFor(Math.max(0, ms), undefined, signal !== undefined ? { signal } : {});
  }
}

interface Sleeper {
  readonly at: number;
  readonly wake: () => void;
}

/**
 * A clock that stands still until told to move, for tests and simulations: `sleep`
 * resolves only when {@link ManualClock.advanceMs} (or `advanceSeconds`) moves the clock
 * to or past its end, so a worker's backoff takes no real time.
 */
export class ManualClock implements Clock {
  private ms: number;
  private sleepers: Sleeper[] = [];

  /** @param start - the initial instant (default 2026-01-01T00:00:00Z). */
  constructor(start: Date = new Date('2026-01-01T00:00:00Z')) {
    this.ms = start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** See {@link Clock.sleep}: resolves when the clock is moved `ms` milliseconds on. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason as Error);
      };
      const sleeper: Sleeper = {
        at: this.ms + ms,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** Moves the clock forward by `ms` milliseconds and wakes every sleep that ends by then. */
  advanceMs(ms: number): void {
    this.ms += ms;
    const due = this.sleepers.filter((s) => s.at <= this.ms);
    this.sleepers = this.sleepers.filter((s) => s.at > this.ms);
    for (const s of due) s.wake();
  }

  /** Moves the clock forward by `seconds` (may be fractional); see {@link ManualClock.advanceMs}. */
  advanceSeconds(seconds: number): void {
    this.advanceMs(seconds * 1000);
  }

  /** The instant the earliest pending `sleep` ends, or `undefined` when none is pending. */
  nextWakeAt(): Date | undefined {
    if (this.sleepers.length === 0) return undefined;
    return new Date(Math.min(...this.sleepers.map((s) => s.at)));
  }

  /** How many `sleep` calls are pending. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }
}
