import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { HttpProblem } from '../problem.js';
import type { RouteMethod } from '../route.js';
import { sendFixed, type FixedAnswer } from './fixed-answer.js';
import { sendProblem } from './problem-details.js';

/** A route's handler on one listener, built once. */
export type Handler = (ctx: Context) => Promise<void> | void;

/** One route as a listener serves it. */
export interface MountedRoute {
  readonly method: RouteMethod;
  readonly paths: readonly string[];
  readonly handler: Handler;
  /** Set for fixed routes: answered before the router on its exact paths. */
  readonly fixed?: FixedAnswer;
}

/**
 * What a known path answers to a method it does not serve: `method_not_allowed` (405
 * with `Allow`; `OPTIONS` 204 with `Allow`) on the main address; `not_found` on the egress
 * address, which serves nothing but its operations (docs/CONTRACT.md "Addresses").
 */
export type OtherMethods = 'method_not_allowed' | 'not_found';

function notFound(ctx: Context): void {
  sendProblem(ctx, 'not_found', `Nothing is served at ${ctx.method} ${ctx.path}.`);
}

/**
 * Route and method matching, decided here only, from one route list: returns the
 * middleware of a listener. Paths match as @koa/router matches them (case-insensitive,
 * an optional trailing slash); `HEAD` runs the `GET` handler (Koa drops the body); an
 * unknown path answers 404 `not_found`. The exact paths of fixed answers are answered
 * first, from a map, without the router: they are the most requested and cheapest answers.
 */
export function routeMatching(routes: readonly MountedRoute[], otherMethods: OtherMethods): Middleware[] {
  const byPath = new Map<string, Map<string, Handler>>();
  const fixed = new Map<string, FixedAnswer>();
  for (const route of routes) {
    for (const path of route.paths) {
      let methods = byPath.get(path);
      if (methods === undefined) byPath.set(path, (methods = new Map()));
      if (methods.has(route.method)) throw new Error(`two routes serve ${route.method} ${path}`);
      methods.set(route.method, route.handler);
      if (route.fixed !== undefined) fixed.set(path, route.fixed);
    }
  }
  const router = new Router();
  for (const [path, methods] of byPath) {
    if (otherMethods === 'not_found') {
      for (const [method, handler] of methods) router.register(path, [method], handler);
      continue;
    }
    const allowed = [...methods.keys()];
    if (methods.has('GET')) allowed.push('HEAD');
    allowed.push('OPTIONS');
    const allow = allowed.join(', ');
    router.all(path, (ctx: Context) => {
      const handler = methods.get(ctx.method === 'HEAD' ? 'GET' : ctx.method);
      if (handler !== undefined) return handler(ctx);
      ctx.set('Allow', allow);
      if (ctx.method === 'OPTIONS') {
        ctx.status = 204;
        return;
      }
      throw new HttpProblem('method_not_allowed', `Method ${ctx.method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
    });
  }
  const stages: Middleware[] = [];
  if (fixed.size > 0) {
    stages.push((ctx: Context, next: Next) => {
      const method = ctx.method;
      if (method === 'GET' || method === 'HEAD') {
        const answer = fixed.get(ctx.path);
        if (answer !== undefined) return sendFixed(ctx, answer);
      }
      return next();
    });
  }
  stages.push(router.routes() as unknown as Middleware, notFound);
  return stages;
}
