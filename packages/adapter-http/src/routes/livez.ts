import { JSON_CONTENT_TYPE } from '../pipeline/problem-details.js';
import type { FixedRoute } from '../route.js';

/** `GET /livez`: 200 `{"status": "ok"}` while the process serves requests; never cached. */
export const livezRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'livez',
  method: 'GET',
  paths: { main: ['/livez'] },
  answer: () => ({ headers: [], contentType: JSON_CONTENT_TYPE, body: JSON.stringify({ status: 'ok' }) }),
};
