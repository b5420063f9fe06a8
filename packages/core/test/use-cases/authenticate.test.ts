import { expect } from 'chai';
import { sha256Hex, type AuthenticateInput, type OperationId } from '@svc/core';
import { ACCOUNT_B, aStoredCredential } from '@svc/core/testing';
import { aWorld, type World } from '../support/world.js';
import { errorOf, valueOf } from '../support/results.js';

describe('Authenticate', function () {
  const API_KEY = 'svc-live-0123456789abcdef';
  const OTHER_KEY = 'svc-live-fedcba9876543210';
  const WRITE_TOKEN = 'svcpt_write-0123456789';
  const READ_TOKEN = 'svcpt_read-0123456789';
  const BARE_TOKEN = 'svcpt_none-0123456789';
  let w: World;

  beforeEach(function () {
    w = aWorld();
    w.credentials.add(aStoredCredential(API_KEY, { credentialId: 'key_1' }));
    w.credentials.add(aStoredCredential(OTHER_KEY, { credentialId: 'key_2', accountId: ACCOUNT_B }));
    w.credentials.add(aStoredCredential(WRITE_TOKEN, { credentialId: 'tok_w', scopes: ['runs:write'] }));
    w.credentials.add(aStoredCredential(READ_TOKEN, { credentialId: 'tok_r', scopes: ['runs:read'] }));
    w.credentials.add(aStoredCredential(BARE_TOKEN, { credentialId: 'tok_0', scopes: [] }));
  });

  /** Header values as a client sends them: one value, several lines, or none. */
  interface Headers {
    readonly apiKey?: string | readonly string[] | undefined;
    readonly authorization?: string | readonly string[] | undefined;
  }
  const all = (v: string | readonly string[] | undefined): readonly string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

  function authenticate(headers: Headers, operation: OperationId = 'insertRecord') {
    const input: AuthenticateInput = { apiKeys: all(headers.apiKey), authorizations: all(headers.authorization), operation };
    return w.authenticate.execute(input);
  }

  describe('API keys', function () {
    it('accepts an API key in X-API-Key and answers its principal', async function () {
      const principal = valueOf(await authenticate({ apiKey: API_KEY }));
      expect(principal).to.deep.equal({ accountId: 'acct_a', credentialId: 'key_1', kind: 'api_key', scopes: new Set() });
    });

    it('accepts an API key as a bearer token', async function () {
      expect(valueOf(await authenticate({ authorization: `Bearer ${API_KEY}` })).credentialId).to.equal('key_1');
    });

    it('accepts the bearer scheme in any case and surrounding blanks', async function () {
      expect(valueOf(await authenticate({ authorization: `  bearer   ${API_KEY} ` })).credentialId).to.equal('key_1');
    });

    it('accepts the same key sent in both headers', async function () {
      expect(valueOf(await authenticate({ apiKey: API_KEY, authorization: `Bearer ${API_KEY}` })).credentialId).to.equal('key_1');
    });

    it('refuses an access token copied into X-API-Key even when the bearer is the same token', async function () {
      const error = errorOf(await authenticate({ apiKey: WRITE_TOKEN, authorization: `Bearer ${WRITE_TOKEN}` }, 'startRun'));
      expect(error.code).to.equal('unsupported_credential');
    });

    it('answers the account the key belongs to', async function () {
      expect(valueOf(await authenticate({ apiKey: OTHER_KEY })).accountId).to.equal(ACCOUNT_B);
    });

    it('accepts an API key on every operation', async function () {
      for (const operation of ['insertRecord', 'updateRecord', 'startRun', 'getRun'] as const) {
        expect((await authenticate({ apiKey: API_KEY }, operation)).ok, operation).to.equal(true);
      }
    });
  });

  describe('refusals', function () {
    it('answers missing_credential without any credential header', async function () {
      expect(errorOf(await authenticate({})).code).to.equal('missing_credential');
      expect(errorOf(await authenticate({ apiKey: undefined, authorization: undefined })).code).to.equal('missing_credential');
    });

    it('answers missing_credential for blank headers', async function () {
      expect(errorOf(await authenticate({ apiKey: '  ', authorization: '' })).code).to.equal('missing_credential');
    });

    it('answers invalid_credential for an unknown key', async function () {
      expect(errorOf(await authenticate({ apiKey: 'svc-live-unknown' })).code).to.equal('invalid_credential');
    });

    it('answers invalid_credential for an unknown prefix', async function () {
      expect(errorOf(await authenticate({ apiKey: 'sk-live-0123456789' })).code).to.equal('invalid_credential');
      expect(errorOf(await authenticate({ authorization: 'Bearer ghp_0123456789' })).code).to.equal('invalid_credential');
    });

    it('answers invalid_credential for a key stored under another prefix', async function () {
      // the digest is right, but the stored kind (oauth) does not match the presented prefix
      w.credentials.add(aStoredCredential('svc-looks-like-a-key', { kind: 'oauth', scopes: ['runs:write'] }));
      expect(errorOf(await authenticate({ apiKey: 'svc-looks-like-a-key' })).code).to.equal('invalid_credential');
    });

    it('answers invalid_credential for two different credentials, even two valid ones', async function () {
      const error = errorOf(await authenticate({ apiKey: API_KEY, authorization: `Bearer ${OTHER_KEY}` }));
      expect(error.code).to.equal('invalid_credential');
      expect(error.detail).to.not.contain(API_KEY).and.not.contain(OTHER_KEY);
    });

    it('answers invalid_credential for two credentials in repeated headers that disagree', async function () {
      for (const headers of [
        { authorization: [`Bearer ${API_KEY}`, `Bearer ${OTHER_KEY}`] },
        { apiKey: [API_KEY, OTHER_KEY] },
        { apiKey: [API_KEY, API_KEY], authorization: `Bearer ${OTHER_KEY}` },
        { authorization: [`Bearer ${API_KEY}`, `Basic ${API_KEY}`] },
        { authorization: [`Bearer ${WRITE_TOKEN}`, `Bearer ${READ_TOKEN}`] },
      ]) {
        const error = errorOf(await authenticate(headers, 'startRun'));
        expect(error.code, JSON.stringify(headers)).to.equal('invalid_credential');
        expect(error.detail).to.not.contain(API_KEY).and.not.contain(OTHER_KEY);
      }
    });

    it('accepts the same credential sent more than once as that one credential', async function () {
      expect(valueOf(await authenticate({ apiKey: [API_KEY, ` ${API_KEY}`] })).credentialId).to.equal('key_1');
      expect(valueOf(await authenticate({ authorization: [`Bearer ${API_KEY}`, `bearer ${API_KEY}`], apiKey: API_KEY })).credentialId).to.equal('key_1');
      expect(valueOf(await authenticate({ apiKey: [API_KEY, ''] })).credentialId).to.equal('key_1');
    });

    it('refuses an access token in X-API-Key even when each header is repeated', async function () {
      const error = errorOf(await authenticate({ apiKey: [WRITE_TOKEN, WRITE_TOKEN], authorization: [`Bearer ${WRITE_TOKEN}`, `Bearer ${WRITE_TOKEN}`] }, 'startRun'));
      expect(error.code).to.equal('unsupported_credential');
    });

    it('answers invalid_credential for an empty bearer token', async function () {
      expect(errorOf(await authenticate({ authorization: 'Bearer' })).code).to.equal('invalid_credential');
      expect(errorOf(await authenticate({ authorization: 'Bearer   ' })).code).to.equal('invalid_credential');
    });

    it('answers invalid_credential for a credential longer than any minted, without looking it up', async function () {
      const long = `svc-${'x'.repeat(600)}`;
      w.credentials.add(aStoredCredential(long));
      expect(errorOf(await authenticate({ apiKey: long })).code).to.equal('invalid_credential');
    });

    it('answers unsupported_credential for Authorization: Basic', async function () {
      const basic = `Basic ${Buffer.from(`user:${API_KEY}`).toString('base64')}`;
      expect(errorOf(await authenticate({ authorization: basic })).code).to.equal('unsupported_credential');
    });

    it('answers unsupported_credential for a malformed Authorization header', async function () {
      expect(errorOf(await authenticate({ authorization: `=${API_KEY}` })).code).to.equal('unsupported_credential');
    });

    it('answers unsupported_credential for an access token in X-API-Key', async function () {
      expect(errorOf(await authenticate({ apiKey: WRITE_TOKEN }, 'startRun')).code).to.equal('unsupported_credential');
    });

    it('answers expired_credential from the instant of expiry on, and accepts it before', async function () {
      w.credentials.add(aStoredCredential('svc-expiring-key', { credentialId: 'key_exp', expiresAt: new Date(w.clock.now().getTime() + 60_000) }));
      const before = valueOf(await authenticate({ apiKey: 'svc-expiring-key' }));
      expect(before.expiresAt?.toISOString()).to.equal('2026-01-01T00:01:00.000Z');
      w.clock.advanceSeconds(59.999);
      expect((await authenticate({ apiKey: 'svc-expiring-key' })).ok).to.equal(true);
      w.clock.advanceSeconds(0.001);
      expect(errorOf(await authenticate({ apiKey: 'svc-expiring-key' })).code).to.equal('expired_credential');
    });

    it('answers invalid_credential once a key is revoked', async function () {
      w.credentials.revoke('key_1');
      expect(errorOf(await authenticate({ apiKey: API_KEY })).code).to.equal('invalid_credential');
    });

    it('never puts the presented secret into an error', async function () {
      const attempts: Headers[] = [
        { apiKey: 'svc-secret-unknown' },
        { authorization: 'Basic svc-secret-unknown' },
        { apiKey: 'svcpt_secret-unknown' },
        { apiKey: 'svc-secret-unknown', authorization: 'Bearer svc-secret-other' },
      ];
      for (const headers of attempts) {
        expect(JSON.stringify(errorOf(await authenticate(headers)))).to.not.contain('secret');
      }
    });
  });

  describe('without an operation (a door that authorizes each call later: the MCP endpoint)', function () {
    const identify = (headers: Headers) => w.authenticate.execute({ apiKeys: all(headers.apiKey), authorizations: all(headers.authorization) });

    it('identifies a token whatever its scopes, with its scopes, for the call to be authorized later', async function () {
      const bare = valueOf(await identify({ authorization: `Bearer ${BARE_TOKEN}` }));
      expect(bare).to.include({ credentialId: 'tok_0', kind: 'oauth' });
      expect([...valueOf(await identify({ authorization: `Bearer ${READ_TOKEN}` })).scopes]).to.deep.equal(['runs:read']);
      expect(valueOf(await identify({ apiKey: API_KEY })).credentialId).to.equal('key_1');
    });

    it('still refuses what no operation would accept: none, unknown, a token in X-API-Key, two that differ', async function () {
      expect(errorOf(await identify({})).code).to.equal('missing_credential');
      expect(errorOf(await identify({ apiKey: 'svc-unknown-0000000000' })).code).to.equal('invalid_credential');
      expect(errorOf(await identify({ apiKey: WRITE_TOKEN })).code).to.equal('unsupported_credential');
      expect(errorOf(await identify({ apiKey: API_KEY, authorization: `Bearer ${OTHER_KEY}` })).code).to.equal('invalid_credential');
    });
  });

  describe('OAuth access tokens', function () {
    it('accepts a token with runs:write on startRun', async function () {
      const principal = valueOf(await authenticate({ authorization: `Bearer ${WRITE_TOKEN}` }, 'startRun'));
      expect(principal.kind).to.equal('oauth');
      expect(principal.credentialId).to.equal('tok_w');
      expect([...principal.scopes]).to.deep.equal(['runs:write']);
    });

    it('answers insufficient_scope with the required scope for a token without runs:write on startRun', async function () {
      for (const token of [READ_TOKEN, BARE_TOKEN]) {
        const error = errorOf(await authenticate({ authorization: `Bearer ${token}` }, 'startRun'));
        expect(error.code).to.equal('insufficient_scope');
        expect(error.requiredScope).to.equal('runs:write');
      }
    });

    it('accepts a token with runs:read on getRun, and refuses one with only runs:write', async function () {
      expect(valueOf(await authenticate({ authorization: `Bearer ${READ_TOKEN}` }, 'getRun')).credentialId).to.equal('tok_r');
      const error = errorOf(await authenticate({ authorization: `Bearer ${WRITE_TOKEN}` }, 'getRun'));
      expect(error.code).to.equal('insufficient_scope');
      expect(error.requiredScope).to.equal('runs:read');
    });

    it('answers unsupported_credential on insertRecord and updateRecord, whatever the scopes', async function () {
      w.credentials.add(aStoredCredential('svcpt_all-scopes', { scopes: ['runs:write', 'runs:read'] }));
      for (const operation of ['insertRecord', 'updateRecord'] as const) {
        expect(errorOf(await authenticate({ authorization: 'Bearer svcpt_all-scopes' }, operation)).code, operation).to.equal(
          'unsupported_credential',
        );
      }
    });

    it('answers expired_credential for an expired token', async function () {
      w.credentials.add(aStoredCredential('svcpt_expired', { scopes: ['runs:write'], expiresAt: w.clock.now() }));
      expect(errorOf(await authenticate({ authorization: 'Bearer svcpt_expired' }, 'startRun')).code).to.equal('expired_credential');
    });
  });

  it('compares digests only: sha256Hex is the lower-case hex SHA-256 of the whole secret', function () {
    expect(sha256Hex('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
