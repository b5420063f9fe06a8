import type { Context } from 'koa';
import { pathToRegexp } from 'path-to-regexp';
import { HttpProblem } from '../problem.js';
import type { RouteMethod } from '../route.js';
import { sendFixed, type FixedAnswer } from './fixed-answer.js';
import { sendProblem } from './problem-details.js';
import type { NextStage } from './stage.js';

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
 * One path of a listener, compiled once: its regular expression and the name of each
 * capture, as @koa/router compiled it (path-to-regexp with `sensitive: false`,
 * `end: true` and `trailing: true`, the options its `strict: false` default comes to).
 */
interface CompiledPath {
  readonly path: string;
  readonly regexp: RegExp;
  /** The parameter name of each capture, in order. */
  readonly names: readonly string[];
  /** The handler of each method this path serves. */
  readonly methods: ReadonlyMap<string, Handler>;
  /** What a method it does not serve gets; `undefined` on `not_found` listeners (the next path is tried). */
  readonly otherMethod?: (ctx: Context) => void;
}

function compilePath(path: string, methods: ReadonlyMap<string, Handler>, otherMethod: CompiledPath['otherMethod']): CompiledPath {
  const { regexp, keys } = pathToRegexp(path, { sensitive: false, end: true, trailing: true });
  return { path, regexp, names: keys.map((key) => key.name), methods, ...(otherMethod !== undefined ? { otherMethod } : {}) };
}

/** As @koa/router decodes a parameter: `decodeURIComponent`, the text as is when it is not valid. */
function decodeParam(text: string): string {
  // Without a `%` there is nothing to decode, and decodeURIComponent returns the text as it
  // is; not calling it spares a run start ~1.9k instructions (callgrind: a C++ builtin).
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Route and method matching, decided here only, from one route list: returns the
 * last stage of a listener's pipeline (`pipeline/stage.ts`). Paths match as @koa/router 15 matched them, with the same
 * path-to-regexp expressions (case-insensitive, an optional trailing slash), tried in the
 * order the routes list them, and the first match wins; its parameters are
 * percent-decoded as @koa/router decoded them (an empty one is left out, one that does
 * not decode is kept as sent) into `ctx.params`, and the matched path template is
 * `ctx._matchedRoute` (the span's `http.route`). `HEAD` runs the `GET` handler (Koa drops
 * the body); an unknown path answers 404 `not_found`. The exact paths of fixed answers
 * are answered first, from a map, without the expressions: they are the most requested
 * and cheapest answers.
 *
 * Why not @koa/router's middleware: per request it read `ctx.host` for its host option,
 * tested every route's expression, built the matched lists and a koa-compose chain, and
 * ran the matched expression again for the parameters: 8.8 µs of a run start's CPU
 * against 12.7 µs for the handler it ran (inclusive times, bench profile of the run
 * start in memory); this loop tests the expressions once, in order, until one matches.
 */
export function routeMatching(routes: readonly MountedRoute[], otherMethods: OtherMethods): NextStage {
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
  const table: CompiledPath[] = [];
  for (const [path, methods] of byPath) {
    if (otherMethods === 'not_found') {
      table.push(compilePath(path, methods, undefined));
      continue;
    }
    const allowed = [...methods.keys()];
    if (methods.has('GET')) allowed.push('HEAD');
    allowed.push('OPTIONS');
    const allow = allowed.join(', ');
    table.push(
      compilePath(path, methods, (ctx) => {
        ctx.set('Allow', allow);
        if (ctx.method === 'OPTIONS') {
          ctx.status = 204;
          return;
        }
        throw new HttpProblem('method_not_allowed', `Method ${ctx.method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
      }),
    );
  }
  const matchRoute = (ctx: Context): Promise<void> | void => {
    const path = ctx.path;
    const method = ctx.method;
    for (const route of table) {
      const match = route.regexp.exec(path);
      if (match === null) continue;
      const handler = route.methods.get(method === 'HEAD' ? 'GET' : method);
      if (handler === undefined && route.otherMethod === undefined) continue;
      const params: Record<string, string> = {};
      for (let i = 1; i < match.length; i++) {
        const value = match[i];
        const name = route.names[i - 1];
        if (name !== undefined && value !== undefined && value.length > 0) params[name] = decodeParam(value);
      }
      ctx['params'] = params;
      ctx['_matchedRoute'] = route.path;
      return handler !== undefined ? handler(ctx) : route.otherMethod?.(ctx);
    }
    notFound(ctx);
  };
  if (fixed.size === 0) return matchRoute;
  // One stage for both: the fixed answers first, by exact path, then the table.
  return (ctx: Context) => {
    const method = ctx.method;
    if (method === 'GET' || method === 'HEAD') {
      const answer = fixed.get(ctx.path);
      if (answer !== undefined) return sendFixed(ctx, answer);
    }
    return matchRoute(ctx);
  };
}
