// The docs site the API server serves under /docs (docs/decisions.md "Docs site"): the
// guides of docs/guides/*.md rendered to HTML once, at start, with this server's own
// addresses and limits, and the API reference (Redoc's standalone bundle, served from this
// origin) on the live OpenAPI document. adapter-http only serves the pages it is handed.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBytes, type DocsPage, type DocsSite, type EnforcedLimits } from '@svc/adapter-http';
import type { ApiIndex } from '@svc/core';
import { Marked, type Tokens } from 'marked';
import { gfmHeadingId } from 'marked-gfm-heading-id';

/**
 * `docs/guides/` of the repository, from `src/` or `dist/` of examples/api-server alike
 * (both are two folders below the repository root).
 */
export const GUIDES_DIR = fileURLToPath(new URL('../../../docs/guides/', import.meta.url));

/**
 * The guides in the order of the navigation: the Markdown file's name (without `.md`) and
 * its path under the base URL. `index` is the home page at `/docs`. Every `*.md` of the
 * guides folder must be listed here, and every listed file must exist: the site refuses
 * to render otherwise, so the navigation always links every page.
 */
export const GUIDES: readonly { readonly name: string; readonly path: string }[] = [
  { name: 'index', path: '/docs' },
  { name: 'authentication', path: '/docs/authentication' },
  { name: 'access', path: '/docs/access' },
  { name: 'rate-limits', path: '/docs/rate-limits' },
  { name: 'errors', path: '/docs/errors' },
  { name: 'versioning', path: '/docs/versioning' },
  { name: 'runs', path: '/docs/runs' },
  { name: 'files', path: '/docs/files' },
  { name: 'webhooks', path: '/docs/webhooks' },
  { name: 'cli', path: '/docs/cli' },
  { name: 'developers', path: '/docs/developers' },
];

/** Path of the API reference page; its document is the served `/openapi.yaml`. */
export const REFERENCE_PATH = '/docs/api-reference';

const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JAVASCRIPT = 'text/javascript; charset=utf-8';

/** What the guides are rendered with: this server's index and enforced limits. */
export interface DocsSiteInput {
  /** The served index (`DescribeApi`): addresses, documentation URLs, the credential limit. */
  readonly index: ApiIndex;
  /** The limits the HTTP adapter enforces (`enforcedLimits`): per agent, body size. */
  readonly limits: EnforcedLimits;
  /** `{egress_url}`, without a trailing slash. */
  readonly egressUrl: string;
  /** Where the guides are; default {@link GUIDES_DIR}. */
  readonly guidesDir?: string;
}

/**
 * The values a guide can write as `{{name}}`: this server's own, so that every example
 * works as written against it. Source: docs/CONTRACT.md "Addresses", "Rate limits",
 * "Row writes" (body limit), "Index and versioning".
 */
function placeholders({ index, limits, egressUrl }: DocsSiteInput): ReadonlyMap<string, string> {
  const auth = index.authentication.methods[0];
  return new Map([
    ['api_name', index.name],
    ['base_url', index.base_url],
    ['egress_url', egressUrl],
    ['api_url', `${index.base_url}/api/${index.version}`],
    ['openapi_url', index.openapi_url],
    ['llms_txt_url', index.llms_txt_url],
    ['oauth_metadata_url', auth?.metadata_url ?? ''],
    ['scopes', (auth?.scopes_supported ?? []).map((scope) => `\`${scope}\``).join(', ')],
    ['access_request_url', index.onboarding.access_request_url],
    ['credential_limit', String(index.rate_limits.requests)],
    ['credential_window_seconds', String(index.rate_limits.window_seconds)],
    ['agent_limit', String(limits.agent.limit)],
    ['agent_window_seconds', String(limits.agent.windowSeconds)],
    ['body_limit', formatBytes(limits.bodyLimitBytes)],
    ['minimum_sunset_notice_days', String(index.versioning.minimum_sunset_notice_days)],
    ['cli_name', index.clients.cli],
  ]);
}

/** `text` safe inside HTML text and double-quoted attributes. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/gu, (c) => `&#${c.charCodeAt(0)};`);
}

/** The path part of the base URL (`''` at the root): the site's links are relative to the origin. */
function basePath(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/u, '');
}

interface Guide {
  readonly name: string;
  readonly path: string;
  readonly title: string;
  readonly html: string;
}

/** A link between guides as written in the Markdown (`authentication.md#scopes`, as on GitHub). */
const GUIDE_LINK = /^(?:\.\/)?([a-z0-9-]+)\.md(#[\w-]+)?$/u;

function renderGuides(input: DocsSiteInput, dir: string): Guide[] {
  const values = placeholders(input);
  const base = basePath(input.index.base_url);
  const listed = new Set(GUIDES.map((g) => g.name));
  const files = readdirSync(dir).filter((f) => f.endsWith('.md'));
  const unlisted = files.filter((f) => !listed.has(f.slice(0, -3)));
  if (unlisted.length > 0) throw new Error(`docs/guides: ${unlisted.join(', ')} not listed in GUIDES (examples/api-server/src/docs-site.ts)`);
  const pathOf = new Map(GUIDES.map((g) => [g.name, g.path]));
  return GUIDES.map(({ name, path }) => {
    const file = `docs/guides/${name}.md`;
    const markdown = readFileSync(join(dir, `${name}.md`), 'utf8').replace(/\{\{([a-z_]+)\}\}/gu, (_, key: string) => {
      const value = values.get(key);
      if (value === undefined) throw new Error(`${file}: unknown placeholder {{${key}}}`);
      return value;
    });
    // A fresh instance per page: heading ids are unique within a page, as on GitHub.
    const marked = new Marked(gfmHeadingId(), {
      walkTokens(token) {
        if (token.type !== 'link') return;
        const link = token as Tokens.Link;
        const match = GUIDE_LINK.exec(link.href);
        if (match === null) return;
        const target = pathOf.get(match[1] ?? '');
        if (target === undefined) throw new Error(`${file}: a link to ${link.href}, which is no guide`);
        link.href = `${base}${target}${match[2] ?? ''}`;
      },
    });
    const html = marked.parse(markdown, { async: false });
    const title = /^# (.+)$/mu.exec(markdown)?.[1];
    if (title === undefined) throw new Error(`${file}: no "# Title" line`);
    return { name, path, title, html };
  });
}

/**
 * Every page's frame: a sticky header with the API's name and the navigation linking
 * every page (the current one marked `aria-current`), then the content.
 */
function layout(site: { readonly apiName: string; readonly base: string; readonly nav: readonly { path: string; title: string }[] }, page: { path: string; title: string }, main: string, tail = ''): string {
  const items = site.nav
    .map((item) => `<li><a href="${site.base}${item.path}"${item.path === page.path ? ' aria-current="page"' : ''}>${escapeHtml(item.title)}</a></li>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · ${escapeHtml(site.apiName)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${site.base}/docs/assets/docs.css">
</head>
<body>
<header class="site">
<a class="brand" href="${site.base}/docs">${escapeHtml(site.apiName)}</a>
<nav class="pages" aria-label="Docs pages"><ul>
${items}
</ul></nav>
</header>
${main}
${tail}</body>
</html>
`;
}

/**
 * Where Redoc 2.5's standalone bundle loads its vendor's logo from, in the "API docs by
 * Redocly" line of its side menu: always, whatever the options (`hideLogo` is about the
 * document's own `x-logo`), and the `redoc` package ships no copy of it.
 */
const REDOC_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
/** An empty 1×1 SVG in its place: the attribution text stays, nothing leaves the origin. */
const EMPTY_IMAGE = 'data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27 width=%271%27 height=%271%27/%3E';

/**
 * Redoc's standalone bundle with its one request to another origin (the logo, see
 * {@link REDOC_LOGO_URL}) pointed at an inline image instead; the Content-Security-Policy
 * would block it anyway, with a console error on every page view.
 * @throws Error when the bundle does not hold that URL exactly once (another Redoc version:
 *   look again at what it loads before serving it).
 */
function selfContainedRedoc(bundle: string): string {
  const parts = bundle.split(REDOC_LOGO_URL);
  if (parts.length !== 2) throw new Error(`redoc.standalone.js holds ${REDOC_LOGO_URL} ${parts.length - 1} times, not once: check what this Redoc version loads`);
  return parts.join(EMPTY_IMAGE);
}

/**
 * Starts Redoc on the reference page: a file of the site, since the Content-Security-Policy
 * allows no inline script. `scrollYOffset`: the sticky header stays above the sections it
 * scrolls to.
 */
const REFERENCE_SCRIPT = `// Renders the API reference of the served OpenAPI document (examples/api-server/src/docs-site.ts).
(function () {
  var element = document.getElementById('redoc');
  Redoc.init(element.getAttribute('data-spec-url'), {
    scrollYOffset: 'header.site',
    expandResponses: '200,201,202',
    sortTagsAlphabetically: false
  }, element, function (error) {
    if (error) {
      element.textContent = 'The API reference could not be rendered: ' + error.message;
      console.error(error);
    }
  });
})();
`;

/**
 * Renders the docs site once: every guide of `docs/guides/*.md` (Markdown by marked, GitHub
 * heading ids, `{{placeholders}}` replaced by this server's values, links to `other.md`
 * turned into links to its page), the stylesheet `docs/guides/assets/docs.css`, and the API
 * reference page with Redoc's standalone bundle (from the `redoc` package) loading
 * `{base_url}/openapi.yaml`. Every URL of the site is relative to the origin, under the
 * base URL's path.
 * @returns the site; `undefined` when the guides folder is absent (a packed install
 *   without the repository's `docs/`): `/docs` then answers the llms.txt text.
 * @throws Error naming the file for a guide that is not listed in {@link GUIDES}, a missing
 *   guide or title, an unknown placeholder or a link to a guide that does not exist.
 */
export function renderDocsSite(input: DocsSiteInput): DocsSite | undefined {
  const dir = input.guidesDir ?? GUIDES_DIR;
  if (!existsSync(dir)) return undefined;
  const guides = renderGuides(input, dir);
  const base = basePath(input.index.base_url);
  const reference = { path: REFERENCE_PATH, title: 'API reference' };
  const site = { apiName: input.index.name, base, nav: [...guides, reference] };
  const pages: DocsPage[] = guides.map((g) => ({ path: g.path, title: g.title, contentType: HTML, body: Buffer.from(layout(site, g, `<main class="guide">\n${g.html}</main>`)) }));
  pages.push({
    ...reference,
    contentType: HTML,
    body: Buffer.from(
      layout(
        site,
        reference,
        `<main class="reference"><div id="redoc" data-spec-url="${base}/openapi.yaml"></div></main>`,
        `<script src="${base}/docs/assets/redoc.standalone.js"></script>\n<script src="${base}/docs/assets/reference.js"></script>\n`,
      ),
    ),
  });
  const require = createRequire(import.meta.url);
  const redoc = selfContainedRedoc(readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8'));
  pages.push({ path: '/docs/assets/redoc.standalone.js', contentType: JAVASCRIPT, body: Buffer.from(redoc) });
  pages.push({ path: '/docs/assets/reference.js', contentType: JAVASCRIPT, body: Buffer.from(REFERENCE_SCRIPT) });
  pages.push({ path: '/docs/assets/docs.css', contentType: CSS, body: readFileSync(join(dir, 'assets', 'docs.css')) });
  return { pages };
}
