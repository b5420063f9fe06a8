import type { Context } from 'koa';
import { DOCS_CONTENT_SECURITY_POLICY, type DocsPage } from '../docs-site.js';
import { llmsTxt } from '../llms-txt.js';
import { cachedAnswer, sendFixed, type FixedAnswer } from '../pipeline/fixed-answer.js';
import { sendProblem } from '../pipeline/problem-details.js';
import type { FixedRoute, PublicRoute, RouteDeps } from '../route.js';

/** The headers of every docs page and asset, before `ETag` and `Cache-Control`. */
const DOCS_HEADERS = [
  ['Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY],
  // The assets are scripts and a stylesheet: a browser runs them only as the type they are sent as.
  ['X-Content-Type-Options', 'nosniff'],
] as const;

function pageAnswer(page: DocsPage, cacheMaxAgeSeconds: number): FixedAnswer {
  return cachedAnswer(page.contentType, page.body, cacheMaxAgeSeconds, DOCS_HEADERS);
}

/**
 * `GET /docs`: the docs site's home page (`HttpAppSettings.docs`, the page at `/docs`) as
 * HTML; without a docs site (an app embedded elsewhere), the llms.txt text, as before
 * there was one. Cacheable like every fixed answer.
 */
export const docsHomeRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'docs',
  method: 'GET',
  paths: { main: ['/docs'] },
  answer: ({ settings, index, limits, cacheMaxAgeSeconds }) => {
    const home = settings.docs?.pages.find((page) => page.path === '/docs');
    if (home !== undefined) return pageAnswer(home, cacheMaxAgeSeconds);
    return cachedAnswer('text/plain; charset=utf-8', Buffer.from(llmsTxt(index, limits)), cacheMaxAgeSeconds);
  },
};

/** A request path as the docs site's pages are keyed: lowercase, without a trailing slash. */
function pageKey(path: string): string {
  return path.toLowerCase().replace(/\/+$/u, '');
}

function pageHandler({ settings, cacheMaxAgeSeconds }: RouteDeps): (ctx: Context) => void {
  // Rendered once, at app build: every answer (body, ETag) is ready before the first request.
  const answers = new Map((settings.docs?.pages ?? []).map((page) => [pageKey(page.path), pageAnswer(page, cacheMaxAgeSeconds)]));
  return (ctx) => {
    const answer = answers.get(pageKey(ctx.path));
    if (answer !== undefined) sendFixed(ctx, answer);
    else sendProblem(ctx, 'not_found', `Nothing is served at ${ctx.method} ${ctx.path}.`);
  };
}

/**
 * `GET /docs/{page}` and `/docs/assets/{file}`: the other pages and the assets of the docs
 * site (`HttpAppSettings.docs`), with a `Content-Security-Policy` that allows nothing from
 * another origin, `ETag` and `Cache-Control`; 404 `not_found` for a page the site does not
 * have (every page without a docs site).
 */
export const docsPageRoute: PublicRoute = {
  kind: 'public',
  operationId: 'docsPage',
  method: 'GET',
  paths: { main: ['/docs/:page', '/docs/assets/:file'] },
  handler: pageHandler,
};
