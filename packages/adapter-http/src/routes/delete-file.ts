import { apiKeyOrToken, authenticatedHeaders, errorResponses, responseRef } from '../openapi/components.js';
import { sendResultEmpty } from '../pipeline/rate-limit.js';
import { pathParam, type AuthenticatedRoute } from '../route.js';
import { FILE_KEY_PARAMETER } from './file-examples.js';

/**
 * `DELETE /api/v1/files/{file_key}` → 204, its record and bytes gone (core
 * `DeleteFile`); 409 `file_in_use` while a queued or running run uses it. Scope
 * `files:write`; charged once. Source: docs/CONTRACT.md "Files".
 */
export const deleteFileRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'deleteFile',
  credential: 'deleteFile',
  method: 'DELETE',
  paths: { main: ['/api/v1/files/:file_key'] },
  handler: ({ useCases }) => {
    const deleteFile = useCases.deleteFile;
    return async (ctx, caller) => {
      sendResultEmpty(ctx, caller.meter, await deleteFile.execute({ principal: caller.principal, meter: caller.meter, fileKey: pathParam(ctx, 'file_key') }));
    };
  },
  openapi: () => ({
    operationId: 'deleteFile',
    tags: ['Files'],
    summary: 'Delete a file',
    description: 'Deletes the file\'s record and bytes. Refused with 409 `file_in_use` while a `queued` or `running` run was started with it (cancel the run or wait for it to end). Accepts OAuth access tokens with scope `files:write`.',
    security: apiKeyOrToken('files:write'),
    parameters: [FILE_KEY_PARAMETER],
    responses: {
      '204': { description: 'Deleted.', headers: authenticatedHeaders },
      ...errorResponses({
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
        '404': responseRef('NotFound'),
        '409': responseRef('ConflictFile'),
        '429': responseRef('TooManyRequests'),
        '503': responseRef('ServiceUnavailable'),
      }),
    },
  }),
};
