import { apiKeyOrToken, errorResponses, jsonResponse, responseRef } from '../openapi/components.js';
import { sendResult } from '../pipeline/rate-limit.js';
import { pathParam, type AuthenticatedRoute } from '../route.js';
import { FILE_EXAMPLE, FILE_KEY_PARAMETER } from './file-examples.js';

/**
 * `POST /api/v1/files/{file_key}/complete`: check the uploaded bytes → 200 `{"data":
 * File}`, `ready` or `rejected` with `reason` (core `CompleteFile`). No body is read.
 * Scope `files:write`; charged once. Source: docs/CONTRACT.md "Files".
 */
export const completeFileRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'completeFile',
  credential: 'completeFile',
  method: 'POST',
  paths: { main: ['/api/v1/files/:file_key/complete'] },
  handler: ({ useCases }) => {
    const completeFile = useCases.completeFile;
    return async (ctx, caller) => {
      sendResult(ctx, caller.meter, await completeFile.execute({ principal: caller.principal, meter: caller.meter, fileKey: pathParam(ctx, 'file_key') }), 200);
    };
  },
  openapi: () => ({
    operationId: 'completeFile',
    tags: ['Files'],
    summary: 'Complete a file upload',
    description: [
      'Checks the bytes sent to `upload_url`: their size against `size_bytes`, their SHA-256 against the declared `sha256` (when one was declared), and their content against `content_type` (the type sniffed from the first bytes: a PNG declared `application/pdf` is refused; a type that cannot be sniffed, such as plain text or CSV, is taken as declared). The file becomes `ready` (then `sha256` is the digest of its bytes, and a run start may name it) or `rejected` with a `reason` (its bytes are deleted; prepare it again).',
      'Calling it again answers the file as it is. Before any bytes were uploaded: 409 `file_not_uploaded`; after `expires_at`: 409 `file_not_pending`. No request body. Accepts OAuth access tokens with scope `files:write`.',
    ].join('\n\n'),
    security: apiKeyOrToken('files:write'),
    parameters: [FILE_KEY_PARAMETER],
    responses: {
      '200': jsonResponse('The file, `ready` or `rejected`.', 'FileResponse', { data: FILE_EXAMPLE }),
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
