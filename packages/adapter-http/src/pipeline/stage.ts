import type { Context, Middleware } from 'koa';

/**
 * The rest of a request's handling after a stage, built once per app: called with the
 * request's context; a returned promise settles when that rest is done.
 */
export type NextStage = (ctx: Context) => Promise<void> | void;

/**
 * One stage of a listener's request pipeline (request id and error boundary, CORS,
 * routing, …): does its part around `next`, which it calls at most once with the same
 * `ctx`. Unlike a Koa middleware, `next` is a function made once when the pipeline is
 * built (it takes `ctx`), not a new function each request; and unlike koa-compose's, it
 * may throw synchronously (the next stage or the route ran without an async frame), so a
 * stage calls it where a throw is handled (inside its `try`, or `await`ed there).
 */
export type Stage = (ctx: Context, next: NextStage) => Promise<void> | void;

/**
 * The stages of a listener as one Koa middleware: `stages[0]` first, each handing over to
 * the next, the last to `last`. Every link is made here, once.
 *
 * Why not one `app.use` a stage: koa-compose makes a bound `dispatch` and a
 * `Promise.resolve` a layer, per request; with the stages of the main listener (request
 * context, CORS when configured, routing) chained here Koa runs one layer. A sync throw of
 * the first stage becomes a rejection, as in koa-compose. Measured in bench/BENCHMARKS.md
 * ("Allocation a run start", issue 11).
 */
export function pipeline(stages: readonly Stage[], last: NextStage): Middleware {
  let next = last;
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i] as Stage;
    const after = next;
    next = (ctx) => stage(ctx, after);
  }
  const first = next;
  return (ctx: Context) => {
    try {
      return Promise.resolve(first(ctx));
    } catch (error) {
      return Promise.reject(error);
    }
  };
}
