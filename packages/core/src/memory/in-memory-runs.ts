import type { Page, PageRequest } from '../domain/page.js';
import { runEventTypeOf, type RunEvent } from '../domain/run-event.js';
import { cancelRequested, canTransition, changed, compareRunListKeys, FINAL_RUN_STATUSES, runListKey, withProgress, type Run, type RunProgress, type RunStatusChange } from '../domain/run.js';
import type { Clock } from '../ports/clock.js';
import type { RunQueue } from '../ports/run-queue.js';
import type { RunEventListener, RunEventLog } from '../ports/run-event-log.js';
import type { CancelOutcome, RunListFilter, RunStore, TransitionOutcome } from '../ports/run-store.js';
import { SystemClock } from './system-clock.js';

/**
 * Default of {@link InMemoryRunStoreOptions.retentionSeconds} and of the API server's
 * `runs.retention_seconds`: 7 days.
 */
export const DEFAULT_RUN_RETENTION_SECONDS = 7 * 24 * 3600;

/**
 * Default of {@link InMemoryRunStoreOptions.maxFinishedRuns}: 10,000 runs, about 18 MB of heap
 * (measured: ~1.8 KB a finished run started with one file reference and a message).
 */
export const DEFAULT_IN_MEMORY_MAX_FINISHED_RUNS = 10_000;

/**
 * A run held by {@link InMemoryRunStore}, with the events of its status changes. The first
 * event is kept as the run it was saved as and its id, and made into a {@link RunEvent}
 * when read: most held runs (queued, or never watched) never have their events read, and
 * an event object, its id string and an array cost each ~80 bytes of heap and a few
 * hundred instructions a run start (bench/BENCHMARKS.md).
 */
interface HeldRun {
  run: Run;
  /** The run as first saved: the first event's `run` (runs are immutable values). */
  readonly first: Run;
  /** The first event's id. */
  readonly firstId: number;
  /** The events after the first, oldest first; `undefined` until there is one. */
  later: RunEvent[] | undefined;
}

/** The events of `held`, oldest first. */
function eventsOf(held: HeldRun): RunEvent[] {
  const { first } = held;
  const events: RunEvent[] = [{ id: String(held.firstId), type: runEventTypeOf(first.status), at: first.updatedAt, run: first }];
  if (held.later !== undefined) events.push(...held.later);
  return events;
}

/** Bounds of an {@link InMemoryRunStore}. */
export interface InMemoryRunStoreOptions {
  /**
   * Seconds a finished run (`succeeded`, `failed`, `cancelled`) stays readable after it
   * was saved finished (measured on `clock`, not on the run's own `updatedAt`, which a
   * caller may set to any instant); then `get` answers `undefined` (404 at `status_url`).
   * Default {@link DEFAULT_RUN_RETENTION_SECONDS}; `Infinity` keeps them.
   */
  readonly retentionSeconds?: number;
  /**
   * Most finished runs kept; past it the one that finished first is dropped.
   * Default {@link DEFAULT_IN_MEMORY_MAX_FINISHED_RUNS}; `Infinity` for no cap.
   */
  readonly maxFinishedRuns?: number;
  /** The clock retention is measured on; default the system clock. */
  readonly clock?: Clock;
}

/**
 * Runs held in one process's memory. Embedded default and fake.
 *
 * Bounded (docs/CONTRACT.md "Dependencies and faults": the in-memory default must not grow without
 * limit under load): a run that is not final is always kept (it is owed an answer), while
 * finished runs expire `retentionSeconds` after they finished and, past
 * `maxFinishedRuns`, the one that finished first is dropped. Both are checked on every
 * `save` and `get`, at O(1) amortised cost and without timers: finished runs are kept in
 * the order they finished, so the oldest is always first.
 *
 * `transition` reads, checks and writes in one synchronous step, so no other call can
 * come in between: it is a true compare-and-set within the process, whatever the number
 * of workers (an in-process worker of core's {@link InMemoryRunQueue} plugs on directly).
 */
export class InMemoryRunStore implements RunStore, RunEventLog {
  /**
   * Each held run with its events (core `RunEventLog`), dropped together: one map, so a
   * run start costs one lookup and one insert in it (it was two maps, three operations).
   */
  private readonly byId = new Map<string, HeldRun>();
  /** Listeners of {@link InMemoryRunStore.watch}, by run id; a run's set is dropped when empty. */
  private readonly listeners = new Map<string, Set<RunEventListener>>();
  /** Ids of events: one counter for the store, so ids increase within each run. */
  private lastEventId = 0;
  /** Finished run ids → when they finished (ms since the epoch), in finishing order. */
  private readonly finished = new Map<string, number>();
  private readonly retentionMs: number;
  private readonly maxFinished: number;
  private readonly clock: Clock;

  /** @throws RangeError when a bound is not a number ≥ 0. */
  constructor(options: InMemoryRunStoreOptions = {}) {
    const retentionSeconds = options.retentionSeconds ?? DEFAULT_RUN_RETENTION_SECONDS;
    const maxFinished = options.maxFinishedRuns ?? DEFAULT_IN_MEMORY_MAX_FINISHED_RUNS;
    if (!(retentionSeconds >= 0) || !(maxFinished >= 0)) throw new RangeError('retentionSeconds and maxFinishedRuns must be numbers ≥ 0');
    this.retentionMs = retentionSeconds * 1000;
    this.maxFinished = maxFinished;
    this.clock = options.clock ?? new SystemClock();
  }

  get(runId: string): Promise<Run | undefined> {
    this.evict();
    return Promise.resolve(this.byId.get(runId)?.run);
  }

  /** See {@link RunStore.save}: also records the event of the run's status. Never rejects. */
  save(run: Run): Promise<void> {
    this.put(run);
    return Promise.resolve();
  }

  /** See {@link RunStore.requestCancel} (core `cancelRequested`); never rejects. */
  requestCancel(runId: string, at: Date): Promise<CancelOutcome> {
    this.evict();
    const held = this.byId.get(runId);
    if (held === undefined) return Promise.resolve({ kind: 'missing' });
    const run = held.run;
    const next = cancelRequested(run, at);
    if (next === undefined) return Promise.resolve({ kind: 'final', run });
    if (next.status === 'cancelled') {
      this.put(next);
      return Promise.resolve({ kind: 'cancelled', run: next });
    }
    held.run = next;
    return Promise.resolve({ kind: 'requested', run: next });
  }

  /** See {@link RunEventLog.events}; never rejects. */
  events(runId: string, afterId?: string): Promise<readonly RunEvent[]> {
    this.evict();
    const held = this.byId.get(runId);
    const events = held === undefined ? [] : eventsOf(held);
    const at = afterId === undefined ? -1 : events.findIndex((e) => e.id === afterId);
    return Promise.resolve(events.slice(at + 1));
  }

  /** See {@link RunEventLog.watch}: told synchronously, right after each event is recorded. */
  watch(runId: string, listener: RunEventListener): () => void {
    let set = this.listeners.get(runId);
    if (set === undefined) this.listeners.set(runId, (set = new Set()));
    // A wrapper, so that one listener watching twice is two watches.
    const watcher: RunEventListener = (error) => listener(error);
    set.add(watcher);
    return () => {
      const current = this.listeners.get(runId);
      if (current === undefined) return;
      current.delete(watcher);
      if (current.size === 0) this.listeners.delete(runId);
    };
  }

  /** How many listeners are watching runs now (for leak tests). */
  get watcherCount(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  /** See {@link RunStore.transition}; never rejects. */
  transition(runId: string, change: RunStatusChange): Promise<TransitionOutcome> {
    this.evict();
    const run = this.byId.get(runId)?.run;
    if (run === undefined || !canTransition(run.status, change.to)) return Promise.resolve({ applied: false, run });
    const next = changed(run, change);
    this.put(next);
    return Promise.resolve({ applied: true, run: next });
  }

  /** See {@link RunStore.reportProgress}; never rejects. */
  reportProgress(runId: string, progress: RunProgress): Promise<boolean> {
    const held = this.byId.get(runId);
    const next = held === undefined ? undefined : withProgress(held.run, progress);
    if (held === undefined || next === undefined) return Promise.resolve(false);
    held.run = next;
    return Promise.resolve(true);
  }

  /**
   * See {@link RunStore.list}; never rejects. Reads every held run of the account (at
   * most `maxFinishedRuns` finished ones plus those not final), so a page costs
   * O(n log n) in them; always a full page while more match.
   */
  list(accountId: string, filter: RunListFilter, page: PageRequest): Promise<Page<Run>> {
    this.evict();
    const after = page.after;
    const matching: { readonly key: string; readonly run: Run }[] = [];
    for (const { run } of this.byId.values()) {
      if (run.accountId !== accountId) continue;
      if (filter.agentId !== undefined && run.agentId !== filter.agentId) continue;
      if (filter.status !== undefined && run.status !== filter.status) continue;
      const key = runListKey(run);
      if (after === undefined || compareRunListKeys(key, after) > 0) matching.push({ key, run });
    }
    matching.sort((a, b) => compareRunListKeys(a.key, b.key));
    const items = matching.slice(0, page.limit);
    const last = items[items.length - 1];
    return Promise.resolve(matching.length > page.limit && last !== undefined ? { items: items.map((m) => m.run), next: last.key } : { items: items.map((m) => m.run) });
  }

  /** True when a run with this id is held (not expired nor evicted yet). */
  has(runId: string): boolean {
    return this.byId.has(runId);
  }

  /** Every stored run, oldest first (for tests and diagnostics). */
  all(): readonly Run[] {
    this.evict();
    return [...this.byId.values()].map((held) => held.run);
  }

  /** How many runs are held, finished or not. */
  get size(): number {
    return this.byId.size;
  }

  /**
   * Saves `run` as {@link InMemoryRunStore.save} does when no run with its id is held, and
   * answers true; otherwise saves nothing and answers false. For {@link InMemoryRunQueue}:
   * one lookup of the id instead of two (`has`, then `save`), which under load, in a map
   * of 10⁵ held runs, is a cache miss of its own.
   */
  add(run: Run): boolean {
    const held = this.byId.get(run.runId);
    if (held !== undefined) return false;
    this.put(run, held);
    return true;
  }

  private put(run: Run, held: HeldRun | undefined = this.byId.get(run.runId)): void {
    this.lastEventId += 1;
    if (held === undefined) {
      this.byId.set(run.runId, { run, first: run, firstId: this.lastEventId, later: undefined });
    } else {
      held.run = run;
      const event: RunEvent = { id: String(this.lastEventId), type: runEventTypeOf(run.status), at: run.updatedAt, run };
      if (held.later === undefined) held.later = [event];
      else held.later.push(event);
    }
    // Re-inserted so that the finishing order stays the map's order (a new run is in neither map: no lookup).
    if (held !== undefined) this.finished.delete(run.runId);
    if (FINAL_RUN_STATUSES.has(run.status)) this.finished.set(run.runId, this.clock.now().getTime());
    this.evict();
    if (this.listeners.size === 0) return;
    for (const listener of [...(this.listeners.get(run.runId) ?? [])]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own; the change is made.
      }
    }
  }

  private evict(): void {
    // Nothing finished, nothing to drop: no clock read on the run-start path.
    if (this.finished.size === 0) return;
    const expiredBefore = this.clock.now().getTime() - this.retentionMs;
    for (const [runId, finishedAt] of this.finished) {
      if (this.finished.size <= this.maxFinished && finishedAt > expiredBefore) break;
      this.finished.delete(runId);
      this.byId.delete(runId);
    }
  }
}

/**
 * A queue in one process's memory: `enqueue` saves the run in the store and appends its
 * id to a FIFO that a worker drains with {@link InMemoryRunQueue.take}. Idempotent by
 * `runId` while the store holds the run (see {@link InMemoryRunStore}'s retention). Runs are lost with the process: use the BullMQ queue where that matters.
 */
export class InMemoryRunQueue implements RunQueue {
  private readonly pending: string[] = [];
  /** Index in `pending` of the oldest run id not yet taken. */
  private head = 0;
  private readonly waiters: (() => void)[] = [];

  /** @param store - the store the queued runs are recorded in. */
  constructor(readonly store: InMemoryRunStore) {}

  enqueue(run: Run): Promise<void> {
    // InMemoryRunStore.add records the run before it returns: from here the store holds
    // the id, so an enqueue of the same run, even before this one resolves, adds nothing;
    // and a pending run is never final, so never evicted. No set of the queue's own: one
    // lookup and one insert fewer a run start.
    if (!this.store.add(run)) return Promise.resolve();
    this.pending.push(run.runId);
    if (this.waiters.length > 0) this.waiters.splice(0).forEach((wake) => wake());
    return Promise.resolve();
  }

  /** Removes and returns the oldest pending run id, or `undefined` when none waits. */
  take(): string | undefined {
    // An index, not `shift()`: shifting a large array moves every element, and draining
    // 21k queued runs at shutdown took 486 ms of CPU that way (bench profile).
    if (this.head >= this.pending.length) return undefined;
    const runId = this.pending[this.head] as string;
    this.head += 1;
    if (this.head === this.pending.length) {
      this.pending.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.pending.length) {
      this.pending.splice(0, this.head);
      this.head = 0;
    }
    return runId;
  }

  /** Resolves when a run is pending (at once if one already is). */
  whenPending(): Promise<void> {
    if (this.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** How many runs wait to be taken. */
  get size(): number {
    return this.pending.length - this.head;
  }
}
