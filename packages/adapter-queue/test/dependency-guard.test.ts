import { DependencyUnavailableError } from '@svc/core';
import { expect } from 'chai';
import { guardRedis, isRedisUnavailable } from '@svc/adapter-queue';

const replyError = (message: string): Error => Object.assign(new Error(message), { name: 'ReplyError' });

describe('guardRedis and isRedisUnavailable', function () {
  it('tells a lost or busy Redis (503) from a bug (500)', function () {
    for (const unavailable of [
      new Error('Connection is closed.'),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      new Error('Command timed out'),
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('x'), { name: 'MaxRetriesPerRequestError' }),
      replyError('LOADING Redis is loading the dataset in memory'),
      replyError('MISCONF Errors writing to the AOF file'),
      replyError('OOM command not allowed when used memory > maxmemory'),
    ]) {
      expect(isRedisUnavailable(unavailable), unavailable.message).to.equal(true);
    }
    for (const bug of [replyError('ERR wrong number of arguments'), replyError('WRONGTYPE Operation against a key'), new Error('run record r1 is not a valid layout-1 record'), new TypeError('x')]) {
      expect(isRedisUnavailable(bug), bug.message).to.equal(false);
    }
  });

  it('rejects with DependencyUnavailableError when nothing answers within the bound, and rethrows a bug as it is', async function () {
    const silent = await guardRedis('redis', 30, () => new Promise<never>(() => undefined)).catch((e: unknown) => e);
    expect(silent).to.be.instanceOf(DependencyUnavailableError).and.to.include({ dependency: 'redis' });
    const lost = await guardRedis('run_queue', undefined, () => Promise.reject(new Error('Connection is closed.'))).catch((e: unknown) => e);
    expect(lost).to.be.instanceOf(DependencyUnavailableError).and.to.include({ dependency: 'run_queue' });
    const bug = new TypeError('unexpected reply');
    expect(await guardRedis('redis', 1000, () => Promise.reject(bug)).catch((e: unknown) => e)).to.equal(bug);
  });
});
