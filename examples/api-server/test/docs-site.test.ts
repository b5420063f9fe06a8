// The docs site in a real browser (docs/decisions.md "Docs site"): the API server as a child
// process, Debian's Chromium headless through playwright-core. The reference renders every
// operation of the served document, every documentation URL of the index and every link
// between pages resolves, no console error, nothing requested from another origin; a
// full-page screenshot of the reference is kept in test-artifacts/.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { parse } from 'yaml';
import { addresses, e2eConfig, type Addresses } from './support/fixture.js';
import { REPO_ROOT, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it). */
const CHROMIUM = '/usr/bin/chromium';
/**
 * Without the background-networking flags Chromium's own outbound connections (updates,
 * sync, field trials) fail noisily here, and they are requests to other origins besides
 * (docs/NOTES-dependencies.md). No sandbox: the tests run as root.
 */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Where the screenshot goes (gitignored). */
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
/** Limits unlike the defaults: the pages must state the server's own. */
const LIMITS = { credential: { requests: 450, window_seconds: 30 }, agent: { requests: 12, window_seconds: 20 } };
/** How long one page may take to load or render (the reference parses a 1 MB bundle). */
const PAGE_TIMEOUT_MS = 15_000;

/** The little of the browser's DOM the page functions use (the tests compile without the DOM library). */
interface BrowserWindow {
  readonly document: { getElementById(id: string): unknown };
}
/** An `<a>` element: its resolved, absolute `href`. */
interface Anchor {
  readonly href: string;
}

interface Operation {
  readonly operationId: string;
  readonly summary: string;
}

/** Every operation of an OpenAPI document: `paths.*.<method>` with its id and summary. */
function operationsOf(document: { paths?: Record<string, Record<string, unknown>> }): Operation[] {
  const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
  return Object.values(document.paths ?? {}).flatMap((item) =>
    Object.entries(item)
      .filter(([method]) => methods.has(method))
      .map(([, op]) => op as Operation),
  );
}

/** Every string under a key ending `documentation_url`, plus `developers_url` and `access_request_url`. */
function documentationUrls(value: unknown, found: Map<string, string> = new Map(), at = ''): Map<string, string> {
  if (Array.isArray(value)) value.forEach((v, i) => documentationUrls(v, found, `${at}/${i}`));
  else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'string' && (key.endsWith('documentation_url') || key === 'developers_url' || key === 'access_request_url')) found.set(`${at}/${key}`, v);
      else documentationUrls(v, found, `${at}/${key}`);
    }
  }
  return found;
}

describe('docs site in headless Chromium (child process)', function () {
  this.timeout(60_000);
  let dir: Awaited<ReturnType<typeof tempDir>> | undefined;
  let at: Addresses;
  let server: ServerProcess | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  /** Problems any page showed: console errors, uncaught errors, failed requests, requests to another origin. */
  const problems: string[] = [];

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      if (process.env['CI'] !== undefined) throw new Error(`${CHROMIUM} is missing (.ci/run installs it: apt-get install chromium); CI is set, so this fails instead of skipping`);
      console.log(`      skipped: ${CHROMIUM} is not installed (apt-get install chromium)`);
      this.skip();
    }
    dir = await tempDir();
    at = await addresses();
    const config = e2eConfig(at, {});
    delete config['index']; // the documentation URLs of the server itself, not the fixture's
    config['rate_limits'] = LIMITS;
    const configPath = await writeConfig(dir.path, config);
    // The server and the browser start at the same time (neither needs the other until a page
    // is opened); whatever started is kept for `after` to stop, and a failure fails this hook.
    const [started, launched] = await Promise.allSettled([
      startServerProcess(configPath, at.url, at.egressUrl),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 20_000 }),
    ]);
    if (started.status === 'fulfilled') server = started.value;
    if (launched.status === 'fulfilled') browser = launched.value;
    for (const outcome of [started, launched]) if (outcome.status === 'rejected') throw outcome.reason;
    context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    context.on('page', (page) => {
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error on ${page.url()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`uncaught on ${page.url()}: ${error.message}`));
      page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText ?? '?'})`));
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== at.url) problems.push(`request to another origin: ${request.url()}`);
      });
    });
  });

  afterEach(function () {
    const seen = problems.splice(0);
    expect(seen, 'console errors, uncaught errors, failed requests or requests to another origin').to.deep.equal([]);
  });

  after(async function () {
    await browser?.close();
    await server?.kill();
    await dir?.remove();
  });

  /** Opens `url` in a new page; asserts a 200 HTML answer with the docs' Content-Security-Policy. */
  async function open(url: string): Promise<Page> {
    const page = await context.newPage();
    const answer = await page.goto(url, { timeout: PAGE_TIMEOUT_MS, waitUntil: 'load' });
    expect(answer?.status(), url).to.equal(200);
    expect(answer?.headers()['content-type'], url).to.equal('text/html; charset=utf-8');
    expect(answer?.headers()['content-security-policy'], url).to.include("default-src 'self'");
    return page;
  }

  it('renders the API reference with every operation of the served document, and keeps a screenshot', async function () {
    const served = parse(await (await fetch(`${at.url}/openapi.yaml`)).text()) as Parameters<typeof operationsOf>[0];
    const operations = operationsOf(served);
    expect(operations.length, 'operations in the served document').to.be.greaterThan(5);
    const page = await open(`${at.url}/docs/api-reference`);
    const ids = operations.map((op) => op.operationId);
    // Redoc renders each operation as a section `operation/<operationId>`.
    await page.waitForFunction((all) => all.every((id) => (globalThis as unknown as BrowserWindow).document.getElementById(`operation/${id}`) !== null), ids, { timeout: PAGE_TIMEOUT_MS });
    for (const op of operations) {
      const text = await page.locator(`[id="operation/${op.operationId}"]`).first().innerText();
      expect(text, op.operationId).to.include(op.summary);
    }
    await mkdir(ARTIFACTS, { recursive: true });
    const path = join(ARTIFACTS, 'docs-reference.png');
    await page.screenshot({ path, fullPage: true, timeout: PAGE_TIMEOUT_MS });
    console.log(`      screenshot: ${path}`);
    await page.close();
  });

  it("resolves every documentation URL of the index to a page of this server, and its anchor", async function () {
    const index = (await (await fetch(`${at.url}/api/v1`)).json()) as unknown;
    const urls = documentationUrls(index);
    expect([...urls.keys()]).to.include.members(['/documentation_url', '/developers_url', '/authentication/methods/0/documentation_url', '/onboarding/access_request_url', '/rate_limits/documentation_url', '/versioning/documentation_url', '/clients/cli_documentation_url', '/webhooks_documentation_url']);
    for (const [field, url] of urls) expect(url.startsWith(`${at.url}/docs`), `${field}: ${url}`).to.equal(true);
    // Each in a page of its own, all at once.
    await Promise.all(
      [...urls].map(async ([field, url]) => {
        const page = await open(url);
        const anchor = new URL(url).hash.slice(1);
        if (anchor !== '') expect(await page.locator(`[id="${anchor}"]`).count(), `${field}: #${anchor}`).to.equal(1);
        await page.close();
      }),
    );
  });

  it('renders every guide page with the server\'s own values, and every link between pages resolves', async function () {
    const home = await open(`${at.url}/docs`);
    const nav = await home.locator('nav.pages a').evaluateAll((links) => links.map((a) => (a as unknown as Anchor).href));
    await home.close();
    expect(nav.length, 'pages in the navigation').to.be.greaterThan(8);
    expect(nav).to.include(`${at.url}/docs/api-reference`);
    const checked = new Map<string, number>();
    for (const url of nav.filter((u) => !u.endsWith('/docs/api-reference'))) {
      const page = await open(url);
      expect(await page.locator('main.guide h1').count(), `${url}: one title`).to.equal(1);
      // Every page links every page (the navigation is the same everywhere).
      expect(await page.locator('nav.pages a').evaluateAll((links) => links.map((a) => (a as unknown as Anchor).href)), url).to.deep.equal(nav);
      const links = await page.locator('main.guide a').evaluateAll((all) => all.map((a) => (a as unknown as Anchor).href));
      for (const link of links) {
        const target = new URL(link);
        expect(target.origin, `${url} links ${link}`).to.equal(at.url);
        const without = `${target.origin}${target.pathname}${target.search}`;
        if (!checked.has(without)) checked.set(without, (await fetch(without)).status);
        expect(checked.get(without), `${url} links ${link}`).to.equal(200);
        if (target.hash !== '' && without.includes('/docs')) {
          const other = await open(without);
          expect(await other.locator(`[id="${target.hash.slice(1)}"]`).count(), `${url} links ${link}`).to.equal(1);
          await other.close();
        }
      }
      await page.close();
    }
    expect(checked.size, 'distinct link targets checked').to.be.greaterThan(5);
    const limits = await open(`${at.url}/docs/rate-limits`);
    const text = await limits.locator('main').innerText();
    expect(text).to.include('450 requests per 30 seconds').and.include('12 run starts per 20 seconds');
    expect(await limits.locator('main').innerText()).to.not.include('{{');
    await limits.close();
    const quickStart = await open(`${at.url}/docs`);
    expect(await quickStart.locator('main').innerText()).to.include(`curl -s ${at.url}/api/v1`);
    await quickStart.close();
  });
});
