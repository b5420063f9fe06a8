import type { Run, RunStatus } from './run.js';

/**
 * Types of a run's events, one per status it reaches: the SSE event names of
 * `GET /api/v1/runs/{run_id}/events` and the `type` of a webhook delivery.
 * Source: docs/CONTRACT.md "Runs lifecycle".
 */
export const RUN_EVENT_TYPES = ['run.queued', 'run.running', 'run.succeeded', 'run.failed', 'run.cancelled'] as const;

/** One run event type. See {@link RUN_EVENT_TYPES}. */
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/**
 * The event types of final statuses: the events a webhook endpoint gets when it names
 * none (docs/CONTRACT.md "Runs lifecycle", webhooks), and after which an event stream closes.
 */
export const FINAL_RUN_EVENT_TYPES: readonly RunEventType[] = ['run.succeeded', 'run.failed', 'run.cancelled'];

/** The event type of a run reaching `status`: `run.<status>`. */
export function runEventTypeOf(status: RunStatus): RunEventType {
  return `run.${status}`;
}

/** True when `value` is one of {@link RUN_EVENT_TYPES}. */
export function isRunEventType(value: unknown): value is RunEventType {
  return typeof value === 'string' && (RUN_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * One status change of a run, as the events stream and webhooks tell it: the run as of
 * that change (`run.status` is the type's status), and when it happened (`at`, the run's
 * `updatedAt` then). Source: docs/CONTRACT.md "Runs lifecycle".
 */
export interface RunEvent {
  /**
   * The event's id: opaque, increasing within the run (the SSE `id`, given back as
   * `Last-Event-ID`). In memory a counter; in Redis the stream entry id.
   * Source: docs/decisions.md "Cancel and run events".
   */
  readonly id: string;
  /** `run.<status>` of {@link RunEvent.run}. */
  readonly type: RunEventType;
  /** When the change happened. */
  readonly at: Date;
  /** The run as of this event. */
  readonly run: Run;
}

/** True when `type` is one of {@link FINAL_RUN_EVENT_TYPES}: the last event of a run, after which an events stream closes. */
export function isFinalRunEventType(type: RunEventType): boolean {
  return FINAL_RUN_EVENT_TYPES.includes(type);
}
