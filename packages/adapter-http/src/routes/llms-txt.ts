import { llmsTxt } from '../llms-txt.js';
import { cachedAnswer } from '../pipeline/fixed-answer.js';
import type { FixedRoute } from '../route.js';

/** `GET /llms.txt`: the llms.txt text (see `llmsTxt`), with the docs site's pages when there is one; cacheable. */
export const llmsTxtRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'llmsTxt',
  method: 'GET',
  paths: { main: ['/llms.txt'] },
  answer: ({ index, limits, settings, cacheMaxAgeSeconds }) => cachedAnswer('text/plain; charset=utf-8', Buffer.from(llmsTxt(index, limits, settings.docs)), cacheMaxAgeSeconds),
};
