import { lookup } from 'node:dns';
import { expect } from 'chai';
import { addressRange, guardedLookup, isAllowedAddress, WebhookAddressRefusedError } from '../src/index.js';

describe('adapter-webhooks address guard (SSRF rule)', function () {
  const refused = [
    ['127.0.0.1', 'loopback'],
    ['127.200.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['169.254.169.254', 'linkLocal'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['[::ffff:169.254.169.254]', 'linkLocal'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::a00:1', 'ipv4Compatible'],
  ] as const;

  it('refuses loopback, private, link-local, unique-local, CGNAT, 0/8, multicast and IPv4-mapped forms of them', function () {
    for (const [address, range] of refused) {
      expect(addressRange(address), address).to.equal(range);
      expect(isAllowedAddress(address, false), address).to.equal(false);
      expect(isAllowedAddress(address, true), `${address} with allow_private_addresses`).to.equal(true);
    }
  });

  it('lets public unicast addresses through, and refuses what is no address even when private ones are allowed', function () {
    for (const address of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '::ffff:8.8.8.8']) expect(isAllowedAddress(address, false), address).to.equal(true);
    expect(isAllowedAddress('not-an-address', true)).to.equal(false);
  });

  it('a name that resolves only to loopback (localhost) is refused by the lookup the socket connects with; allowed with the flag', async function () {
    const resolve = (allow: boolean, all: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((done) => guardedLookup(allow)('localhost', { all }, (error, address) => done({ error, address })));
    const refusedAnswer = await resolve(false, true);
    expect(refusedAnswer.error).to.be.instanceOf(WebhookAddressRefusedError);
    expect(refusedAnswer.error?.message).to.not.include('localhost');
    const expected = await new Promise<string>((done) => lookup('localhost', (_e, address) => done(address)));
    const allowed = await resolve(true, false);
    expect(allowed.error).to.equal(null);
    expect(allowed.address).to.equal(expected);
    const all = await resolve(true, true);
    expect(all.address).to.be.an('array').with.length.greaterThan(0);
  });
});
