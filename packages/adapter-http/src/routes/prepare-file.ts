import { apiKeyOrToken, contentEncodingParameter, errorResponses, idempotencyKeyParameter, jsonRequestBody, jsonResponse, replayableHeaders, responseRef } from '../openapi/components.js';
import { idempotencyStage } from '../pipeline/idempotency.js';
import { jsonBody } from '../pipeline/json-body.js';
import { sendResultAs } from '../pipeline/rate-limit.js';
import type { WireBody } from '@svc/core';
import type { Context } from 'koa';
import type { AuthenticatedRoute, Caller } from '../route.js';
import { PREPARED_FILE_EXAMPLE } from './file-examples.js';

/**
 * `POST /api/v1/files`: prepare a file → 201 `{"data": File}` (`pending`, with
 * `upload_url`, `upload_method`, `upload_headers`, `expires_at`) and `Location`
 * (core `PrepareFile`). Scope `files:write`; charged once to the credential's window;
 * `Idempotency-Key` honoured like the run start. Source: docs/CONTRACT.md "Files".
 */
export const prepareFileRoute: AuthenticatedRoute = {
  kind: 'authenticated',
  operationId: 'prepareFile',
  credential: 'prepareFile',
  method: 'POST',
  paths: { main: ['/api/v1/files'] },
  handler: ({ useCases, limits, settings }) => {
    const prepareFile = useCases.prepareFile;
    const idempotently = idempotencyStage(useCases.claimIdempotencyKey, settings.logger);
    const prepare = async (ctx: Context, caller: Caller, body: WireBody): Promise<void> => {
      const result = await prepareFile.execute({ principal: caller.principal, meter: caller.meter, body });
      if (result.ok) ctx.res.setHeader('Location', result.value.location);
      sendResultAs(ctx, caller.meter, result, 201, (prepared) => ({ data: prepared.file }));
    };
    return async (ctx, caller) => {
      const body = await jsonBody(ctx, limits.bodyLimitBytes);
      await idempotently(ctx, caller, body, body, prepare);
    };
  },
  openapi: ({ limits }) => ({
    operationId: 'prepareFile',
    tags: ['Files'],
    summary: 'Prepare a file upload',
    description: [
      'Declares a file (name, media type, exact size, optionally its SHA-256) and answers where to send its bytes: `PUT` exactly `size_bytes` bytes to `upload_url` with `upload_headers` and no credential (the address is signed and expires at `expires_at`, 1 hour by default), then call `POST /api/v1/files/{file_key}/complete`. The file is `pending` until then.',
      '`size_bytes` above the server\'s `files.max_bytes` (default 104857600, 100 MiB) is refused naming `/size_bytes`; a `file_name` with a path separator or a control character naming `/file_name`. The upload itself is not bound by the JSON body limit, only by `size_bytes`.',
      'Accepts OAuth access tokens with scope `files:write`. Charged to the credential\'s window once.',
    ].join('\n\n'),
    security: apiKeyOrToken('files:write'),
    parameters: [idempotencyKeyParameter, contentEncodingParameter(limits)],
    requestBody: jsonRequestBody('PrepareFileRequest', {
      pdf: { file_name: 'invoice-2026-11.pdf', content_type: 'application/pdf', size_bytes: 48213 },
    }),
    responses: {
      '201': jsonResponse('Created: the file is `pending`; PUT its bytes to `upload_url`. `Location` is the file.', 'FileResponse', { data: PREPARED_FILE_EXAMPLE }, {
        ...replayableHeaders,
        Location: { description: 'The file: `{base_url}/api/v1/files/{file_key}`.', schema: { type: 'string', format: 'uri' } },
      }),
      ...errorResponses({
        '400': responseRef('BadRequestRunStart'),
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
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
