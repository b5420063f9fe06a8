import { FILE_STATUSES } from '@svc/core';
import { apiKeyOrToken, errorResponses, jsonResponse, listPageHeaders, pagingParameters, responseRef } from '../openapi/components.js';
import { pageQueryOf, queryParams, setNextLink } from '../paging.js';
import { sendError } from '../pipeline/problem-details.js';
import { sendResultAs } from '../pipeline/rate-limit.js';
import type { AuthenticatedRoute } from '../route.js';
import { FILE_EXAMPLE } from './file-examples.js';

const PARAMETERS = ['status', 'limit', 'cursor'] as const;

/**
 * `GET /api/v1/files?status=&limit=&cursor=`: the caller's files, newest first → 200
 * `{"data": [File], "next_cursor"}` with `Link: rel="next"`, paged like the run list
 * (core `ListFiles`). Scope `files:write`. Source: docs/CONTRACT.md "Files", "Discovery".
 */
export const listFilesRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'listFiles',
  credential: 'listFiles',
  method: 'GET',
  paths: { main: ['/api/v1/files'] },
  handler: ({ useCases, settings }) => {
    const listFiles = useCases.listFiles;
    return async (ctx, caller) => {
      const params = queryParams(ctx, PARAMETERS);
      if (!params.ok) {
        sendError(ctx, params.error);
        return;
      }
      const { status } = params.value;
      const result = await listFiles.execute({ principal: caller.principal, meter: caller.meter, page: pageQueryOf(params.value), ...(status !== undefined ? { status } : {}) });
      sendResultAs(ctx, caller.meter, result, 200, (page) => ({ data: page.items, next_cursor: setNextLink(ctx, settings.baseUrl, page.nextCursor) }));
    };
  },
  openapi: () => ({
    operationId: 'listFiles',
    tags: ['Files'],
    summary: "List the caller's files, newest first",
    description:
      "The files of the caller's account, newest first (`created_at` descending, then `file_key`). Paging as for the run list: follow `next_cursor` (or `Link: rel=\"next\"`) until it is null. `status` matches the recorded status (a file past `expires_at` that the minute's sweep has not reached yet is shown `expired` but matched as before). Accepts OAuth access tokens with scope `files:write`.",
    security: apiKeyOrToken('files:write'),
    parameters: [{ name: 'status', in: 'query', required: false, description: 'Only the files with this status.', schema: { type: 'string', enum: [...FILE_STATUSES] } }, ...pagingParameters],
    responses: {
      '200': jsonResponse('One page of files.', 'FileList', { data: [FILE_EXAMPLE], next_cursor: null }, listPageHeaders),
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
