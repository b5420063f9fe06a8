import type { RunRequest } from './run-request.js';

/**
 * Statuses of a run. `queued` is reported right after the start (docs/api-spec.md "States and
 * transitions"); the others are docs/CONTRACT.md "Runs".
 */
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

/** One run status. See {@link RUN_STATUSES}. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses a run never leaves. */
export const FINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * The allowed transitions: queued → running | cancelled | failed (given up before it
 * ever ran, e.g. stalled too often); running → succeeded | failed | queued (a retry after
 * a lost worker) | cancelled | running (a new attempt). Final statuses have none.
 */
const TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ['running', 'cancelled', 'failed'],
  running: ['succeeded', 'failed', 'queued', 'cancelled', 'running'],
  succeeded: [],
  failed: [],
  cancelled: [],
};

/** True when a run may move from `from` to `to`. */
export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/**
 * An agent run. Source: docs/api-spec.md "Run-start result"; docs/CONTRACT.md "Runs" (the shape
 * answered at `status_url`).
 */
export interface Run {
  /** Identifier of the run (UUID). */
  readonly runId: string;
  /** Identifier of the workflow run that carries it (UUID). */
  readonly workflowRunId: string;
  /** Agent the run belongs to. */
  readonly agentId: string;
  /** Account that started it; other accounts see 404. */
  readonly accountId: string;
  /** Current status. */
  readonly status: RunStatus;
  /** When the run was accepted. */
  readonly createdAt: Date;
  /** When its status last changed. */
  readonly updatedAt: Date;
  /** What the run was started with. */
  readonly request: RunRequest;
  /** Processing attempts so far (0 while never started). */
  readonly attempts: number;
  /** Safe, human-readable reason of a `failed` run. */
  readonly failureReason?: string;
  /** The last progress its processor reported (core `RunProcessingContext.reportProgress`). */
  readonly progress?: RunProgress;
  /** What the processor returned with success: a JSON value, at most {@link MAX_RUN_OUTPUT_BYTES} as JSON. */
  readonly output?: JsonValue;
  /**
   * When a cancel was first asked for (`POST /api/v1/runs/{run_id}/cancel`): set on a
   * `running` run that is still stopping, and kept once it is `cancelled`. Never changes
   * once set. Source: docs/CONTRACT.md "Runs lifecycle"; core `RunStore.requestCancel`.
   */
  readonly cancelRequestedAt?: Date;
  /**
   * Id of the request that started the run (its `X-Request-Id`), so that the run's log
   * lines lead back to it; absent for a run started in process without one. Kept by
   * every run store; never shown in the public run view. Source: docs/decisions.md
   * "Observability".
   */
  readonly requestId?: string;
}

/** A JSON value: what a run's `output` may hold. Source: RFC 8259. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Largest `output` of a run, in bytes of its UTF-8 JSON text: 64 KiB. Source: docs/decisions.md "Run progress and output". */
export const MAX_RUN_OUTPUT_BYTES = 65_536;
/** Longest progress `message`, in characters. Source: docs/decisions.md "Run progress and output". */
export const MAX_PROGRESS_MESSAGE_LENGTH = 1000;

/**
 * What a processor reports while a run is `running`, shown at `GET {status_url}` as
 * `progress` (docs/decisions.md "Run progress and output").
 */
export interface RunProgress {
  /** Done so far, 0..100 (a percentage); absent when the processor cannot tell. */
  readonly percent?: number;
  /** Safe, human-readable step, at most {@link MAX_PROGRESS_MESSAGE_LENGTH} characters. */
  readonly message?: string;
  /** When it was reported. */
  readonly updatedAt: Date;
}

/**
 * Checks a progress report as a processor makes it.
 * @throws RangeError naming the field: `percent` not a number in 0..100, `message` not a
 * string of at most {@link MAX_PROGRESS_MESSAGE_LENGTH} characters, or neither given.
 */
export function checkProgress(progress: { readonly percent?: number; readonly message?: string }): void {
  const { percent, message } = progress;
  if (percent === undefined && message === undefined) throw new RangeError('progress: give percent, message or both');
  if (percent !== undefined && !(typeof percent === 'number' && percent >= 0 && percent <= 100)) throw new RangeError('progress.percent must be a number in 0..100');
  if (message !== undefined && !(typeof message === 'string' && message.length <= MAX_PROGRESS_MESSAGE_LENGTH)) {
    throw new RangeError(`progress.message must be a string of at most ${MAX_PROGRESS_MESSAGE_LENGTH} characters`);
  }
}

/**
 * A run output as stored: `value` when it is a JSON value whose text is at most
 * {@link MAX_RUN_OUTPUT_BYTES} bytes, else the safe reason it is refused.
 */
export function checkOutput(value: unknown): { readonly ok: true; readonly json: string } | { readonly ok: false; readonly reason: string } {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  if (json === undefined) return { ok: false, reason: 'The processor returned an output that is not JSON.' };
  if (Buffer.byteLength(json, 'utf8') > MAX_RUN_OUTPUT_BYTES) return { ok: false, reason: `The processor returned an output over ${MAX_RUN_OUTPUT_BYTES} bytes.` };
  return { ok: true, json };
}

/**
 * One status change of a run, as a worker makes it: the argument of `RunStore.transition`
 * (core `ports/run-store.ts`), applied only when {@link canTransition}`(current, to)`.
 */
export interface RunStatusChange {
  /** The status to move to. */
  readonly to: RunStatus;
  /** When the change happens; becomes `updatedAt`. */
  readonly at: Date;
  /** True to count one more processing attempt (a move to `running`). */
  readonly countAttempt?: boolean;
  /** Safe, human-readable reason of a `failed` run; any earlier reason is cleared when absent. */
  readonly failureReason?: string;
  /** The output of a `succeeded` run (checked with {@link checkOutput}); kept when absent. */
  readonly output?: JsonValue;
}

/**
 * The run after `change`, whether or not {@link canTransition} allows it (the caller
 * checks). Every store that builds the changed run in JavaScript uses this one, so that
 * stores agree; the Redis store does the same in its Lua script, and the run store
 * contract suite (`@svc/core/testing`) holds both to it.
 */
export function changed(run: Run, change: RunStatusChange): Run {
  const { failureReason: _dropped, ...rest } = run;
  const status = statusAfter(run, change.to);
  const redirected = status !== change.to;
  return {
    ...rest,
    status,
    updatedAt: change.at,
    attempts: run.attempts + (change.countAttempt === true ? 1 : 0),
    ...(change.failureReason !== undefined && !redirected ? { failureReason: change.failureReason } : {}),
    ...(change.output !== undefined && !redirected ? { output: change.output } : {}),
  };
}

/**
 * The status a move to `to` really gives `run`: a run with a cancel request
 * (`cancelRequestedAt`) that its worker makes `succeeded` or `failed` ends `cancelled`
 * instead, without the output or failure reason, so that a cancel answered while the
 * processor was answering still wins (docs/CONTRACT.md "Runs lifecycle": a running run
 * asked to cancel ends `cancelled`). Part of every store's compare-and-set (the Redis
 * store in its Lua script); the run store contract suite holds both to it.
 */
export function statusAfter(run: Pick<Run, 'cancelRequestedAt'>, to: RunStatus): RunStatus {
  return run.cancelRequestedAt !== undefined && (to === 'succeeded' || to === 'failed') ? 'cancelled' : to;
}

/** The run with `progress` when it is `running` (the only status that takes progress), else `undefined`. */
export function withProgress(run: Run, progress: RunProgress): Run | undefined {
  return run.status === 'running' ? { ...run, progress } : undefined;
}

/** Largest creation time a run list key can tell apart, in ms since the epoch (13 digits: year 2286); later ones sort as it. */
const LIST_KEY_MAX_MS = 9_999_999_999_999;

/**
 * The run's key in the run list (`GET /api/v1/runs`): `<13 digits>:<runId>`, where the
 * digits are {@link LIST_KEY_MAX_MS} minus `createdAt` in ms, zero-padded. Compared as
 * UTF-8 bytes ({@link compareRunListKeys}; Redis compares sorted-set members so), keys
 * put runs newest first, runs created in the same millisecond by run id. `createdAt` and
 * `runId` never change, so neither does a run's key: the stores use it as their page
 * position (core `RunStore.list`). Times before 1970 (or invalid) sort as 1970.
 * Source: docs/decisions.md "Discovery: listing runs".
 */
export function runListKey(run: Pick<Run, 'createdAt' | 'runId'>): string {
  const ms = run.createdAt.getTime();
  const clamped = Number.isFinite(ms) ? Math.min(Math.max(Math.floor(ms), 0), LIST_KEY_MAX_MS) : 0;
  return `${String(LIST_KEY_MAX_MS - clamped).padStart(13, '0')}:${run.runId}`;
}

/**
 * Orders two strings as their UTF-8 bytes (= by code point), as Redis orders sorted-set
 * members of equal score: negative when `a` comes first. JavaScript's `<` compares UTF-16
 * code units, which differs for characters above U+FFFF.
 */
export function compareRunListKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

// Surrogates (U+D800..U+DFFF) stand for code points above U+FFFF: they rank after U+E000..U+FFFF.
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/**
 * What a cancel request does to a run (core `RunStore.requestCancel`), by its status:
 * `queued` → `cancelled` at once (with `cancelRequestedAt`); `running` → stays `running`
 * with `cancelRequestedAt` set (kept when already set: the first request's time); a final
 * run is left as it is. `undefined` when nothing changes (final).
 * Source: docs/CONTRACT.md "Runs lifecycle". Every store applies this one rule (the Redis
 * store in its Lua script), and the run store contract suite holds them to it.
 */
export function cancelRequested(run: Run, at: Date): Run | undefined {
  if (run.status === 'queued') {
    const { failureReason: _dropped, ...rest } = run;
    return { ...rest, status: 'cancelled', updatedAt: at, cancelRequestedAt: run.cancelRequestedAt ?? at };
  }
  if (run.status === 'running') return run.cancelRequestedAt !== undefined ? run : { ...run, cancelRequestedAt: at };
  return undefined;
}
