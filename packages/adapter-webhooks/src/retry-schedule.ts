/**
 * Delays in milliseconds before the 2nd, 3rd, … attempt of a webhook delivery: 5 s, 5 min,
 * 30 min, 2 h, 5 h, then the last one (10 h) again and again. Source: docs/CONTRACT.md
 * "Runs lifecycle" (webhooks); config `webhooks.retry_schedule_ms`.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];

/** How long after its event a delivery is still attempted: 72 h, in milliseconds (docs/CONTRACT.md "Runs lifecycle"). */
export const DEFAULT_MAX_DELIVERY_AGE_MS = 72 * 3_600_000;

/** Timeout of one attempt, in milliseconds: success is a 2xx within 15 s (docs/CONTRACT.md "Runs lifecycle"). */
export const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * The delay in ms before attempt `attemptsMade + 1`, after `attemptsMade` (≥ 1) failed
 * ones: the schedule's entry `attemptsMade - 1`, its last entry past its end.
 * @param schedule - non-empty list of delays in ms.
 */
export function retryDelayMs(schedule: readonly number[], attemptsMade: number): number {
  const index = Math.min(Math.max(attemptsMade, 1), schedule.length) - 1;
  return schedule[index] ?? DEFAULT_RETRY_SCHEDULE_MS[0]!;
}
