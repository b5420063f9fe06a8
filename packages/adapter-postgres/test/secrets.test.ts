import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { CatalogError, newSecret } from '@svc/adapter-postgres';
import { PasswordCipher } from '../src/secrets.js';

describe('secrets', function () {
  it('newSecret: the prefix and 43 base64url characters (32 random bytes), never twice the same', function () {
    const a = newSecret('svc-');
    expect(a).to.match(/^svc-[A-Za-z0-9_-]{43}$/u);
    expect(Buffer.from(a.slice(4), 'base64url')).to.have.length(32);
    expect(newSecret('svcpt_')).to.match(/^svcpt_[A-Za-z0-9_-]{43}$/u);
    expect(newSecret('svc-')).to.not.equal(a);
  });

  describe('PasswordCipher (AES-256-GCM, the connection id authenticated)', function () {
    const id = '6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f';
    const key = randomBytes(32);

    it('round-trips, with a fresh IV each time (two ciphertexts of one password differ)', function () {
      const cipher = new PasswordCipher({ key });
      const a = cipher.encrypt('p@ss wörd', id);
      const b = cipher.encrypt('p@ss wörd', id);
      expect(a).to.match(/^v1:/u);
      expect(a).to.not.equal(b);
      expect(cipher.decrypt(a, id)).to.equal('p@ss wörd');
      expect(new PasswordCipher({ key: key.toString('base64') }).decrypt(b, id.toUpperCase())).to.equal('p@ss wörd');
    });

    it('refuses another key, another connection id, a changed byte and an unknown format, without the password', function () {
      const cipher = new PasswordCipher({ key });
      const stored = cipher.encrypt('hunter2', id);
      const bytes = Buffer.from(stored.slice(3), 'base64');
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
      const attempts = [
        () => new PasswordCipher({ key: randomBytes(32) }).decrypt(stored, id),
        () => cipher.decrypt(stored, '00000000-0000-4000-8000-000000000000'),
        () => cipher.decrypt(`v1:${bytes.toString('base64')}`, id),
        () => cipher.decrypt('v2:abc', id),
        () => cipher.decrypt('hunter2', id),
      ];
      for (const attempt of attempts) {
        expect(attempt).to.throw(CatalogError).with.property('code', 'secret_unavailable');
        try {
          attempt();
        } catch (error) {
          expect((error as Error).message).to.not.include('hunter2');
        }
      }
    });

    it('reads the key from its environment variable when first needed, and names the variable when it is missing or malformed', function () {
      const env = `SVC_TEST_KEY_${randomBytes(4).toString('hex')}`;
      const cipher = new PasswordCipher({ env });
      expect(() => cipher.check()).to.throw(CatalogError, `environment variable ${env} is not set`).with.property('code', 'key');
      process.env[env] = randomBytes(16).toString('base64');
      try {
        expect(() => new PasswordCipher({ env }).check()).to.throw(CatalogError, `environment variable ${env} must hold exactly 32 bytes in base64 (it holds 16)`);
        process.env[env] = key.toString('base64');
        const fromEnv = new PasswordCipher({ env });
        expect(new PasswordCipher({ key }).decrypt(fromEnv.encrypt('x', id), id)).to.equal('x');
      } finally {
        delete process.env[env];
      }
    });
  });
});
