import { expect } from 'chai';
import { redisDurabilityFindings } from '@svc/adapter-queue';
import { startRedisServer, type RedisServer } from '../../../tools/test-support/redis-server.js';

describe('redisDurabilityFindings (against redis-server children of its own)', function () {
  this.timeout(20_000);
  const children: RedisServer[] = [];

  afterEach(async function () {
    await Promise.all(children.splice(0).map((c) => c.stop()));
  });

  async function start(args: readonly string[]): Promise<RedisServer> {
    const child = await startRedisServer({ args });
    children.push(child);
    return child;
  }

  it('finds nothing on a Redis with AOF, fsync every second and noeviction', async function () {
    const redis = await start(['--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction']);
    expect(await redisDurabilityFindings(redis.url)).to.deep.equal([]);
  });

  it('names each unsafe setting with its value and what it risks', async function () {
    const redis = await start(['--appendonly', 'no', '--appendfsync', 'no', '--maxmemory-policy', 'allkeys-lru']);
    const findings = await redisDurabilityFindings(redis.url);
    expect(findings.map((f) => [f.setting, f.value, f.required])).to.deep.equal([
      ['appendonly', 'no', 'yes'],
      ['appendfsync', 'no', 'everysec or always'],
      ['maxmemory-policy', 'allkeys-lru', 'noeviction'],
    ]);
    for (const f of findings) expect(f.risk).to.match(/lose|evict/u);
  });

  it('reports CONFIG unreadable where the command is renamed away, as managed services do', async function () {
    const redis = await start(['--appendonly', 'yes', '--rename-command', 'CONFIG', '""']);
    const findings = await redisDurabilityFindings(redis.url);
    expect(findings.map((f) => [f.setting, f.value, f.required])).to.deep.equal([['CONFIG', 'unreadable', 'CONFIG GET allowed']]);
    expect(findings[0]?.risk).to.match(/cannot be verified/u);
  });

  for (const fault of ['stopped', 'paused'] as const) {
    it(`answers unreadable within its 2 s bound when Redis is ${fault}`, async function () {
      const redis = await start([]);
      if (fault === 'stopped') await redis.kill();
      else redis.pause();
      const started = Date.now();
      const findings = await redisDurabilityFindings(redis.url);
      const tookMs = Date.now() - started;
      console.log(`      durability check against a ${fault} Redis answered in ${tookMs} ms`);
      expect(findings.map((f) => f.setting)).to.deep.equal(['CONFIG']);
      expect(tookMs).to.be.below(3000);
    });
  }
});
