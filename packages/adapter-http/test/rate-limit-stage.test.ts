import { DependencyUnavailableError, domainError, err } from '@svc/core';
import { expect } from 'chai';
import { expectProblem, expectRateLimited, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import { apiKey, call, recordsPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

const LIMITS = { credential: { limit: 2, windowSeconds: 60 }, agent: { limit: 2, windowSeconds: 60 } } as const;

describe('adapter-http: the rate-limit stage charges every authenticated request once', function () {
  let apps: RunningApps;
  afterEach(async function () {
    await apps.close();
  });

  it('an unreadable body is charged once, by the stage: the window counts it, and a full window answers 429', async function () {
    apps = await startApps({ limits: LIMITS });
    const headers = { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' };
    const first = await call(apps.url, 'POST', recordsPath(), { headers, raw: '{' });
    expectProblem(first, 400, 'invalid_json');
    expect(first.headers.get('ratelimit-remaining')).to.equal('1');
    const second = await call(apps.url, 'POST', recordsPath(), { headers: { ...headers, 'content-type': 'text/plain' }, raw: '{}' });
    expectProblem(second, 415, 'unsupported_media_type');
    expect(second.headers.get('ratelimit-remaining')).to.equal('0');
    expectRateLimited(await call(apps.url, 'POST', recordsPath(), { headers, raw: '{' }), 2, 60);
  });

  it('a use case that answers without charging is charged by the stage, with the headers on its answer', async function () {
    apps = await startApps({
      limits: LIMITS,
      override: () => ({ getRun: { execute: () => Promise.resolve(err(domainError('not_found', 'No such run.'))) } }),
    });
    const headers = apiKey(SECRETS.keyA);
    const first = await call(apps.url, 'GET', '/api/v1/runs/r1', { headers });
    expectProblem(first, 404, 'not_found');
    expectRateLimitHeaders(first, true);
    expect(first.headers.get('ratelimit-remaining')).to.equal('1');
    expect((await call(apps.url, 'GET', '/api/v1/runs/r1', { headers })).headers.get('ratelimit-remaining')).to.equal('0');
    expectRateLimited(await call(apps.url, 'GET', '/api/v1/runs/r1', { headers }), 2, 60);
  });

  it('a 503 or a 500 thrown before the charge is charged too, and answers with the headers', async function () {
    apps = await startApps({
      limits: LIMITS,
      override: () => ({
        getRun: { execute: () => Promise.reject(new DependencyUnavailableError('run_store')) },
        startRun: { execute: () => Promise.reject(new Error('a bug')) },
      }),
    });
    const headers = apiKey(SECRETS.keyA);
    const lost = await call(apps.url, 'GET', '/api/v1/runs/r1', { headers });
    expectProblem(lost, 503, 'service_unavailable');
    expectRateLimitHeaders(lost, true);
    expect(lost.headers.get('ratelimit-remaining')).to.equal('1');
    const bug = await call(apps.url, 'POST', '/api/v1/agents/agent_x/run', { headers: { ...headers, 'content-type': 'application/json' }, json: { message: 'hi' } });
    expectProblem(bug, 500, 'internal_error');
    expect(bug.headers.get('ratelimit-remaining')).to.equal('0');
    // Over the limit a failure stays the failure it is: nothing was done either way.
    const third = await call(apps.url, 'GET', '/api/v1/runs/r1', { headers });
    expectProblem(third, 503, 'service_unavailable');
    expect(third.headers.get('ratelimit-remaining')).to.equal('0');
  });
});
