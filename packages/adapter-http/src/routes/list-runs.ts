import { RUN_EXAMPLE } from '../openapi/examples.js';
import { RUN_STATUSES } from '@svc/core';
import { apiKeyOrToken, errorResponses, jsonResponse, listPageHeaders, pagingParameters, responseRef } from '../openapi/components.js';
import { pageQueryOf, queryParams, setNextLink } from '../paging.js';
import { sendError } from '../pipeline/problem-details.js';
import { sendResultAs } from '../pipeline/rate-limit.js';
import type { AuthenticatedRoute } from '../route.js';

/** The query parameters the run list reads; any other is ignored, as for every operation. */
const PARAMETERS = ['agent_id', 'status', 'limit', 'cursor'] as const;

/**
 * `GET /api/v1/runs?agent_id=&status=&limit=&cursor=` (main listener only): the caller's
 * runs, newest first → 200 `{"data": [Run], "next_cursor": string | null}`, with
 * `Link: <…>; rel="next"` (RFC 8288) when a next page exists. A query parameter sent
 * twice, or invalid, → 400 `validation_failed` naming it (`errors: [{path: "/limit"}]`); a
 * cursor not signed for this account and these filters → 400 `invalid_cursor`. Charged once to the credential's window, like `getRun`.
 * Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery: listing runs".
 */
export const listRunsRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'listRuns',
  credential: 'listRuns',
  method: 'GET',
  paths: { main: ['/api/v1/runs'] },
  handler: ({ useCases, settings }) => {
    const listRuns = useCases.listRuns;
    return async (ctx, caller) => {
      const params = queryParams(ctx, PARAMETERS);
      // Refused before the use case: the rate-limit stage charges the request.
      if (!params.ok) {
        sendError(ctx, params.error);
        return;
      }
      const { agent_id: agentId, status } = params.value;
      const result = await listRuns.execute({
        principal: caller.principal,
        meter: caller.meter,
        page: pageQueryOf(params.value),
        ...(agentId !== undefined ? { agentId } : {}),
        ...(status !== undefined ? { status } : {}),
      });
      sendResultAs(ctx, caller.meter, result, 200, (page) => ({ data: page.items, next_cursor: setNextLink(ctx, settings.baseUrl, page.nextCursor) }));
    };
  },
  openapi: () => ({
    operationId: 'listRuns',
    tags: ['Runs'],
    summary: "List the caller's runs, newest first",
    description: [
      "The runs of the caller's account, newest first (`created_at` descending, runs of the same millisecond by `run_id`), each as its `status_url` answers it. Another account's runs are never listed; an `agent_id` that names no agent of the account gives an empty list, not 404.",
      'Paging: follow `next_cursor` (or the `Link: <…>; rel="next"` URL) until it is null. Following it never repeats a run nor skips one that exists throughout; a run started meanwhile is on the first page of a new listing. `status` is matched when each page is read: a run whose status changes between pages appears at most once. With a `status` filter a page may hold fewer runs than `limit`, even none, while `next_cursor` is not null (the server examines a bounded number of runs per request).',
      'Accepts OAuth access tokens with scope `runs:read`. Charged to the credential\'s window once.',
    ].join('\n\n'),
    security: apiKeyOrToken('runs:read'),
    parameters: [
      { name: 'agent_id', in: 'query', required: false, description: 'Only the runs of this agent.', schema: { type: 'string' } },
      { name: 'status', in: 'query', required: false, description: 'Only the runs with this status when the page is read.', schema: { type: 'string', enum: [...RUN_STATUSES] } },
      ...pagingParameters,
    ],
    responses: {
      '200': jsonResponse('One page of runs.', 'RunList', {
        data: [
          RUN_EXAMPLE,
        ],
        next_cursor: 'eyJ2IjoxLCJ0IjoxNzc4NTc3MjQzMTE4fQ.c2lnbmF0dXJl',
      }, listPageHeaders),
      ...errorResponses({
        '400': responseRef('BadRequestList'),
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
        '429': responseRef('TooManyRequests'),
        '503': responseRef('ServiceUnavailable'),
      }),
    },
  }),
};
