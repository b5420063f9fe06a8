import type { Page, PageRequest } from '../domain/page.js';
import type { Run, RunProgress, RunStatus, RunStatusChange } from '../domain/run.js';

/**
 * What {@link RunStore.transition} did: `applied` with the changed run, or not applied
 * with the run as it is (`undefined` when there is no run with that id).
 */
export type TransitionOutcome = { readonly applied: true; readonly run: Run } | { readonly applied: false; readonly run: Run | undefined };

/**
 * What {@link RunStore.requestCancel} did (core `cancelRequested`): `cancelled` — the run
 * was `queued` and this call made it `cancelled` (the caller notifies); `requested` — the
 * run is `running` with `cancelRequestedAt` set (by this call or an earlier one); `final`
 * — the run was already final and nothing changed; `missing` — no such run.
 */
export type CancelOutcome =
  | { readonly kind: 'cancelled' | 'requested' | 'final'; readonly run: Run }
  | { readonly kind: 'missing' };

/** Which runs of an account {@link RunStore.list} answers: all, or those matching every member given. */
export interface RunListFilter {
  /** Only the runs of this agent. */
  readonly agentId?: string;
  /** Only the runs whose status is this one when the page is read. */
  readonly status?: RunStatus;
}

/**
 * Holds runs and their statuses.
 *
 * Contract: `get` resolves `undefined` for an unknown id; `save` replaces the run with
 * the same `runId` (upsert). `transition` changes a run's status as one compare-and-set:
 * it applies only when the current status may move to the new one (core
 * `canTransition`, `domain/run.ts`), atomically with respect to every other
 * `transition` of that run. Final statuses have no way out, so of two workers racing to
 * finish the same run (a worker thought dead that was only slow) exactly one applies,
 * and only that one notifies (core `RunLifecycle`). `list` pages through one account's
 * runs newest first. Every status change (`save`, an applied `transition`, a
 * `requestCancel` that cancels) records its event in the run's event log, atomically with
 * the change, when the store is also a `RunEventLog` (both stores of this repository
 * are). Every call rejects only when the store is unreachable. The contract
 * suite is `runStoreContract` in `@svc/core/testing`.
 */
export interface RunStore {
  /** @returns the run, or `undefined` when there is none with that id. */
  get(runId: string): Promise<Run | undefined>;
  /** Stores the run, replacing any earlier version with the same `runId`. */
  save(run: Run): Promise<void>;
  /**
   * Applies `change` when the run's current status allows it: status `change.to`,
   * `updatedAt` `change.at`, one more attempt with `countAttempt`, `failureReason` set to
   * `change.failureReason` or removed (core `changed`). Nothing else of the run changes;
   * except that a run with `cancelRequestedAt` moved to `succeeded` or `failed` becomes
   * `cancelled`, without output or reason (core `statusAfter`), in the same atomic step.
   * @returns whether it applied, and the run after (or as found; `undefined` for an
   * unknown id, which creates nothing).
   */
  transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome>;
  /**
   * Asks for the run's cancel, atomically with respect to `transition` (core
   * `cancelRequested`): a `queued` run becomes `cancelled` at once (`updatedAt` and
   * `cancelRequestedAt` = `at`; its event `run.cancelled` is recorded with the change); a
   * `running` run gets `cancelRequestedAt` = `at` unless it has one, and stays `running`
   * (its worker sees it and stops the processor); a final run is left as it is.
   * Source: docs/CONTRACT.md "Runs lifecycle".
   * @returns what it did, and the run after (or as found).
   */
  requestCancel(runId: string, at: Date): Promise<CancelOutcome>;
  /**
   * Records `progress` as the run's `progress` (replacing the last), only while the run is
   * `running` (core `withProgress`), atomically with respect to `transition`. Nothing else
   * of the run changes, not even `updatedAt` (the time of the last status change).
   * @returns true when recorded; false for an unknown run or one not `running`.
   */
  reportProgress(runId: string, progress: RunProgress): Promise<boolean>;
  /**
   * One page of the runs of `accountId` that match `filter` (the run list,
   * `GET /api/v1/runs`), as `get` would answer them.
   *
   * Order: newest first — `createdAt` descending, runs of the same millisecond by `runId`
   * (core `runListKey`, compared as UTF-8 bytes). The position (`page.after`, `next`) is
   * a `runListKey`: the last run's on the page, or, when the store bounded its work, the
   * last one it examined. Any string is accepted as a position (a forged one just starts
   * the page at that place in the order); a run whose key is not after it is never
   * answered.
   *
   * What paging guarantees: the key of a run never changes, so following `next` from the
   * first page to the last never answers a run twice and never reorders; every run that
   * exists and matches from the first page to the last is answered once. A run created
   * meanwhile is answered only when it sorts after the current position (it usually does
   * not: it is the newest). `status` is matched when each page is read: a run whose status
   * changes between pages is answered on its page only when it matched then, and never
   * again. A run that expires meanwhile may be missing.
   *
   * A page may hold fewer than `page.limit` runs, even none, while `next` is present: a
   * store may bound the work of one call (adapter-queue's Redis store examines at most
   * a fixed number of entries). Follow `next` until it is absent. Another account's runs
   * are never answered, whatever the filter or position.
   *
   * @returns at most `page.limit` runs; `next` only when more may follow.
   */
  list(accountId: string, filter: RunListFilter, page: PageRequest): Promise<Page<Run>>;
}
