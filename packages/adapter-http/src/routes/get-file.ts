import { apiKeyOrToken, errorResponses, jsonResponse, responseRef } from '../openapi/components.js';
import { sendResult } from '../pipeline/rate-limit.js';
import { pathParam, type AuthenticatedRoute } from '../route.js';
import { FILE_EXAMPLE, FILE_KEY_PARAMETER } from './file-examples.js';

/**
 * `GET /api/v1/files/{file_key}` → 200 `{"data": File}` (core `GetFile`); another
 * account's file → 404 like a missing one. Scope `files:write`. Source: docs/CONTRACT.md "Files".
 */
export const getFileRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'getFile',
  credential: 'getFile',
  method: 'GET',
  paths: { main: ['/api/v1/files/:file_key'] },
  handler: ({ useCases }) => {
    const getFile = useCases.getFile;
    return async (ctx, caller) => {
      sendResult(ctx, caller.meter, await getFile.execute({ principal: caller.principal, meter: caller.meter, fileKey: pathParam(ctx, 'file_key') }), 200);
    };
  },
  openapi: () => ({
    operationId: 'getFile',
    tags: ['Files'],
    summary: 'Read a file',
    description: 'The file\'s record (never its bytes): status `pending`, `ready`, `rejected` or `expired`, with `reason` when rejected or expired. Accepts OAuth access tokens with scope `files:write`.',
    security: apiKeyOrToken('files:write'),
    parameters: [FILE_KEY_PARAMETER],
    responses: {
      '200': jsonResponse('The file.', 'FileResponse', { data: FILE_EXAMPLE }),
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
