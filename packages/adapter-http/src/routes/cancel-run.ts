import { CANCELLING_RUN_EXAMPLE } from '../openapi/examples.js';
import { apiKeyOrToken, errorResponses, jsonResponse, responseRef } from '../openapi/components.js';
import { sendResult } from '../pipeline/rate-limit.js';
import { pathParam, type AuthenticatedRoute } from '../route.js';

/**
 * `POST /api/v1/runs/{run_id}/cancel`: cancel a run → 200 `{"data": Run}` as of the
 * answer (core `CancelRun`): a queued run is `cancelled` at once; a running one stays
 * `running` with `cancel_requested_at` until its worker stops it; again while it stops →
 * 200 again; a final run → 409 `run_final`; another account's run → 404 like a missing
 * one. No body is read. Scope `runs:write`; charged once to the credential's window.
 * Source: docs/CONTRACT.md "Runs lifecycle", "Isolation between accounts".
 */
export const cancelRunRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'cancelRun',
  credential: 'cancelRun',
  method: 'POST',
  paths: { main: ['/api/v1/runs/:run_id/cancel'] },
  handler: ({ useCases }) => {
    const cancelRun = useCases.cancelRun;
    return async (ctx, caller) => {
      sendResult(ctx, caller.meter, await cancelRun.execute({ principal: caller.principal, meter: caller.meter, runId: pathParam(ctx, 'run_id') }), 200);
    };
  },
  openapi: () => ({
    operationId: 'cancelRun',
    tags: ['Runs'],
    summary: 'Cancel a run',
    description:
      'A `queued` run is `cancelled` at once and never reaches the agent runtime. A `running` run stays `running` with `cancel_requested_at` set while its worker stops it (within about a second), then it is `cancelled` — never retried, never `failed`; a runtime that does not stop is abandoned after the worker\'s `cancel_grace_ms` and the run is still `cancelled`. Asking again while it stops answers 200 again; a final run answers 409 `run_final`. No request body. Accepts OAuth access tokens with scope `runs:write`.',
    security: apiKeyOrToken('runs:write'),
    parameters: [{ name: 'run_id', in: 'path', required: true, description: 'Run id.', schema: { type: 'string' } }],
    responses: {
      '200': jsonResponse('The run as of the answer: `cancelled` (it was queued), or `running` with `cancel_requested_at` (it is stopping).', 'RunResponse', {
        data: CANCELLING_RUN_EXAMPLE,
      }),
      ...errorResponses({
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
        '404': responseRef('NotFound'),
        '409': responseRef('ConflictRunFinal'),
        '429': responseRef('TooManyRequests'),
        '503': responseRef('ServiceUnavailable'),
      }),
    },
  }),
};
