import type { ServerResponse } from 'node:http';
import { errorTypeOf, silentLogger, type RunEventView } from '@svc/core';
import { RUN_EXAMPLE } from '../openapi/examples.js';
import { apiKeyOrToken, authenticatedHeaders, errorResponses, responseRef } from '../openapi/components.js';
import { sendResult } from '../pipeline/rate-limit.js';
import { setRateLimitHeaders } from '../rate-limit-headers.js';
import { pathParam, requestHeader, type AuthenticatedRoute } from '../route.js';

/** Default of `HttpAppSettings.runEventsKeepAliveMs`: a comment line every 15 s (docs/CONTRACT.md "Runs lifecycle"). */
export const DEFAULT_RUN_EVENTS_KEEPALIVE_MS = 15_000;

/** Longest `Last-Event-ID` taken; a longer one is unknown (the whole history follows). */
const MAX_LAST_EVENT_ID_LENGTH = 200;

/**
 * One event in the text/event-stream wire format (WHATWG HTML "Server-sent events"):
 * `id`, `event`, one `data` line (JSON has no raw line break), a blank line. Written here,
 * not with a library: the format is these three lines, and the SSE helpers for Koa
 * (koa-sse-stream, koa-event-stream) wrap Koa's body in a PassThrough, buffer through
 * Koa's response handling and keep no bound on the writes; a raw `res.write` on a
 * response Koa leaves alone (`ctx.respond = false`, as the MCP route does) is what the
 * drain and the disconnect handling need.
 */
export function sseEvent(event: RunEventView): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/**
 * `GET /api/v1/runs/{run_id}/events` → `text/event-stream` (core `StreamRunEvents`): the
 * run's events from `run.queued` (or after `Last-Event-ID`), then live ones; each `data`
 * is the bare run object; closed right after the final event. A comment line every
 * `runEventsKeepAliveMs`. Errors before the stream opens are problem details (404 for
 * another account's run, 503 + `Retry-After` for a lost Redis); once open, a lost Redis
 * ends the stream (the client resumes with `Last-Event-ID`). Charged once, when it opens.
 * A client that disconnects, or the server's stop (`closingStreams`), ends it and releases
 * its watch. `HEAD` answers the headers only.
 * Source: docs/CONTRACT.md "Runs lifecycle"; docs/decisions.md "Cancel and run events".
 */
export const runEventsRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'streamRunEvents',
  credential: 'streamRunEvents',
  method: 'GET',
  paths: { main: ['/api/v1/runs/:run_id/events'] },
  handler: ({ useCases, settings }) => {
    const streamRunEvents = useCases.streamRunEvents;
    const keepAliveMs = settings.runEventsKeepAliveMs ?? DEFAULT_RUN_EVENTS_KEEPALIVE_MS;
    const logger = settings.logger ?? silentLogger;
    return async (ctx, caller) => {
      const header = requestHeader(ctx, 'last-event-id');
      const lastEventId = header !== undefined && header.length <= MAX_LAST_EVENT_ID_LENGTH ? header.trim() : undefined;
      const runId = pathParam(ctx, 'run_id');
      const result = await streamRunEvents.execute({ principal: caller.principal, meter: caller.meter, runId, ...(lastEventId !== undefined && lastEventId !== '' ? { lastEventId } : {}) });
      if (!result.ok) {
        sendResult(ctx, caller.meter, result, 200);
        return;
      }
      const stream = result.value;
      ctx.respond = false;
      const res = ctx.res;
      if (caller.meter.decision !== undefined) setRateLimitHeaders(res, caller.meter.decision);
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Accel-Buffering', 'no');
      if (ctx.method === 'HEAD') {
        res.end();
        return;
      }
      res.write(stream.history.map(sseEvent).join(''));
      if (stream.ended || settings.closingStreams?.aborted === true) {
        res.end();
        return;
      }
      await follow(res, stream.follow.bind(stream), { keepAliveMs, ...(settings.closingStreams !== undefined ? { closing: settings.closingStreams } : {}) }).catch((error: unknown) => {
        // A lost store once the stream is open: the stream ends, the client resumes.
        logger.warn({ component: 'run-events', run_id: runId, error_type: errorTypeOf(error) }, 'run events stream ended: its store was lost');
      });
    };
  },
  openapi: () => ({
    operationId: 'streamRunEvents',
    tags: ['Runs'],
    summary: "Follow a run's events (Server-Sent Events)",
    description: [
      'A `text/event-stream` of the run\'s status changes: events `run.queued`, `run.running`, `run.succeeded`, `run.failed`, `run.cancelled`; each `data` is the run object as of that event (the `data` of `GET /api/v1/runs/{run_id}`, not wrapped); each `id` is opaque and increases within the run. A retry shows as it happens: `run.queued` again, then `run.running` again.',
      'Without `Last-Event-ID` the stream starts with the run\'s whole history from `run.queued`, then live events; with it, exactly the events after that id (an unknown id: the whole history). A comment line (`: keep-alive`) every 15 s. The stream closes right after the final event (`run.succeeded`, `run.failed`, `run.cancelled`); resuming after it gives no event and a closed stream. When the server stops or loses its store, the stream ends early: reconnect with `Last-Event-ID` (EventSource does).',
      'Charged once, when the stream opens. Accepts OAuth access tokens with scope `runs:read`.',
    ].join('\n\n'),
    security: apiKeyOrToken('runs:read'),
    parameters: [
      { name: 'run_id', in: 'path', required: true, description: 'Run id.', schema: { type: 'string' } },
      { name: 'Last-Event-ID', in: 'header', required: false, description: 'The `id` of the last event received: the stream resumes after it.', schema: { type: 'string' } },
    ],
    responses: {
      '200': {
        description: 'The events, as they happen; closed after the final one.',
        headers: authenticatedHeaders,
        content: {
          'text/event-stream': {
            schema: { type: 'string', description: 'Server-Sent Events (WHATWG HTML): `id`, `event` and one `data` line (the run, JSON) per event; comment lines keep the connection open.' },
            examples: {
              succeeded: {
                summary: 'A run from queued to succeeded',
                value: [
                  sseEvent({ id: '1763999412345-0', type: 'run.queued', data: RUN_EXAMPLE }),
                  sseEvent({ id: '1763999412390-0', type: 'run.running', data: { ...RUN_EXAMPLE, status: 'running', updated_at: '2026-05-12T09:14:03.161Z', attempts: 1 } }),
                  ': keep-alive\n\n',
                  sseEvent({
                    id: '1763999412901-0',
                    type: 'run.succeeded',
                    data: {
                      ...RUN_EXAMPLE,
                      status: 'succeeded',
                      updated_at: '2026-05-12T09:14:03.672Z',
                      attempts: 1,
                      progress: { percent: 100, message: 'Done.', updated_at: '2026-05-12T09:14:03.671Z' },
                      output: { demo: true, files: 0, message_characters: 33 },
                    },
                  }),
                ].join(''),
              },
            },
          },
        },
      },
      ...errorResponses({
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
        '404': responseRef('NotFound'),
        '429': responseRef('TooManyRequests'),
        '503': responseRef('ServiceUnavailable'),
      }),
    },
  }),
};

/**
 * Writes the live events until the final one, the client's disconnect or `closing`;
 * a comment line every `keepAliveMs`. Ends the response and releases everything
 * (timer, listeners, the stream's watch) however it ends.
 * @throws what the stream throws (a lost store), after ending the response.
 */
async function follow(
  res: ServerResponse,
  events: (signal: AbortSignal) => AsyncGenerator<RunEventView, void, undefined>,
  options: { readonly keepAliveMs: number; readonly closing?: AbortSignal },
): Promise<void> {
  const stop = new AbortController();
  const onGone = (): void => stop.abort();
  res.once('close', onGone);
  options.closing?.addEventListener('abort', onGone, { once: true });
  // Gone before the listener was there (during the run and history reads): 'close' has
  // fired already and will not again, so the watch and the keep-alive would outlive it.
  if (res.destroyed || options.closing?.aborted === true) onGone();
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), options.keepAliveMs);
  try {
    for await (const event of events(stop.signal)) res.write(sseEvent(event));
  } finally {
    clearInterval(keepAlive);
    res.off('close', onGone);
    options.closing?.removeEventListener('abort', onGone);
    res.end();
  }
}
