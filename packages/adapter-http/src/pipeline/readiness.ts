import type { Context } from 'koa';
import type { HttpAppSettings } from '../settings.js';
import { sendJson } from './problem-details.js';

/**
 * The answer of `GET /readyz`, on the public and the admin listener alike: 200
 * `{"status": "ready", "checks": {...}}` when every readiness check passes and the
 * server is not draining, else 503 with `not_ready` or `draining`; each check `ok` or
 * `failing` (a check that rejects is failing). `Cache-Control: no-store`.
 */
export function readinessHandler(settings: Pick<HttpAppSettings, 'readiness' | 'isDraining'>): (ctx: Context) => Promise<void> {
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
}
