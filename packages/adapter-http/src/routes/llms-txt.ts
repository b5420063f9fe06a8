import { llmsTxt } from '../llms-txt.js';
import { cachedAnswer } from '../pipeline/fixed-answer.js';
import type { FixedRoute } from '../route.js';

/** `GET /llms.txt` and `/docs`: the llms.txt text (see `llmsTxt`); cacheable. */
export const llmsTxtRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'llmsTxt',
  method: 'GET',
  paths: { main: ['/llms.txt', '/docs'] },
  answer: ({ index, limits, cacheMaxAgeSeconds }) => cachedAnswer('text/plain; charset=utf-8', Buffer.from(llmsTxt(index, limits)), cacheMaxAgeSeconds),
};
