import { RUN_EXAMPLE } from '../openapi/examples.js';
import { apiKeyOrToken, errorResponses, jsonResponse, responseRef } from '../openapi/components.js';
import { sendResult } from '../pipeline/rate-limit.js';
import { pathParam, type AuthenticatedRoute } from '../route.js';

/**
 * `GET /api/v1/runs/{run_id}` (a run's `status_url`): the run → 200 `{"data": Run}`.
 * Source: docs/CONTRACT.md "Runs" (the run status operation is not in docs/api-spec.md).
 */
export const getRunRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'getRun',
  credential: 'getRun',
  method: 'GET',
  paths: { main: ['/api/v1/runs/:run_id'] },
  handler: ({ useCases }) => {
    const getRun = useCases.getRun;
    return async (ctx, caller) => {
      sendResult(ctx, caller.meter, await getRun.execute({ principal: caller.principal, meter: caller.meter, runId: pathParam(ctx, 'run_id') }), 200);
    };
  },
  openapi: () => ({
    operationId: 'getRun',
    tags: ['Runs'],
    summary: 'Read a run (its status_url)',
    description: 'Statuses: queued, running, succeeded, failed, cancelled. Accepts OAuth access tokens with scope `runs:read`.',
    security: apiKeyOrToken('runs:read'),
    parameters: [{ name: 'run_id', in: 'path', required: true, description: 'Run id.', schema: { type: 'string' } }],
    responses: {
      '200': jsonResponse('The run.', 'RunResponse', {
        data: RUN_EXAMPLE,
      }),
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
