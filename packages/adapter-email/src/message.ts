import { statusUrlOf, type Run } from '@svc/core';

/** The subject and plain text of the e-mail sent when a run ends. */
export interface RunFinishedMessage {
  /** One line: `Run <run_id> <status>`, e.g. `Run 6f1c… succeeded`. */
  readonly subject: string;
  /** Plain text (lines ending in `\n`): the run id, agent id, final status, failure reason when failed, when it ended and its `status_url`. */
  readonly text: string;
}

/**
 * The message that tells `notification_email` that `run` reached its final status.
 * Plain text only: every value in it is an identifier, a status, a URL or the run's safe
 * failure reason (core `Run.failureReason`), none of which needs markup. Nothing in it is
 * secret: it names what the run's own `status_url` answers to its account.
 * Source: docs/decisions.md "E-mail notifications".
 * @param run - a run in a final status.
 * @param baseUrl - the API's `base_url` (no trailing slash), for the run's `status_url` (core `statusUrlOf`).
 */
export function runFinishedMessage(run: Run, baseUrl: string): RunFinishedMessage {
  const statusUrl = statusUrlOf(baseUrl, run.runId);
  const lines = [
    `Run ${run.runId} of agent ${run.agentId} has ended: ${run.status}.`,
    '',
    `Run id: ${run.runId}`,
    `Agent id: ${run.agentId}`,
    `Status: ${run.status}`,
    ...(run.status === 'failed' && run.failureReason !== undefined ? [`Reason: ${run.failureReason}`] : []),
    `Ended at: ${run.updatedAt.toISOString()}`,
    `Status URL: ${statusUrl}`,
    '',
    'The status URL answers the run with the credentials of the account that started it.',
  ];
  return { subject: `Run ${run.runId} ${run.status}`, text: `${lines.join('\n')}\n` };
}
