import { domainError, type DomainError } from '../domain/errors.js';
import { MAX_RESOURCE_ID_LENGTH } from '../domain/limits.js';
import type { Principal } from '../domain/principal.js';
import { err, ok, type Result } from '../domain/result.js';
import { isFinalRunEventType, type RunEvent, type RunEventType } from '../domain/run-event.js';
import type { RunEventLog } from '../ports/run-event-log.js';
import type { RunStore } from '../ports/run-store.js';
import { UNMETERED, type RequestMeter } from './rate-limit-policy.js';
import { viewOf, type RunView } from './run-view.js';

/** Input of {@link StreamRunEvents}. */
export interface StreamRunEventsInput {
  /** The authenticated caller (API key, or OAuth token with `runs:read`). */
  readonly principal: Principal;
  /** This call's rate-limit charge: charged once, when the stream opens; default `UNMETERED`. */
  readonly meter?: RequestMeter;
  /** `run_id` from the path. */
  readonly runId: string;
  /** The `Last-Event-ID` header: resume after that event (unknown: from the first). */
  readonly lastEventId?: string;
}

/** Codes {@link StreamRunEvents} can produce. */
export type StreamRunEventsErrorCode = 'not_found' | 'rate_limited';

/** One event as the stream sends it: SSE `id`, `event` and `data` (the run view, not wrapped). */
export interface RunEventView {
  readonly id: string;
  readonly type: RunEventType;
  readonly data: RunView;
}

/**
 * An open events stream: the events already recorded after `Last-Event-ID`, then the
 * live ones. Source: docs/CONTRACT.md "Runs lifecycle".
 */
export interface RunEventStream {
  /** The events recorded when the stream opened (after `Last-Event-ID`), oldest first. */
  readonly history: readonly RunEventView[];
  /** True when the run's final event is in `history` or was before `Last-Event-ID`: nothing follows. */
  readonly ended: boolean;
  /**
   * The events recorded after `history`, as they come, until the final one (included) or
   * `signal` aborts. Holds a watch on the run's event log while iterated, released when
   * the iteration ends, however it ends.
   * @throws DependencyUnavailableError when the store is lost meanwhile (the client resumes with `Last-Event-ID`).
   */
  follow(signal: AbortSignal): AsyncGenerator<RunEventView, void, undefined>;
}

/**
 * Opens a run's events stream: `GET /api/v1/runs/{run_id}/events`. Another account's run
 * answers `not_found` exactly like a missing one (docs/CONTRACT.md "Isolation between
 * accounts"); charged once when it opens, like `GetRun`. Everything that can fail before
 * the first byte (the charge, the run, the history) is read in `execute`, so that a lost
 * store answers 503 instead of an empty stream.
 * Source: docs/CONTRACT.md "Runs lifecycle"; docs/decisions.md "Cancel and run events".
 */
export class StreamRunEvents {
  constructor(
    private readonly runs: RunStore,
    private readonly log: RunEventLog,
    private readonly settings: { readonly baseUrl: string },
  ) {}

  /**
   * @returns the open stream, or an error with its code.
   * @throws DependencyUnavailableError when the run store is unreachable (HTTP 503).
   */
  async execute(input: StreamRunEventsInput): Promise<Result<RunEventStream, DomainError<StreamRunEventsErrorCode>>> {
    const refused = await (input.meter ?? UNMETERED).charge();
    if (refused !== undefined) return err(refused);
    const run = input.runId.length <= MAX_RESOURCE_ID_LENGTH ? await this.runs.get(input.runId) : undefined;
    if (run === undefined || run.accountId !== input.principal.accountId) return err(domainError('not_found', 'The run was not found.'));
    const all = await this.log.events(input.runId);
    const at = input.lastEventId === undefined ? -1 : all.findIndex((e) => e.id === input.lastEventId);
    const resumedAfterEnd = at >= 0 && isFinalRunEventType((all[at] as RunEvent).type);
    const history: RunEventView[] = [];
    let ended = resumedAfterEnd;
    if (!resumedAfterEnd) {
      for (const event of all.slice(at + 1)) {
        history.push(this.view(event));
        if (isFinalRunEventType(event.type)) {
          ended = true;
          break;
        }
      }
    }
    const lastId = history[history.length - 1]?.id ?? (at >= 0 ? input.lastEventId : undefined);
    return ok({ history, ended, follow: (signal) => this.follow(input.runId, lastId, signal) });
  }

  private async *follow(runId: string, afterId: string | undefined, signal: AbortSignal): AsyncGenerator<RunEventView, void, undefined> {
    let last = afterId;
    let poked = true;
    let failure: unknown;
    let wake: (() => void) | undefined;
    const onAbort = (): void => wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    const unwatch = this.log.watch(runId, (error) => {
      if (error !== undefined) failure = error;
      poked = true;
      wake?.();
    });
    try {
      while (!signal.aborted) {
        if (failure !== undefined) throw failure;
        if (!poked) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        poked = false;
        // Read after the watch is set, so that nothing recorded in between is missed.
        const events = await this.log.events(runId, last);
        // Told of a change with nothing to read: the run may be gone (evicted at once, with
        // retention 0, or deleted); a stream of a run that is gone ends, it never waits on.
        if (events.length === 0 && (await this.runs.get(runId)) === undefined) return;
        for (const event of events) {
          if (signal.aborted) return;
          last = event.id;
          yield this.view(event);
          if (isFinalRunEventType(event.type)) return;
        }
      }
    } finally {
      unwatch();
      signal.removeEventListener('abort', onAbort);
    }
  }

  private view(event: RunEvent): RunEventView {
    return { id: event.id, type: event.type, data: viewOf(event.run, this.settings.baseUrl) };
  }
}
