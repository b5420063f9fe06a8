/**
 * Same-work peer of the run start in memory: Koa, two rate-limiter-flexible
 * `RateLimiterMemory` windows (credential, agent) charged all or none, the run pushed to
 * an array. `node koa-run-memory.js CONFIG_JSON` (a `PeerConfig`); stops on SIGTERM.
 */
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { runStartApp, type QueuedRun } from './koa-run-start.js';
import { listen, readPeerConfig, serialised } from './shared.js';

const config = readPeerConfig();
const { credential, agent } = config.limits;
const credentialLimiter = new RateLimiterMemory({ points: credential.requests, duration: credential.window_seconds, keyPrefix: 'rl:credential' });
const agentLimiter = new RateLimiterMemory({ points: agent.requests, duration: agent.window_seconds, keyPrefix: 'rl:agent' });
const charge = serialised();
// Kept, like the project's in-memory queue keeps every accepted run (no worker in the bench).
const queue: QueuedRun[] = [];

const app = runStartApp(config, {
  charge: (caller, agentId) =>
    charge([
      { limiter: credentialLimiter, key: caller.keyId, limit: credential.requests },
      ...(agentId !== undefined ? [{ limiter: agentLimiter, key: agentId, limit: agent.requests }] : []),
    ]),
  enqueue: (run) => {
    queue.push(run);
  },
});
listen(app.callback(), config.port);
