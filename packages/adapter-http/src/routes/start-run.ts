import { MAX_BACKGROUND_FILES_PER_RUN, MAX_FILES_PER_RUN, type WireBody } from '@svc/core';
import { apiKeyOrToken, contentEncodingParameter, idempotencyKeyParameter, replayableHeaders, errorResponses, headerRef, jsonRequestBody, jsonResponse, responseRef } from '../openapi/components.js';
import { jsonBody } from '../pipeline/json-body.js';
import { idempotencyStage } from '../pipeline/idempotency.js';
import { sendResult } from '../pipeline/rate-limit.js';
import type { Context } from 'koa';
import { pathParam, type AuthenticatedRoute, type Caller } from '../route.js';

/**
 * `POST /api/v1/agents/{agent_id}/run`: start an asynchronous run → 202
 * `{"data": RunStartResult}` with `Location` = `status_url`. Charged to the credential
 * and the agent. Source: docs/api-spec.md "POST /api/v1/agents/{agent_id}/run"; docs/CONTRACT.md "Runs".
 */
export const startRunRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'startRun',
  credential: 'startRun',
  method: 'POST',
  paths: { main: ['/api/v1/agents/:agent_id/run'] },
  handler: ({ useCases, limits, settings }) => {
    const startRun = useCases.startRun;
    const idempotently = idempotencyStage(useCases.claimIdempotencyKey, settings.logger);
    const start = (ctx: Context, caller: Caller, body: WireBody): Promise<void> =>
      // A literal of one shape, not `{ ...caller, … }`: V8 missed its inline caches on that
      // spread's result at every request (its member definitions and StartRun's reads of
      // them went to the runtime: ~15k of a run start's ~297k instructions, callgrind).
      startRun.execute({ principal: caller.principal, meter: caller.meter, requestId: caller.requestId, agentId: pathParam(ctx, 'agent_id'), body }).then((result) => {
        if (result.ok) ctx.res.setHeader('Location', result.value.status_url);
        sendResult(ctx, caller.meter, result, 202);
      });
    // `then`s made once, not async frames (docs/ARCHITECTURE.md "Style to follow"): 3
    // promises and 2 frames fewer a run start than `await`ing each step.
    return (ctx, caller) => jsonBody(ctx, limits.bodyLimitBytes).then((body) => idempotently(ctx, caller, body, body, start));
  },
  openapi: ({ limits }) => ({
    operationId: 'startRun',
    tags: ['Agents', 'Runs'],
    summary: 'Start an asynchronous run',
    description: `Starts a run with uploaded files (Option 1: 1..${MAX_FILES_PER_RUN} files, optional message, \`process_together\`, \`notification_email\`, up to ${MAX_BACKGROUND_FILES_PER_RUN} background files) or a message only (Option 2). The option is chosen by the presence of \`files\` or another Option 1 member. Limited to ${limits.agent.limit} requests per ${limits.agent.windowSeconds} seconds per agent, in addition to the credential limit. Accepts OAuth access tokens with scope \`runs:write\`.`,
    security: apiKeyOrToken('runs:write'),
    parameters: [{ name: 'agent_id', in: 'path', required: true, description: 'Agent id.', schema: { type: 'string', minLength: 1 } }, idempotencyKeyParameter, contentEncodingParameter(limits)],
    requestBody: jsonRequestBody('StartRunRequest', {
      files: {
        files: [
          {
            file_key: 'uploads/invoice-17.pdf',
            file_name: 'invoice-17.pdf',
            content_type: 'application/pdf',
          },
        ],
        message: 'Extract the totals',
        // No address a test sends: the leak scan flags a sent e-mail address in any answer, this document included.
        notification_email: 'accounts-payable@customer.example',
      },
      message: { message: 'Summarise the orders of yesterday' },
    }),
    responses: {
      '202': jsonResponse('Accepted: the run is queued; follow `Location` (= `status_url`).', 'RunStartResponse', {
        data: {
          run_id: '570b6c23-d987-478f-8769-d40f8a571099',
          workflow_run_id: 'fa392f4e-26f8-45a6-be2f-193451bb89d4',
          status: 'queued',
          status_url: 'https://api.svc.example.test/api/v1/runs/570b6c23-d987-478f-8769-d40f8a571099',
          message: 'Run queued with 1 file.',
        },
      }, { ...replayableHeaders, Location: headerRef('Location') }),
      ...errorResponses({
        '400': responseRef('BadRequestRunStart'),
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
        '404': responseRef('NotFound'),
        '409': responseRef('ConflictIdempotencyKey'),
        '413': responseRef('PayloadTooLarge'),
        '415': responseRef('UnsupportedMediaType'),
        '422': responseRef('IdempotencyKeyReused'),
        '429': responseRef('TooManyRequests'),
        '503': responseRef('ServiceUnavailable'),
      }),
    },
  }),
};
