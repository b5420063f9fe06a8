/**
 * A typed outcome: the value of a success, or the error of an expected failure.
 *
 * Use cases return expected outcomes (bad input, not found, rate limited, ...) as a
 * `Result`, so their signatures list what they can produce; only bugs and lost
 * infrastructure are thrown. Source: docs/ARCHITECTURE.md "Rules".
 *
 * @typeParam T - the success value.
 * @typeParam E - the error value.
 */
export type Result<T, E> = Ok<T> | Err<E>;

/** A success carrying `value`. */
export interface Ok<T> {
  readonly ok: true;
  readonly value: T;
}

/** An expected failure carrying `error`. */
export interface Err<E> {
  readonly ok: false;
  readonly error: E;
}

/** Builds a success. */
export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

/** Builds an expected failure. */
export function err<E>(error: E): Err<E> {
  return { ok: false, error };
}
