import { RunFailedError, type RunProcessingContext, type RunProcessingResult, type RunProcessor } from '@svc/core';

/** What the summarizer asks of the model it calls (an outside service). */
export interface SummaryModel {
  /**
   * Summarizes `text`.
   * @throws Error when the model is unreachable or overloaded (worth another attempt).
   */
  summarize(text: string, signal: AbortSignal): Promise<string>;
}

/**
 * An agent runtime, as an embedding service writes one: it summarizes a run's message
 * with a model. An empty message is an answer, not an accident (`RunFailedError`: the
 * run fails at once); a model error is thrown as is, so the worker retries it.
 */
export class Summarizer implements RunProcessor {
  /** @param model - the model it calls. */
  constructor(private readonly model: SummaryModel) {}

  /** See `RunProcessor.process`. @throws RunFailedError for an empty message; the model's errors as they are. */
  async process(run: Parameters<RunProcessor['process']>[0], context: RunProcessingContext): Promise<RunProcessingResult> {
    const message = run.request.message ?? '';
    if (message.trim() === '') throw new RunFailedError('There is nothing to summarize.');
    await context.reportProgress({ percent: 10, message: `Summarizing (attempt ${context.attempt} of ${context.maxAttempts})` });
    const summary = await this.model.summarize(message, context.signal);
    return { ok: true, output: { summary } };
  }
}
