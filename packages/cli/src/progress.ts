/**
 * What `--wait` shows while a run goes on, on stderr: on a terminal a spinner line rewritten
 * in place (yocto-spinner), otherwise (a pipe, a file, CI logs) one plain line per change of
 * status or progress, which reads well in a log and never holds control sequences.
 */
import type { Run } from '@svc/client';
import yoctoSpinner, { type Spinner } from 'yocto-spinner';

/** Tells a person how a run goes. */
export interface RunProgress {
  /** The run as last read (called at the first read and at each change). */
  update(run: Run): void;
  /** The run ended (any final status). */
  finish(run: Run): void;
  /** Waiting stopped before the run ended (interrupted, or a failure). */
  stop(): void;
}

/** `running 40% Reading the files`; `failed: <failure_reason>` */
export function describeRun(run: Run): string {
  if (run.status === 'failed' || run.status === 'cancelled') return run.failure_reason === undefined ? run.status : `${run.status}: ${run.failure_reason}`;
  const percent = run.progress?.percent;
  const message = run.progress?.message;
  return [run.status, percent === undefined ? undefined : `${percent}%`, message].filter((part): part is string => part !== undefined && part !== '').join(' ');
}

/** The spinner: one line, rewritten in place; a ✔ or ✖ line at the end. */
export function terminalProgress(stream: NodeJS.WriteStream): RunProgress {
  // handleSignals false: the CLI's own SIGINT handler stops the wait and says how to resume it.
  const spinner: Spinner = yoctoSpinner({ stream, handleSignals: false });
  return {
    update(run) {
      const text = `run ${run.run_id}: ${describeRun(run)}`;
      if (spinner.isSpinning) spinner.text = text;
      else spinner.start(text);
    },
    finish(run) {
      const text = `run ${run.run_id}: ${describeRun(run)}`;
      if (run.status === 'succeeded') spinner.success(text);
      else spinner.error(text);
    },
    stop() {
      spinner.stop();
    },
  };
}

/** One line per change: `run <id>: running 40% Reading the files`. */
export function plainProgress(write: (text: string) => void): RunProgress {
  let last = '';
  const line = (run: Run): void => {
    const text = `run ${run.run_id}: ${describeRun(run)}`;
    if (text !== last) write(`${text}\n`);
    last = text;
  };
  return { update: line, finish: line, stop: () => undefined };
}
