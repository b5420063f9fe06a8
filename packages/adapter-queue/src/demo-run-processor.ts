import { setTimeout as sleep } from 'node:timers/promises';
import type { Run, RunProcessingContext, RunProcessingResult, RunProcessor } from '@svc/core';

/** Options of {@link DemoRunProcessor}. */
export interface DemoRunProcessorOptions {
  /** Ms each run takes; default 500. */
  readonly delayMs?: number;
  /** A message containing this fails the run with a reason (no retry); default `[fail]`. */
  readonly failMarker?: string;
  /** A message containing this makes every attempt throw (retried, then failed); default `[crash]`. */
  readonly crashMarker?: string;
}

/**
 * A stand-in agent runtime for the example API server and demos, NOT an agent: it reports
 * progress 0 %, waits `delayMs` (stopping at once when the context's signal aborts),
 * reports 100 % and succeeds with an output naming what the run was started with, unless
 * the run's message contains `failMarker` (resolves `{ok: false}`) or `crashMarker`
 * (throws, so attempts and backoff can be watched). Source: docs/CONTRACT.md "Runs lifecycle".
 */
export class DemoRunProcessor implements RunProcessor {
  private readonly delayMs: number;
  private readonly failMarker: string;
  private readonly crashMarker: string;

  /** @param options - delay and markers; defaults 500 ms, `[fail]`, `[crash]`. */
  constructor(options: DemoRunProcessorOptions = {}) {
    this.delayMs = options.delayMs ?? 500;
    this.failMarker = options.failMarker ?? '[fail]';
    this.crashMarker = options.crashMarker ?? '[crash]';
  }

  /**
   * @throws Error for a message with the crash marker (a retryable failure).
   * @throws AbortError (its `cause` the signal's reason) when `context.signal` aborts during the wait.
   */
  async process(run: Run, context: RunProcessingContext): Promise<RunProcessingResult> {
    await context.reportProgress({ percent: 0, message: 'Started.' });
    await sleep(this.delayMs, undefined, { signal: context.signal });
    const message = run.request.message ?? '';
    if (message.includes(this.crashMarker)) throw new Error('the demo processor was asked to crash');
    if (message.includes(this.failMarker)) return { ok: false, reason: 'The demo agent was asked to fail.' };
    await context.reportProgress({ percent: 100, message: 'Done.' });
    const files = run.request.kind === 'files' ? run.request.files.length : 0;
    return { ok: true, output: { demo: true, files, message_characters: message.length } };
  }
}
