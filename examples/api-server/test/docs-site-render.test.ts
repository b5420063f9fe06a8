// Rendering of the docs site's guides (docs/decisions.md "Docs site"), on guides written
// into a temporary folder: the server's own values, links between guides under the base
// URL's path, and the mistakes that stop the server at start, each naming its file.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCore, DEFAULT_BODY_LIMIT_BYTES, DEFAULT_RATE_LIMITS } from '@svc/core';
import { expect } from 'chai';
import { GUIDES, renderDocsSite, type DocsSiteInput } from '../src/docs-site.js';
import { tempDir } from './support/server-process.js';

/** An input whose base URL has a path, as behind a proxy that serves the API under `/svc`. */
function input(guidesDir: string): DocsSiteInput {
  const index = createCore({}, { baseUrl: 'https://api.example.test/svc', egressUrl: 'https://egress.example.test' }).describeApi.execute();
  return { index, limits: { credential: DEFAULT_RATE_LIMITS.credential, agent: { limit: 7, windowSeconds: 9 }, bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES }, egressUrl: 'https://egress.example.test', guidesDir };
}

/** Writes every guide of the navigation (`# <name>` each), `overrides` replacing some, and the stylesheet. */
async function writeGuides(dir: string, overrides: Record<string, string> = {}): Promise<void> {
  await mkdir(join(dir, 'assets'), { recursive: true });
  await writeFile(join(dir, 'assets', 'docs.css'), 'body { margin: 0; }');
  for (const { name } of GUIDES) await writeFile(join(dir, `${name}.md`), overrides[name] ?? `# Guide ${name}\n`);
}

describe('api-server: rendering the docs site', function () {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async function () {
    dir = await tempDir();
  });
  afterEach(async function () {
    await dir.remove();
  });

  const page = (site: ReturnType<typeof renderDocsSite>, path: string): string => site?.pages.find((p) => p.path === path)?.body.toString() ?? '';

  it("writes the server's values, links guides under the base URL's path, and gives headings ids", async function () {
    await writeGuides(dir.path, {
      'rate-limits': '# Limits\n\n## Per agent\n\n{{agent_limit}} per {{agent_window_seconds}} s; `curl {{api_url}}`; see [errors](errors.md#codes) and [home](./index.md).\n',
      errors: '# Errors\n\n## Codes\n',
    });
    const site = renderDocsSite(input(dir.path));
    const html = page(site, '/docs/rate-limits');
    expect(html).to.include('7 per 9 s; <code>curl https://api.example.test/svc/api/v1</code>');
    expect(html).to.include('<a href="/svc/docs/errors#codes">errors</a>').and.include('<a href="/svc/docs">home</a>');
    expect(html).to.include('<h2 id="per-agent">Per agent</h2>');
    expect(html).to.include('<link rel="stylesheet" href="/svc/docs/assets/docs.css">');
    expect(html).to.include('<a href="/svc/docs/rate-limits" aria-current="page">Limits</a>');
    expect(page(site, '/docs/api-reference')).to.include('data-spec-url="/svc/openapi.yaml"');
    expect(site?.pages.find((p) => p.path === '/docs/rate-limits')?.title).to.equal('Limits');
    const redoc = page(site, '/docs/assets/redoc.standalone.js');
    expect(redoc.length, 'the Redoc bundle').to.be.greaterThan(500_000);
    expect(redoc).to.not.include('cdn.redoc.ly');
  });

  it('stops on an unknown placeholder, a link to no guide, a guide without a title or one left out of the navigation, naming the file', async function () {
    await writeGuides(dir.path, { cli: '# CLI\n\n{{no_such_value}}\n' });
    expect(() => renderDocsSite(input(dir.path))).to.throw('docs/guides/cli.md: unknown placeholder {{no_such_value}}');
    await writeGuides(dir.path, { cli: '# CLI\n\nSee [this](nowhere.md).\n' });
    expect(() => renderDocsSite(input(dir.path))).to.throw('docs/guides/cli.md: a link to nowhere.md, which is no guide');
    await writeGuides(dir.path, { cli: 'No title.\n' });
    expect(() => renderDocsSite(input(dir.path))).to.throw('docs/guides/cli.md: no "# Title" line');
    await writeGuides(dir.path);
    await writeFile(join(dir.path, 'extra.md'), '# Extra\n');
    expect(() => renderDocsSite(input(dir.path))).to.throw('docs/guides: extra.md not listed in GUIDES');
  });

  it('renders nothing when the guides folder is absent (a packed install)', function () {
    expect(renderDocsSite(input(join(dir.path, 'missing')))).to.equal(undefined);
  });

  it("renders the repository's own guides", function () {
    const index = createCore({}, { baseUrl: 'http://127.0.0.1:8080', egressUrl: 'http://127.0.0.1:8081' }).describeApi.execute();
    const site = renderDocsSite({ index, limits: { credential: DEFAULT_RATE_LIMITS.credential, agent: DEFAULT_RATE_LIMITS.agent, bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES }, egressUrl: 'http://127.0.0.1:8081' });
    expect(site?.pages.map((p) => p.path)).to.include.members([...GUIDES.map((g) => g.path), '/docs/api-reference', '/docs/assets/docs.css']);
  });
});
