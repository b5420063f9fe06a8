import { readinessHandler } from '../pipeline/readiness.js';
import type { PublicRoute } from '../route.js';

/**
 * `GET /readyz`: 200 `{"status": "ready", "checks": {...}}` when every readiness check
 * passes and the server is not draining, else 503 with `not_ready` or `draining`; each
 * check `ok` or `failing`. `Cache-Control: no-store`. The admin listener answers the same
 * (`pipeline/readiness.ts`).
 */
export const readyzRoute: PublicRoute = {
  kind: 'public',
  operationId: 'readyz',
  method: 'GET',
  paths: { main: ['/readyz'] },
  handler: ({ settings }) => readinessHandler(settings),
};
