import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Notifier, Run, RunProcessingContext, RunProcessingResult, RunProcessor, RunStatus, RunStore } from '@svc/core';
import { RunCancelledError } from '@svc/core';
import { aRun, eventually } from '@svc/core/testing';
import { expect } from 'chai';
import type { RunBackend } from '@svc/adapter-queue';

/** A notifier that keeps every run it was told about. */
export class RecordingNotifier implements Notifier {
  readonly finished: Run[] = [];
  runFinished(run: Run): Promise<void> {
    this.finished.push(run);
    return Promise.resolve();
  }
  /** How many times `runId` was notified. */
  count(runId: string): number {
    return this.finished.filter((r) => r.runId === runId).length;
  }
}

/**
 * A processor whose runs wait at a gate until the test opens it, so that the test can
 * watch the run `running`; then it answers `result` (or throws when `result` is an Error).
 */
export class GatedProcessor implements RunProcessor {
  readonly calls: string[] = [];
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));

  constructor(private readonly result: RunProcessingResult | Error = { ok: true }) {}

  async process(run: Run): Promise<RunProcessingResult> {
    this.calls.push(run.runId);
    await this.gate;
    if (this.result instanceof Error) throw this.result;
    return this.result;
  }

  /** Lets every waiting and later run through. */
  release(): void {
    this.open();
  }
}

/** Every distinct status `store` reports for `runId`, in order, until a final one. */
export async function followStatuses(store: RunStore, runId: string, onStatus: (status: RunStatus) => void, timeoutMs = 10_000): Promise<RunStatus[]> {
  const seen: RunStatus[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = (await store.get(runId))?.status;
    if (status !== undefined && seen.at(-1) !== status) {
      seen.push(status);
      onStatus(status);
    }
    if (status === 'succeeded' || status === 'failed' || status === 'cancelled') return seen;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${String(status)} after ${timeoutMs} ms (seen ${seen.join(' → ')})`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A child process running a fixture, with its stdout lines collected. */
export interface Child {
  readonly process: ChildProcess;
  readonly lines: string[];
  /** Kills it with SIGKILL (if alive) and waits for it to exit. */
  kill(): Promise<void>;
}

/**
 * Starts `node --conditions=source --import tsx test/fixtures/<name>.ts` with `env`
 * added to this process's environment. stderr is passed through.
 */
export function startFixture(name: string, env: Record<string, string>): Child {
  const root = fileURLToPath(new URL('../../../../', import.meta.url));
  const script = fileURLToPath(new URL(`../fixtures/${name}.ts`, import.meta.url));
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let buffer = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    lines.push(...parts);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    lines,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * The worker behaviour both run backends share: `run` is enqueued, read `queued` before
 * any worker takes it, then seen `running` (a gated processor holds it there), then
 * `succeeded` after one attempt, and the notifier is told exactly once.
 * @returns the stored run at the end, for backend-specific checks.
 */
export async function expectRunToSucceedOnce(runs: RunBackend, run: Run): Promise<Run | undefined> {
  const processor = new GatedProcessor({ ok: true });
  const notifier = new RecordingNotifier();
  await runs.queue.enqueue(run);
  const first = (await runs.store.get(run.runId))?.status; // before any worker can take it
  await runs.startWorker(processor, { notifier });
  const later = await followStatuses(runs.store, run.runId, (s) => {
    if (s === 'running') processor.release();
  });
  const statuses = [first, ...later].filter((s, i, all) => i === 0 || all[i - 1] !== s);
  expect(statuses).to.deep.equal(['queued', 'running', 'succeeded']);
  const stored = await runs.store.get(run.runId);
  expect(stored).to.include({ status: 'succeeded', attempts: 1 });
  await eventually(() => notifier.finished.length > 0, 'a notification');
  expect(notifier.count(run.runId)).to.equal(1);
  expect(notifier.finished[0]?.status).to.equal('succeeded');
  return stored;
}

/**
 * A processor that records its calls and waits for its signal, then rejects with the
 * signal's reason; a run with message `quick` succeeds at once, one with `ignore` waits
 * for ever (it ignores its signal).
 */
export class WaitingProcessor implements RunProcessor {
  readonly calls: string[] = [];
  readonly reasons: unknown[] = [];
  process(run: Run, context: RunProcessingContext): Promise<RunProcessingResult> {
    this.calls.push(run.runId);
    const message = run.request.kind === 'message' ? run.request.message : undefined;
    if (message === 'quick') return Promise.resolve({ ok: true });
    return new Promise((_, reject) => {
      if (message === 'ignore') return;
      context.signal.addEventListener('abort', () => {
        this.reasons.push(context.signal.reason);
        reject(context.signal.reason as Error);
      }, { once: true });
    });
  }
}

/**
 * The cancel behaviour both run backends share (docs/CONTRACT.md "Runs lifecycle"): a
 * run cancelled while queued never reaches the processor (a run queued after it does);
 * a running run's processor gets its signal with a `RunCancelledError` and the run ends
 * `cancelled` within 1 s, notified once; a processor that ignores the signal is abandoned
 * after `cancelGraceMs` and the run still ends `cancelled`.
 * @returns the ms from each running cancel request to the run's `cancelled` status.
 */
export async function expectCancelToWork(runs: RunBackend, ids: (what: string) => string): Promise<{ honouredMs: number; abandonedMs: number }> {
  const processor = new WaitingProcessor();
  const notifier = new RecordingNotifier();
  const skipped = aRun({ runId: ids('cancel-queued') });
  const after = aRun({ runId: ids('after'), request: { kind: 'message', message: 'quick' } });
  await runs.queue.enqueue(skipped);
  expect((await runs.store.requestCancel(skipped.runId, new Date())).kind).to.equal('cancelled');
  await runs.queue.enqueue(after);
  await runs.startWorker(processor, { notifier, cancelPollMs: 50, cancelGraceMs: 300 });
  await eventually(async () => (await runs.store.get(after.runId))?.status === 'succeeded', 'the run queued after the cancelled one succeeded');
  expect(processor.calls).to.not.include(skipped.runId);
  expect((await runs.store.get(skipped.runId))?.status).to.equal('cancelled');

  const running = aRun({ runId: ids('cancel-running') });
  await runs.queue.enqueue(running);
  await eventually(() => processor.calls.includes(running.runId), 'the run reached the processor');
  const asked = Date.now();
  expect((await runs.store.requestCancel(running.runId, new Date())).kind).to.equal('requested');
  await eventually(async () => (await runs.store.get(running.runId))?.status === 'cancelled', 'the running run was cancelled', 1000, 2);
  const honouredMs = Date.now() - asked;
  expect(processor.reasons.at(-1)).to.be.instanceOf(RunCancelledError);
  await eventually(() => notifier.count(running.runId) === 1, 'notified once');
  return { honouredMs, abandonedMs: await expectAbandoned(runs, ids) };
}

async function expectAbandoned(runs: RunBackend, ids: (what: string) => string): Promise<number> {
  const run = aRun({ runId: ids('cancel-ignored'), request: { kind: 'message', message: 'ignore' } });
  await runs.queue.enqueue(run);
  await eventually(async () => (await runs.store.get(run.runId))?.status === 'running', 'the run is running');
  const asked = Date.now();
  await runs.store.requestCancel(run.runId, new Date());
  await eventually(async () => (await runs.store.get(run.runId))?.status === 'cancelled', 'the ignored cancel still ended cancelled', 3000);
  return Date.now() - asked;
}
