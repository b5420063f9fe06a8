import { expect } from 'chai';
import { InMemoryWebhookEndpointCatalog, type WebhookEndpoint } from '@svc/core';

function endpoint(endpointId: string, accountId: string): WebhookEndpoint {
  return { endpointId, accountId, url: `https://hooks.example.test/${endpointId}`, secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', events: ['run.succeeded'] };
}

const ids = (list: readonly WebhookEndpoint[]): string[] => list.map((e) => e.endpointId);

// listByAccount keeps each account's list until the catalog changes: a change must show at the next read.
describe('InMemoryWebhookEndpointCatalog.listByAccount', function () {
  it("answers an account's endpoints sorted by id, none of another account's, and the same frozen list while nothing changes", async function () {
    const catalog = new InMemoryWebhookEndpointCatalog([endpoint('wh_b', 'acct_a'), endpoint('wh_x', 'acct_b'), endpoint('wh_a', 'acct_a')]);
    const first = await catalog.listByAccount('acct_a');
    expect(ids(first)).to.deep.equal(['wh_a', 'wh_b']);
    expect(Object.isFrozen(first)).to.equal(true);
    expect(await catalog.listByAccount('acct_a')).to.equal(first);
    expect(ids(await catalog.listByAccount('acct_none'))).to.deep.equal([]);
  });

  it('shows an endpoint added, replaced or removed after a read at the next read', async function () {
    const catalog = new InMemoryWebhookEndpointCatalog([endpoint('wh_b', 'acct_a')]);
    expect(ids(await catalog.listByAccount('acct_a'))).to.deep.equal(['wh_b']);
    expect(ids(await catalog.listByAccount('acct_c'))).to.deep.equal([]);
    catalog.add(endpoint('wh_a', 'acct_a'));
    catalog.add(endpoint('wh_c', 'acct_c'));
    expect(ids(await catalog.listByAccount('acct_a'))).to.deep.equal(['wh_a', 'wh_b']);
    expect(ids(await catalog.listByAccount('acct_c'))).to.deep.equal(['wh_c']);
    // Replaced by another account's endpoint of the same id: gone from the first account.
    catalog.add(endpoint('wh_b', 'acct_c'));
    expect(ids(await catalog.listByAccount('acct_a'))).to.deep.equal(['wh_a']);
    expect(ids(await catalog.listByAccount('acct_c'))).to.deep.equal(['wh_b', 'wh_c']);
    catalog.remove('wh_a');
    expect(ids(await catalog.listByAccount('acct_a'))).to.deep.equal([]);
  });
});
