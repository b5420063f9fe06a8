import { header, headerRef, schemaRef } from '../openapi/components.js';
import { cachedAnswer } from '../pipeline/fixed-answer.js';
import { JSON_CONTENT_TYPE } from '../pipeline/problem-details.js';
import type { FixedRoute } from '../route.js';

/**
 * `GET /api/v1`: the API index, without a credential and without the `data` envelope;
 * computed once, cacheable (`ETag`, 304). Source: docs/api-spec.md "GET /api/v1"; docs/CONTRACT.md
 * "Index and versioning".
 */
export const describeApiRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'describeApi',
  method: 'GET',
  paths: { main: ['/api/v1'] },
  answer: ({ index, cacheMaxAgeSeconds }, deprecation) => cachedAnswer(JSON_CONTENT_TYPE, Buffer.from(JSON.stringify(index)), cacheMaxAgeSeconds, deprecation),
  openapi: () => ({
    operationId: 'describeApi',
    tags: ['Discovery'],
    summary: 'The API index',
    description: 'No credential needed. Returned directly (no `data` wrapper). Cacheable: `ETag` and `Cache-Control`; `If-None-Match` answers 304.',
    security: [{}],
    responses: {
      '200': {
        description: 'The index.',
        headers: { 'X-Request-Id': headerRef('X-Request-Id'), ETag: header('Entity tag of the index.', 'string'), 'Cache-Control': header('Caching policy.', 'string') },
        content: { 'application/json': { schema: schemaRef('ApiIndex') } },
      },
      '304': { description: 'Not modified (`If-None-Match` matched).' },
    },
  }),
};
