import { cachedAnswer } from '../pipeline/fixed-answer.js';
import type { FixedRoute } from '../route.js';

/**
 * `GET /openapi.yaml` and `/docs/api-reference/openapi.yaml`: the OpenAPI 3.1 document,
 * assembled once from the route list (`openapi/document.ts`); cacheable.
 * Source: docs/CONTRACT.md "Index and versioning".
 */
export const openApiDocumentRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'openApiDocument',
  method: 'GET',
  paths: { main: ['/openapi.yaml', '/docs/api-reference/openapi.yaml'] },
  answer: ({ openApiYaml, cacheMaxAgeSeconds }) => cachedAnswer('application/yaml; charset=utf-8', openApiYaml(), cacheMaxAgeSeconds),
};
