// The docs site route family (docs/decisions.md "Docs site"): pages handed over in
// HttpAppSettings.docs are served as fixed answers with a Content-Security-Policy that allows
// no other origin; without a site, /docs answers the llms.txt text as it always did.
import { DOCS_CONTENT_SECURITY_POLICY, type DocsSite } from '@svc/adapter-http';
import { expect } from 'chai';
import { expectProblem } from '../../../tools/test-support/http.js';
import { call, startApps, type RunningApps } from './support/harness.js';

const HTML = 'text/html; charset=utf-8';
const SITE: DocsSite = {
  pages: [
    { path: '/docs', title: 'Quick start', contentType: HTML, body: Buffer.from('<!doctype html><h1>Quick start</h1>') },
    { path: '/docs/rate-limits', title: 'Rate limits', contentType: HTML, body: Buffer.from('<!doctype html><h1>Rate limits</h1>') },
    { path: '/docs/assets/docs.css', contentType: 'text/css; charset=utf-8', body: Buffer.from('body { margin: 0; }') },
  ],
};

describe('adapter-http: the docs site under /docs', function () {
  let apps: RunningApps;
  afterEach(async function () {
    await apps.close();
  });

  it('serves every page and asset with its type, the CSP, nosniff, ETag and Cache-Control; 304 on If-None-Match', async function () {
    apps = await startApps({ settings: { docs: SITE } });
    for (const page of SITE.pages) {
      const answer = await call(apps.url, 'GET', page.path);
      expect(answer.status, page.path).to.equal(200);
      expect(answer.text, page.path).to.equal(page.body.toString());
      expect(answer.headers.get('content-type'), page.path).to.equal(page.contentType);
      expect(answer.headers.get('content-security-policy'), page.path).to.equal(DOCS_CONTENT_SECURITY_POLICY);
      expect(answer.headers.get('x-content-type-options'), page.path).to.equal('nosniff');
      expect(answer.headers.get('cache-control'), page.path).to.equal('public, max-age=300');
      const etag = answer.headers.get('etag') ?? '';
      expect(etag, page.path).to.match(/^"[\w-]{27}"$/u);
      const again = await call(apps.url, 'GET', page.path, { headers: { 'If-None-Match': etag } });
      expect(again.status, page.path).to.equal(304);
      expect(again.text, page.path).to.equal('');
    }
  });

  it('answers other spellings of a page with the same bytes, and HEAD without a body', async function () {
    apps = await startApps({ settings: { docs: SITE } });
    const page = await call(apps.url, 'GET', '/docs/rate-limits');
    for (const spelling of ['/docs/rate-limits/', '/Docs/Rate-Limits', '/docs/']) {
      const answer = await call(apps.url, 'GET', spelling);
      expect(answer.status, spelling).to.equal(200);
      if (spelling !== '/docs/') expect(answer.text, spelling).to.equal(page.text);
      else expect(answer.text, spelling).to.include('Quick start');
    }
    const head = await call(apps.url, 'HEAD', '/docs/rate-limits');
    expect(head.status).to.equal(200);
    expect(head.text).to.equal('');
    expect(head.headers.get('etag')).to.equal(page.headers.get('etag'));
  });

  it('answers 404 not_found for a page the site does not have, and 405 for another method', async function () {
    apps = await startApps({ settings: { docs: SITE } });
    expectProblem(await call(apps.url, 'GET', '/docs/nothing-here'), 404, 'not_found');
    expectProblem(await call(apps.url, 'GET', '/docs/assets/missing.js'), 404, 'not_found');
    const post = await call(apps.url, 'POST', '/docs/rate-limits');
    expectProblem(post, 405, 'method_not_allowed');
    expect(post.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
  });

  it('keeps the OpenAPI document at /docs/api-reference/openapi.yaml', async function () {
    apps = await startApps({ settings: { docs: SITE } });
    const document = await call(apps.url, 'GET', '/docs/api-reference/openapi.yaml');
    expect(document.status).to.equal(200);
    expect(document.text).to.equal((await call(apps.url, 'GET', '/openapi.yaml')).text);
  });

  it('lists the titled pages in /llms.txt with absolute URLs, assets left out', async function () {
    apps = await startApps({ settings: { docs: SITE } });
    const text = (await call(apps.url, 'GET', '/llms.txt')).text;
    expect(text).to.include(`## Docs\n\n- [Quick start](${apps.settings.baseUrl}/docs)\n- [Rate limits](${apps.settings.baseUrl}/docs/rate-limits)\n`);
    expect(text).to.not.include('docs.css');
  });

  it('without a site: /docs answers the llms.txt text (no Docs section), /docs/{page} 404', async function () {
    apps = await startApps();
    const docs = await call(apps.url, 'GET', '/docs');
    expect(docs.status).to.equal(200);
    expect(docs.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(docs.text).to.equal((await call(apps.url, 'GET', '/llms.txt')).text);
    expect(docs.text).to.not.include('## Docs');
    expect(docs.headers.get('content-security-policy')).to.equal(null);
    expectProblem(await call(apps.url, 'GET', '/docs/rate-limits'), 404, 'not_found');
  });
});
