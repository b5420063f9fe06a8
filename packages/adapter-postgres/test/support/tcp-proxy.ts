// A TCP proxy on loopback between a catalog and the real PostgreSQL, that a test switches
// into the faults a lost catalog database shows: silent (sockets stay open, nothing is
// forwarded: a paused or blackholed server) or down (every connection reset, new ones too).
import { createServer, connect, type Server, type Socket } from 'node:net';

/** How the proxy treats traffic. */
export type ProxyMode = 'forward' | 'silent' | 'down';

/** A loopback TCP proxy to `target`. */
export class TcpProxy {
  private modeNow: ProxyMode = 'forward';
  private readonly pairs = new Set<{ client: Socket; upstream: Socket | undefined }>();

  private constructor(
    private readonly server: Server,
    private readonly target: { readonly host: string; readonly port: number },
    /** The port the proxy listens on (127.0.0.1). */
    readonly port: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** Starts a proxy on a free loopback port. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return new TcpProxy(server, target, address.port);
  }

  /** The current mode. */
  get mode(): ProxyMode {
    return this.modeNow;
  }

  private accept(client: Socket): void {
    client.on('error', () => undefined);
    if (this.modeNow === 'down') {
      client.resetAndDestroy();
      return;
    }
    const pair: { client: Socket; upstream: Socket | undefined } = { client, upstream: undefined };
    this.pairs.add(pair);
    client.on('close', () => {
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    });
    client.pause();
    if (this.modeNow === 'forward') this.link(pair);
  }

  private link(pair: { client: Socket; upstream: Socket | undefined }): void {
    const upstream = connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('error', () => pair.client.destroy());
    upstream.on('close', () => pair.client.destroy());
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
    pair.client.resume();
  }

  /**
   * Silent: nothing more is read from either side (bytes stay in the kernel's buffers) and
   * new connections are accepted but never answered, like a paused (SIGSTOP) server.
   */
  silence(): void {
    this.modeNow = 'silent';
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream?.pause();
    }
  }

  /** Down: every connection is reset, and so is each new one, like a server that went away. */
  down(): void {
    this.modeNow = 'down';
    for (const { client, upstream } of this.pairs) {
      client.resetAndDestroy();
      upstream?.destroy();
    }
    this.pairs.clear();
  }

  /** Forwards again: held connections are linked (or resumed) as they are. */
  restore(): void {
    this.modeNow = 'forward';
    for (const pair of this.pairs) {
      if (pair.upstream === undefined) this.link(pair);
      else {
        pair.client.resume();
        pair.upstream.resume();
      }
    }
  }

  /** Closes every connection and the listener. */
  async close(): Promise<void> {
    this.down();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A server that accepts connections and never sends a byte (a blackholed database). */
export async function startBlackhole(): Promise<{ readonly port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
