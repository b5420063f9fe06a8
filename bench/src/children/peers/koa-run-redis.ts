/**
 * Same-work peer of the run start on Redis: the Koa run start of `koa-run-start.ts` with
 * two rate-limiter-flexible `RateLimiterRedis` windows (credential, agent), checked with
 * `get` then charged with `penalty`, all or none per request (not atomic between
 * concurrent requests, unlike the project's one Lua script), and BullMQ `Queue.add` with
 * the run as the job's data (the project also writes a run record). Every key starts
 * with the configured prefix (the bench deletes them). `node koa-run-redis.js
 * CONFIG_JSON`; stops on SIGTERM.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { runStartApp, type QueuedRun } from './koa-run-start.js';
import { checkThenCharge, listen, readPeerConfig } from './shared.js';

const config = readPeerConfig();
if (config.redis === undefined) throw new Error('the Redis peer needs redis in its configuration');
const { url, prefix } = config.redis;
const { credential, agent } = config.limits;
// rate-limiter-flexible's advice for ioredis: no offline queue, fail at once while away.
const limiterClient = new Redis(url, { enableOfflineQueue: false });
// BullMQ wants its own connection with maxRetriesPerRequest null.
const queueClient = new Redis(url, { maxRetriesPerRequest: null });
await Promise.all([limiterClient, queueClient].map((c) => (c.status === 'ready' ? undefined : new Promise((r) => c.once('ready', r)))));
const credentialLimiter = new RateLimiterRedis({ storeClient: limiterClient, points: credential.requests, duration: credential.window_seconds, keyPrefix: `${prefix}:rl:credential` });
const agentLimiter = new RateLimiterRedis({ storeClient: limiterClient, points: agent.requests, duration: agent.window_seconds, keyPrefix: `${prefix}:rl:agent` });
const queue = new Queue<QueuedRun>('runs', { connection: queueClient, prefix });

const app = runStartApp(config, {
  charge: (caller, agentId) =>
    checkThenCharge([
      { limiter: credentialLimiter, key: caller.keyId, limit: credential.requests },
      ...(agentId !== undefined ? [{ limiter: agentLimiter, key: agentId, limit: agent.requests }] : []),
    ]),
  enqueue: async (run) => {
    await queue.add('run', run, { jobId: run.runId, attempts: 3, removeOnComplete: 1000, removeOnFail: 1000 });
  },
});
listen(app.callback(), config.port, async () => {
  await queue.close();
  await Promise.all([limiterClient.quit(), queueClient.quit()]);
});
