// The tests' own connections to a server (tools/test-support/http-connections.ts): fetches
// to a registered origin share kept-alive connections of their own, which
// closeConnections closes (the server sees them closed, so a drain has nothing to wait
// for) without cutting an answer still in flight.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { closeConnections, hasOwnConnections, ownConnections } from '../test-support/http-connections.js';

/** Polls `condition` every 10 ms until it holds; fails past `deadlineMs`, naming `what`. */
async function until(condition: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10)); // polling interval, bounded by the deadline above
  }
}

describe('the tests\' own connections to a server (tools/test-support/http-connections.ts)', function () {
  let server: Server;
  let base: string;
  /** Every connection the server accepted, and whether it has closed. */
  const sockets = new Map<Socket, boolean>();
  /** Answers held by `/hold` until the test releases them. */
  const held: ServerResponse[] = [];

  const open = (): number => [...sockets.values()].filter((closed) => !closed).length;

  before(async function () {
    server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/hold') held.push(res);
      else res.end('ok');
    });
    server.on('connection', (socket: Socket) => {
      sockets.set(socket, false);
      socket.once('close', () => sockets.set(socket, true));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    ownConnections(base);
  });

  after(async function () {
    for (const res of held) res.end();
    await closeConnections(base);
    server.closeAllConnections();
    server.close();
  });

  it('keeps connections alive between fetches, and closeConnections closes them: the server sees them closed', async function () {
    for (let i = 0; i < 3; i += 1) expect(await (await fetch(`${base}/x`)).text()).to.equal('ok');
    // undici may open a second connection before the first one is back in its pool.
    expect(sockets.size, 'connections accepted').to.be.within(1, 2);
    expect(open(), 'kept alive after the answers').to.be.at.least(1);
    expect(hasOwnConnections(`${base}/anything`)).to.equal(true);
    await closeConnections(base);
    expect(hasOwnConnections(base)).to.equal(false);
    await until(() => open() === 0, 'the server sees the kept-alive connections closed');
    // A fetch after the close opens a new connection.
    const before = sockets.size;
    expect(await (await fetch(`${base}/again`)).text()).to.equal('ok');
    expect(sockets.size).to.equal(before + 1);
    expect(open()).to.equal(1);
    await closeConnections(base);
    await until(() => open() === 0, 'the new connection closed');
  });

  it('lets an answer in flight finish, then closes its connection', async function () {
    // An idle kept-alive connection, and a busy one.
    await (await fetch(`${base}/idle`)).text();
    const answer = fetch(`${base}/hold`);
    await until(() => held.length === 1, 'the request reached the server');
    const busy = held[0]?.req.socket as Socket;
    const closed = closeConnections(base);
    await until(() => [...sockets].every(([socket, isClosed]) => isClosed || socket === busy), 'the idle connections closed');
    expect(sockets.get(busy), 'the busy connection is still open').to.equal(false);
    held[0]?.end('released');
    expect(await (await answer).text()).to.equal('released');
    await closed;
    await until(() => open() === 0, 'the busy connection closed after its answer');
  });

  it('leaves fetches to an origin not registered on the global dispatcher', async function () {
    const other = createServer((_req, res) => res.end('other'));
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    const url = `http://127.0.0.1:${(other.address() as { port: number }).port}/`;
    try {
      expect(await (await fetch(url)).text()).to.equal('other');
      expect(hasOwnConnections(url)).to.equal(false);
    } finally {
      other.closeAllConnections();
      other.close();
    }
  });
});
