import { expect } from 'chai';
import type { Result } from '@svc/core';

/**
 * The value of a success; fails the test (showing the error) when `result` is a failure.
 */
export function valueOf<T, E>(result: Result<T, E>): T {
  if (!result.ok) expect.fail(`expected a success, got ${JSON.stringify(result.error)}`);
  return result.value;
}

/**
 * The error of a failure; fails the test (showing the value) when `result` is a success.
 */
export function errorOf<T, E>(result: Result<T, E>): E {
  if (result.ok) expect.fail(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.error;
}
