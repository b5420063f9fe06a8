import type { Clock } from '../ports/clock.js';

/** The real time. */
export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }
}

/** A clock that stands still until told to move; for tests and simulations. */
export class ManualClock implements Clock {
  private ms: number;

  /** @param start - the initial instant (default 2026-01-01T00:00:00Z). */
  constructor(start: Date = new Date('2026-01-01T00:00:00Z')) {
    this.ms = start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** Moves the clock forward by `seconds` (may be fractional). */
  advanceSeconds(seconds: number): void {
    this.ms += seconds * 1000;
  }
}
