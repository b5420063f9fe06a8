import { expect } from 'chai';
import { createCore, type ApiIndex, type CoreOptions } from '@svc/core';

/** The `DescribeApi` of a core with `options`. */
function describeApiOf(options: CoreOptions) {
  return createCore({}, options).describeApi;
}

describe('DescribeApi', function () {
  const BASE = 'https://api.example.com';
  const EGRESS = 'https://egress.example.com';
  let index: ApiIndex;
  beforeEach(function () {
    index = describeApiOf({ baseUrl: `${BASE}/`, egressUrl: `${EGRESS}//` }).execute();
  });

  /** True for an absolute http(s) URL; path templates like `{agent_id}` allowed. */
  function isAbsoluteUrl(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    try {
      return ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }

  it('has every field of the API index object table, and no other', function () {
    expect(index).to.have.all.keys(
      'name',
      'version',
      'base_url',
      'documentation_url',
      'openapi_url',
      'developers_url',
      'authentication',
      'onboarding',
      'rate_limits',
      'versioning',
      'resources',
      'description',
      'llms_txt_url',
      'clients',
      'webhooks_documentation_url',
    );
  });

  it('states name, version, base URL and the documentation addresses', function () {
    expect(index.name).to.be.a('string').and.have.lengthOf.above(0);
    expect(index.description).to.be.a('string').and.have.lengthOf.above(0);
    expect(index.version).to.equal('v1');
    expect(index.base_url).to.equal(BASE);
    expect(index.openapi_url).to.equal(`${BASE}/openapi.yaml`);
    for (const key of ['documentation_url', 'developers_url', 'llms_txt_url', 'webhooks_documentation_url'] as const) {
      expect(isAbsoluteUrl(index[key]), key).to.equal(true);
    }
    expect(index.clients).to.have.all.keys('cli', 'cli_documentation_url');
    expect(index.clients.cli).to.match(/^svc \(from a clone of the repository: pnpm svc --help; /u);
    expect(isAbsoluteUrl(index.clients.cli_documentation_url)).to.equal(true);
  });

  it('lists one authentication method, api_key, with every field', function () {
    expect(index.authentication).to.have.all.keys('methods');
    expect(index.authentication.methods).to.have.length(1);
    const [method] = index.authentication.methods;
    expect(method).to.have.all.keys(
      'type',
      'documentation_url',
      'headers',
      'self_serve',
      'credential_creation',
      'account_access',
      'flow',
      'metadata_url',
      'scopes_supported',
    );
    expect(method?.type).to.equal('api_key');
    expect(method?.credential_creation).to.equal('available_after_account_access');
    expect(method?.account_access).to.equal('invite_required');
    expect(method?.headers).to.deep.equal(['X-API-Key', 'Authorization']);
    expect(method?.self_serve).to.be.a('boolean');
    expect(method?.flow).to.be.a('string').and.have.lengthOf.above(0);
    expect(isAbsoluteUrl(method?.documentation_url)).to.equal(true);
    expect(isAbsoluteUrl(method?.metadata_url)).to.equal(true);
    expect(method?.scopes_supported).to.include('runs:write').and.include('runs:read');
  });

  it('states onboarding: invitation required, trial and sandbox flags', function () {
    expect(index.onboarding).to.have.all.keys('account_access', 'access_request_url', 'trial', 'public_sandbox_available');
    expect(index.onboarding.account_access).to.equal('invite_required');
    expect(isAbsoluteUrl(index.onboarding.access_request_url)).to.equal(true);
    expect(index.onboarding.trial).to.have.all.keys('available', 'duration_days', 'invite_required');
    expect(index.onboarding.trial.available).to.be.a('boolean');
    expect(Number.isInteger(index.onboarding.trial.duration_days)).to.equal(true);
    expect(index.onboarding.trial.invite_required).to.be.a('boolean');
    expect(index.onboarding.public_sandbox_available).to.be.a('boolean');
  });

  it('states the credential rate limit and the seven response headers', function () {
    expect(index.rate_limits).to.have.all.keys('requests', 'window_seconds', 'response_headers', 'scope', 'documentation_url');
    expect(index.rate_limits.requests).to.equal(600);
    expect(index.rate_limits.window_seconds).to.equal(60);
    expect(index.rate_limits.scope).to.equal('credential');
    expect(index.rate_limits.response_headers).to.have.members([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ]);
    expect(isAbsoluteUrl(index.rate_limits.documentation_url)).to.equal(true);
  });

  it('takes the credential rate limit from the settings', function () {
    const custom = describeApiOf({ baseUrl: BASE, egressUrl: EGRESS, rateLimits: { credential: { limit: 120, windowSeconds: 30 }, agent: { limit: 30, windowSeconds: 60 } } }).execute();
    expect(custom.rate_limits).to.include({ requests: 120, window_seconds: 30 });
  });

  it('states versioning: url_path, v1, the deprecation headers and 180 days of sunset notice', function () {
    expect(index.versioning).to.have.all.keys(
      'strategy',
      'current_version',
      'deprecation_headers',
      'minimum_sunset_notice_days',
      'documentation_url',
    );
    expect(index.versioning.strategy).to.equal('url_path');
    expect(index.versioning.current_version).to.equal('v1');
    expect(index.versioning.deprecation_headers).to.deep.equal(['Deprecation', 'Sunset', 'Link']);
    expect(index.versioning.minimum_sunset_notice_days).to.equal(180);
    expect(isAbsoluteUrl(index.versioning.documentation_url)).to.equal(true);
  });

  it('maps resources to absolute URLs with path templates', function () {
    expect(index.resources).to.deep.equal({
      index: `${BASE}/api/v1`,
      openapi: `${BASE}/openapi.yaml`,
      connection_records: `${BASE}/api/v1/connections/{connection_id}/records`,
      egress_connection_records: `${EGRESS}/v1/connections/{connection_id}/records`,
      agent_runs: `${BASE}/api/v1/agents/{agent_id}/run`,
      runs: `${BASE}/api/v1/runs/{run_id}`,
      agents: `${BASE}/api/v1/agents`,
      agent: `${BASE}/api/v1/agents/{agent_id}`,
      connections: `${BASE}/api/v1/connections`,
      connection: `${BASE}/api/v1/connections/{connection_id}`,
      run_list: `${BASE}/api/v1/runs`,
      agent_mcp: `${BASE}/api/v1/agents/{agent_id}/mcp`,
    });
    for (const [name, url] of Object.entries(index.resources)) expect(isAbsoluteUrl(url), name).to.equal(true);
  });

  it('answers the same deeply frozen object every time', function () {
    const describeApi = describeApiOf({ baseUrl: BASE, egressUrl: EGRESS });
    const first = describeApi.execute();
    expect(describeApi.execute()).to.equal(first);
    for (const value of [
      first,
      first.authentication,
      first.authentication.methods,
      first.authentication.methods[0],
      first.authentication.methods[0]?.scopes_supported,
      first.onboarding.trial,
      first.rate_limits.response_headers,
      first.versioning,
      first.resources,
      first.clients,
    ]) {
      expect(Object.isFrozen(value)).to.equal(true);
    }
    expect(Reflect.set(first, 'name', 'changed')).to.equal(false);
    expect(Reflect.set(first.resources, 'extra', 'x')).to.equal(false);
    expect(first.name).to.not.equal('changed');
  });

  it('lets settings override any default', function () {
    const custom = describeApiOf({ baseUrl: BASE, egressUrl: EGRESS, index: { name: 'Acme API', trial: { available: true, durationDays: 14, inviteRequired: false } } }).execute();
    expect(custom.name).to.equal('Acme API');
    expect(custom.onboarding.trial).to.deep.equal({ available: true, duration_days: 14, invite_required: false });
  });
});
