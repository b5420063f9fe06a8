import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Notifier, Run, RunProcessingResult, RunProcessor, RunStatus, RunStore } from '@svc/core';
import { eventually } from '@svc/core/testing';
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
