import type { FinishedRunStatus, RateLimitOutcome, RateLimitScope, RecordWriteOutcome, Telemetry, WebhookAttemptResult, WebhookDeliveryOutcome } from '../ports/telemetry.js';

/**
 * A {@link Telemetry} that keeps what it is told (a fake with state, not a mock): counts
 * by label set, and every duration. Keys join the labels with `|`, e.g.
 * `requests.get('startRun|202')`, `rateLimitDecisions.get('agent|refused')`.
 */
export class RecordingTelemetry implements Telemetry {
  /** `operation|status` → requests answered. */
  readonly requests = new Map<string, number>();
  /** `scope|outcome` → decisions. */
  readonly rateLimitDecisions = new Map<string, number>();
  /** Runs accepted. */
  runsStarted = 0;
  /** Final status → runs finished. */
  readonly runsFinished = new Map<FinishedRunStatus, number>();
  /** Queue waits reported, in seconds, in order. */
  readonly waits: number[] = [];
  /** `connectionId|outcome` → row writes. */
  readonly writes = new Map<string, number>();
  /** Every duration reported by `requestFinished` and `recordWrite`, in seconds. */
  readonly durations: number[] = [];
  /** Result → webhook attempts. */
  readonly webhookAttempts = new Map<WebhookAttemptResult, number>();
  /** Outcome → webhook deliveries ended. */
  readonly webhookDeliveries = new Map<WebhookDeliveryOutcome, number>();

  requestFinished(operation: string, status: number, durationSeconds: number): void {
    bump(this.requests, `${operation}|${status}`);
    this.durations.push(durationSeconds);
  }

  rateLimitDecision(scope: RateLimitScope, outcome: RateLimitOutcome): void {
    bump(this.rateLimitDecisions, `${scope}|${outcome}`);
  }

  runStarted(): void {
    this.runsStarted += 1;
  }

  runFinished(status: FinishedRunStatus): void {
    bump(this.runsFinished, status);
  }

  runWaited(waitSeconds: number): void {
    this.waits.push(waitSeconds);
  }

  recordWrite(connectionId: string, outcome: RecordWriteOutcome, durationSeconds: number): void {
    bump(this.writes, `${connectionId}|${outcome}`);
    this.durations.push(durationSeconds);
  }

  webhookAttempt(result: WebhookAttemptResult): void {
    bump(this.webhookAttempts, result);
  }

  webhookDelivery(outcome: WebhookDeliveryOutcome): void {
    bump(this.webhookDeliveries, outcome);
  }
}

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
