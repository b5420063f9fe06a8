import { expect } from 'chai';
import { ConfigError, DuplicateIdError, settingsFrom } from '../src/settings.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const endpoint = (extra: Record<string, unknown> = {}) => ({ id: 'wh_1', url: 'https://hooks.example.com/svc', secret: SECRET, ...extra });

describe('settings: webhooks and accounts[i].webhook_endpoints (docs/decisions.md "Webhooks")', function () {
  it('reads endpoints with the default events, secret from the file or its variable, and the webhooks defaults', function () {
    const settings = settingsFrom(
      { accounts: [{ id: 'a', webhook_endpoints: [endpoint(), endpoint({ id: 'wh_2', secret: undefined, secret_env: 'WH_SECRET', events: ['run.queued'] })] }] },
      { WH_SECRET: SECRET },
    );
    expect(settings.accounts[0]!.webhookEndpoints).to.deep.equal([
      { id: 'wh_1', url: 'https://hooks.example.com/svc', secret: SECRET, events: ['run.succeeded', 'run.failed', 'run.cancelled'] },
      { id: 'wh_2', url: 'https://hooks.example.com/svc', secret: SECRET, events: ['run.queued'] },
    ]);
    expect(settings.webhooks).to.deep.equal({ retryScheduleMs: [5000, 300000, 1800000, 7200000, 18000000, 36000000], allowPrivateAddresses: false });
    expect(settingsFrom({ webhooks: { retry_schedule_ms: [10], allow_private_addresses: true } }, {}).webhooks).to.deep.equal({ retryScheduleMs: [10], allowPrivateAddresses: true });
  });

  it('refuses a bad secret, an unset variable, both or neither, a bad URL or event, naming the field and never quoting the secret', function () {
    const bad = (w: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => () => settingsFrom({ accounts: [{ id: 'a', webhook_endpoints: [w] }] }, env);
    expect(bad(endpoint({ secret: 'whsec_c2hvcnQ=' }))).to.throw(ConfigError, /accounts\[0\]\.webhook_endpoints\[0\]\.secret: must be whsec_/u);
    expect(bad(endpoint({ secret: 'not-a-secret-value' }))).to.throw(ConfigError).with.property('message').that.does.not.include('not-a-secret-value');
    expect(bad(endpoint({ secret: undefined, secret_env: 'NOPE' }))).to.throw(ConfigError, /webhook_endpoints\[0\]\.secret_env: the environment variable NOPE is not set/u);
    expect(bad(endpoint({ secret_env: 'WH' }), { WH: SECRET })).to.throw(ConfigError, /needs exactly one of secret and secret_env/u);
    expect(bad(endpoint({ secret: undefined }))).to.throw(ConfigError, /needs exactly one of secret and secret_env/u);
    expect(bad(endpoint({ url: 'ftp://x.example/' }))).to.throw(ConfigError, /webhook_endpoints\[0\]\.url/u);
    expect(bad(endpoint({ events: ['run.started'] }))).to.throw(ConfigError, /webhook_endpoints\[0\]\.events\[0\]/u);
    expect(bad(endpoint({ events: [] }))).to.throw(ConfigError, /webhook_endpoints\[0\]\.events/u);
    expect(() => settingsFrom({ webhooks: { retry_schedule_ms: [] } }, {})).to.throw(ConfigError, /webhooks\.retry_schedule_ms/u);
  });

  it('refuses an endpoint id defined twice, naming both places', function () {
    expect(() => settingsFrom({ accounts: [{ id: 'a', webhook_endpoints: [endpoint()] }, { id: 'b', webhook_endpoints: [endpoint()] }] }, {})).to.throw(
      DuplicateIdError,
      'accounts[1].webhook_endpoints[0].id: webhook endpoint "wh_1" is already defined at accounts[0].webhook_endpoints[0]',
    );
  });
});
