import { sendJson } from '../pipeline/problem-details.js';
import type { PublicRoute } from '../route.js';

/**
 * `GET /readyz`: 200 `{"status": "ready", "checks": {...}}` when every readiness check
 * passes and the server is not draining, else 503 with `not_ready` or `draining`; each
 * check `ok` or `failing`. `Cache-Control: no-store`.
 */
export const readyzRoute: PublicRoute = {
  kind: 'public',
  operationId: 'readyz',
  method: 'GET',
  paths: { main: ['/readyz'] },
  handler: ({ settings }) => {
    return async (ctx) => {
      const checks: Record<string, 'ok' | 'failing'> = {};
      await Promise.all(
        Object.entries(settings.readiness ?? {}).map(async ([name, check]) => {
          checks[name] = await check().then((up) => (up ? 'ok' : 'failing'), () => 'failing' as const);
        }),
      );
      const draining = settings.isDraining?.() ?? false;
      const ready = !draining && Object.values(checks).every((c) => c === 'ok');
      ctx.set('Cache-Control', 'no-store');
      sendJson(ctx, ready ? 200 : 503, { status: ready ? 'ready' : draining ? 'draining' : 'not_ready', checks });
    };
  },
};
