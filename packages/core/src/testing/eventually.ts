import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `condition` until it holds or `timeoutMs` pass: how tests wait for something
 * another process or socket does (a connection closing), instead of sleeping a guessed
 * time.
 *
 * @param condition - checked at once, then every `intervalMs` milliseconds.
 * @param timeoutMs - deadline in milliseconds (default 10000 ms).
 * @param intervalMs - polling interval in milliseconds (default 5 ms).
 * @throws Error naming `what` when the deadline passes.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what = 'condition',
  timeoutMs = 10_000,
  intervalMs = 5,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(intervalMs);
  }
}
