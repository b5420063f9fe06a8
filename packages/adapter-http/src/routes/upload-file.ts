import { errorResponses, jsonResponse, ONLY_REQUEST_ID, responseRef } from '../openapi/components.js';
import { sendError, sendJson } from '../pipeline/problem-details.js';
import { pathParam, requestHeader, type PublicRoute } from '../route.js';
import { FILE_KEY_PARAMETER, PREPARED_FILE_EXAMPLE } from './file-examples.js';

/**
 * `PUT /api/v1/files/{file_key}/upload?expires=&signature=`: the API's own signed upload
 * address (the filesystem store) → 200 `{"data": File}`, still `pending` (core
 * `ReceiveFileUpload`). No credential and no rate-limit window: the signature is the
 * authorization. The body is streamed to the store, never buffered; a refusal before it
 * is read, or a body longer than declared, closes the connection (its unread bytes are
 * not waited for). Source: docs/CONTRACT.md "Files".
 */
export const uploadFileRoute: PublicRoute = {
  kind: 'public',
  operationId: 'uploadFile',
  method: 'PUT',
  paths: { main: ['/api/v1/files/:file_key/upload'] },
  handler: ({ useCases }) => {
    const receive = useCases.receiveFileUpload;
    return async (ctx) => {
      const length = requestHeader(ctx, 'content-length');
      const gone = new AbortController();
      const onClose = (): void => {
        if (!ctx.req.complete) gone.abort(new Error('the client closed the upload before its end'));
      };
      ctx.req.once('close', onClose);
      try {
        const expires = typeof ctx.query['expires'] === 'string' ? ctx.query['expires'] : undefined;
        const signature = typeof ctx.query['signature'] === 'string' ? ctx.query['signature'] : undefined;
        const result = await receive.execute({
          fileKey: pathParam(ctx, 'file_key'),
          ...(expires !== undefined ? { expires } : {}),
          ...(signature !== undefined ? { signature } : {}),
          ...(length !== undefined && /^[0-9]{1,16}$/u.test(length) ? { contentLength: Number(length) } : {}),
          // Not destroyed when the store stops reading early (a body past size_bytes): the answer still goes out on this connection.
          body: ctx.req.iterator({ destroyOnReturn: false }),
          signal: gone.signal,
        });
        if (result.ok) {
          sendJson(ctx, 200, { data: result.value });
          return;
        }
        // The rest of the body is not read: close once answered rather than read megabytes for nothing.
        if (!ctx.req.complete) ctx.set('Connection', 'close');
        sendError(ctx, result.error);
      } catch (error) {
        // The client went away mid-body: nothing was kept, and nobody is left to answer.
        if (gone.signal.aborted) {
          ctx.req.destroy();
          ctx.respond = false;
          return;
        }
        throw error;
      } finally {
        ctx.req.off('close', onClose);
      }
    };
  },
  openapi: () => ({
    operationId: 'uploadFile',
    tags: ['Files'],
    summary: "Upload a file's bytes (the server's own upload address)",
    description: [
      'Where `upload_url` points when the server keeps files on its own disk: send exactly `size_bytes` bytes with `upload_headers` and **no credential** — the `expires` and `signature` query parameters are the authorization, valid for this one file until `expires_at`. With S3-compatible storage `upload_url` is a presigned S3 URL instead, and this operation is not used.',
      'The bytes are streamed to storage, never held in memory; nothing past `size_bytes` is written. A body with more bytes than declared is refused with 413 `upload_too_large`, one with fewer (or a `Content-Length` other than `size_bytes`) with 400 `upload_size_mismatch`; either way nothing is kept and the file stays `pending`, so the upload can be sent again. An upload cut off half way keeps nothing. A second upload replaces the first until `complete`.',
    ].join('\n\n'),
    security: [],
    parameters: [
      FILE_KEY_PARAMETER,
      { name: 'expires', in: 'query', required: true, description: 'Unix time (seconds) when the address expires; part of what is signed.', schema: { type: 'string', pattern: '^[0-9]{1,12}$' } },
      { name: 'signature', in: 'query', required: true, description: 'HMAC-SHA256 signature of the file key and `expires` (base64url).', schema: { type: 'string' } },
    ],
    requestBody: { required: true, description: 'The bytes of the file, exactly `size_bytes` of them.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
    responses: {
      '200': jsonResponse('Received: the file is still `pending` until `complete`.', 'FileResponse', { data: PREPARED_FILE_EXAMPLE }, ONLY_REQUEST_ID),
      ...errorResponses({
        '400': responseRef('BadRequestUpload'),
        '403': responseRef('UploadForbidden'),
        '404': responseRef('NotFound'),
        '409': responseRef('ConflictFile'),
        '413': responseRef('UploadTooLarge'),
        '503': responseRef('ServiceUnavailable'),
      }),
    },
  }),
};
