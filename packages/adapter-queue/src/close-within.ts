import type { Redis } from 'ioredis';
import { QUIT_TIMEOUT_MS } from './stop-bounds.js';
import { within } from './within.js';

export { QUIT_TIMEOUT_MS } from './stop-bounds.js';

/**
 * Quits `client`, and drops its connection when Redis has not answered within `ms`
 * (default {@link QUIT_TIMEOUT_MS}: paused, or lost without the socket noticing), also
 * when its own command timeout ended the QUIT. A client that is not connected, or whose
 * QUIT fails at once because the connection is gone (Redis lost), has nothing left to
 * close cleanly: it is only disconnected.
 * @returns false when a connected client's QUIT was not answered (it was dropped).
 */
export async function quitWithin(client: Redis, ms = QUIT_TIMEOUT_MS): Promise<boolean> {
  if (client.status === 'end') return true;
  if (client.status !== 'ready') {
    client.disconnect();
    return true;
  }
  const result = await within(client.quit(), ms);
  if (result.outcome === 'done') return true;
  client.disconnect();
  // ioredis's message for a command that met its `commandTimeout` (a paused Redis).
  return result.outcome === 'failed' && !(result.error instanceof Error && result.error.message === 'Command timed out');
}

/**
 * Quits every client at the same time under one deadline of {@link QUIT_TIMEOUT_MS}, so
 * that a lost or paused Redis costs one QUIT bound however many clients there are.
 * @returns the roles of the clients whose QUIT was not answered (their connection was dropped).
 */
export async function quitAllWithin(clients: ReadonlyArray<{ readonly role: string; readonly client: Redis }>): Promise<string[]> {
  const answered = await Promise.all(clients.map(({ client }) => quitWithin(client)));
  return clients.filter((_, i) => !answered[i]).map(({ role }) => role);
}
