/** Tells the time. Injected so that tests control windows and expiry. */
export interface Clock {
  /** The current instant. */
  now(): Date;
}
