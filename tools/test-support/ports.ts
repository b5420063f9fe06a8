// Loopback ports for tests that start servers of their own.
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, read, released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP port was bound');
  return address.port;
}
